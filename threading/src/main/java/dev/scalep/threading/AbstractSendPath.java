package dev.scalep.threading;

import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.counters.Counters;

import java.util.Locale;

/**
 * Credits, id rewriting ({@link SendCredits}) and postlist filling shared by the send paths. On an
 * in-order device the provider sees each request's send-queue sequence number as its {@code wr_id},
 * so a completion tells exactly which requests it retires, including unsignaled ones of other
 * threads. Out of order (SRD) every request must be signaled and retires only itself; ids pass
 * through unchanged.
 */
abstract sealed class AbstractSendPath implements SendPath
        permits ExclusivePoster, LockedPoster, CombiningPoster, ChainedPoster {
    protected final QueuePair qp;
    protected final int depth;
    protected final int maxBatch;
    /** Owner indexes whose retirements and refusals are counted ({@link WrIds#owner}). */
    protected final int owners;
    protected final SendCredits credits;
    /** The native work requests the path writes requests into and posts from. */
    protected final SendWorkRequests list;
    private final int maxSge;
    private final PostFailureHandler onFailure;
    private final boolean connectionless;
    private final long[] peerAh;
    private final int[] peerQpn;
    private final int[] peerQkey;
    /** Counters of this QP's send path ({@link Counters}); incremented only when {@link Counters#ENABLED}. */
    protected final PathCounters counters;

    /** A path whose native list holds {@code maxBatch} (capped at the queue depth) records. */
    AbstractSendPath(QueuePair qp, int maxBatch, int owners, int peers, PostFailureHandler onFailure) {
        this(qp, maxBatch, 0, owners, peers, onFailure);
    }

    /** As above with a list of {@code listCapacity} records when that is positive (a pool of WRs). */
    AbstractSendPath(QueuePair qp, int maxBatch, int listCapacity, int owners, int peers, PostFailureHandler onFailure) {
        this.qp = qp;
        this.depth = qp.attributes().maxSendWr();
        if (maxBatch < 1) {
            throw new IllegalArgumentException("maxBatch must be >= 1: " + maxBatch);
        }
        this.maxBatch = Math.min(maxBatch, depth);
        if (owners < 1 || owners > WrIds.MAX_OWNERS) {
            throw new IllegalArgumentException("owners must be in 1.." + WrIds.MAX_OWNERS + ": " + owners);
        }
        this.owners = owners;
        this.credits = new SendCredits(depth, owners, qp.pd().context().capabilities().inOrder());
        this.maxSge = Math.max(1, Math.min(2, qp.attributes().maxSendSge()));
        this.list = new SendWorkRequests(listCapacity > 0 ? listCapacity : this.maxBatch, maxSge);
        this.onFailure = onFailure == null ? (id, errno) -> { } : onFailure;
        this.connectionless = qp.type().connectionless();
        this.peerAh = new long[Math.max(peers, 1)];
        this.peerQpn = new int[Math.max(peers, 1)];
        this.peerQkey = new int[Math.max(peers, 1)];
        this.counters = new PathCounters("qp" + qp.qpNum() + "." + kind(), qp.counters());
    }

    /** The path's kind in counter labels: exclusive, locked, combining, chained. */
    private String kind() {
        String n = getClass().getSimpleName();
        return n.substring(0, n.length() - "Poster".length()).toLowerCase(Locale.ROOT);
    }

    @Override
    public final PathCounters counters() {
        return counters;
    }

    @Override
    public final QueuePair qp() {
        return qp;
    }

    @Override
    public final int depth() {
        return depth;
    }

    @Override
    public final int maxBatch() {
        return maxBatch;
    }

    @Override
    public final int maxSge() {
        return maxSge;
    }

    @Override
    public final long freeSlots() {
        return credits.free();
    }

    @Override
    public final long retired(int owner) {
        return credits.retired(owner);
    }

    @Override
    public final long rejected() {
        return credits.rejected();
    }

    @Override
    public final long rejected(int owner) {
        return credits.rejected(owner);
    }

    @Override
    public final int firstRejectErrno(int owner) {
        return credits.firstRejectErrno(owner);
    }

    @Override
    public final void peer(int index, AddressHandle ah, int remoteQpn, int remoteQkey) {
        peerAh[index] = ah.handle();
        peerQpn[index] = remoteQpn;
        peerQkey[index] = remoteQkey;
    }

    /** Append request {@code i} of {@code b} to {@link #list}; the caller holds the right to post and has checked room. */
    protected final void append(SendBatch b, int i) {
        int rec = list.add(credits.sequence(b.wrId[i]), b.op[i], b.flags[i]);
        describe(rec, b, i);
    }

    /**
     * Write request {@code i} of {@code b} into record {@code rec} of {@link #list} as a reused
     * record of a pool: every per-request field is written, nothing else of the record.
     */
    protected final void rewrite(int rec, SendBatch b, int i) {
        list.wrId(rec, credits.sequence(b.wrId[i])).opcode(rec, b.op[i]).flags(rec, b.flags[i]);
        describe(rec, b, i);
    }

    private void describe(int rec, SendBatch b, int i) {
        SendWorkRequests w = list;
        Opcode op = b.op[i];
        w.sges(rec, b.headerAddr[i], b.headerLength[i], b.localAddr[i], b.length[i], b.lkey[i]);
        int peer = b.peer[i];
        if (op.isRdma()) {
            w.rdma(rec, b.remoteAddr[i], b.rkey[i]);
            if (connectionless) {
                w.srdDestination(rec, peerAh[peer], peerQpn[peer], peerQkey[peer]);
            }
        } else if (op.isAtomic()) {
            w.atomic(rec, b.remoteAddr[i], b.rkey[i], b.compareAdd[i], b.swap[i]);
            if (connectionless) { // no connectionless device has atomics: the provider refuses the request
                w.srdDestination(rec, peerAh[peer], peerQpn[peer], peerQkey[peer]);
            }
        } else if (connectionless) {
            w.ud(rec, peerAh[peer], peerQpn[peer], peerQkey[peer]);
        }
        if (op.hasImmediate()) {
            w.imm(rec, b.imm[i]);
        }
    }

    /** Post {@link #list} with one doorbell and clear it; returns the provider's result ({@link #settle}). */
    protected final int postList() {
        int n = list.count();
        if (n == 0) {
            return 0;
        }
        int rc = qp.postSend(list);
        if (Counters.ENABLED) {
            counters.doorbell(n);
        }
        if (rc != 0) {
            settle(rc, 0, n);
        }
        list.clear();
        return rc;
    }

    /**
     * After the provider refused a post of records {@code [from, from + n)} with {@code rc}: the
     * requests from its bad one on are un-sequenced, their credits returned, and each is counted to
     * its owner and reported to the failure handler.
     */
    protected final void settle(int rc, int from, int n) {
        int bad = list.badIndex() - from;
        if (bad < 0 || bad > n) {
            bad = 0;
        }
        SendCredits c = credits;
        long firstSeq = c.nextSequence() - n;
        for (int i = bad; i < n; i++) {
            long id = c.rewrite() ? c.userId(firstSeq + i) : list.wrId(from + i);
            c.reject(id, rc);
            onFailure.rejected(id, rc);
        }
        c.unsequence(n - bad);
        c.give(n - bad);
        if (Counters.ENABLED) {
            counters.failed(n - bad);
        }
    }

    @Override
    public final long retire(long completedWrId) {
        return credits.retire(completedWrId);
    }

    @Override
    public final long idOf(long completedWrId) {
        return credits.idOf(completedWrId);
    }

    /**
     * Admission, the same on every path: EINVAL for a batch above {@link #maxBatch} or with a header
     * the path's records have no room for, 0 for an empty one, back-pressure ({@link #noCredits()})
     * without a credit per request; then {@link #postAdmitted} with the credits held.
     */
    @Override
    public final int post(SendBatch b) {
        int n = b.count();
        if (n > maxBatch) {
            return Errno.EINVAL;
        }
        if (n == 0) {
            return 0;
        }
        if (maxSge < 2 && b.headers() > 0) {
            return Errno.EINVAL;
        }
        if (!credits.tryTake(n)) {
            return noCredits();
        }
        return postAdmitted(b, n);
    }

    /** Post the {@code n} admitted requests of {@code b} (their credits are held). Same result as {@link #post}. */
    protected abstract int postAdmitted(SendBatch b, int n);

    /** What a post without credits returns ({@link #EAGAIN}); a path may first help the holder. */
    protected int noCredits() {
        return EAGAIN;
    }

    /** Append the {@code n} admitted requests of {@code b} to {@link #list}. Holder of the right to post only. */
    protected final void appendAll(SendBatch b, int n) {
        for (int i = 0; i < n; i++) {
            append(b, i);
        }
    }

    @Override
    public void close() {
        list.close();
        counters.close();
    }
}
