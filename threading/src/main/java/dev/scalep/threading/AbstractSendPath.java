package dev.scalep.threading;

import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.counters.Counters;
import org.jctools.util.PaddedAtomicLong;

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
    /**
     * Records written since the last post: records {@code [0, pending)} of {@link #list} ({@link
     * #append}); written by the holder of the right to post at every request, so it lives on lines
     * of its own (padded), not beside the fields every posting thread reads in this object's first line.
     */
    private final PaddedAtomicLong pending = new PaddedAtomicLong();
    /**
     * What each record of {@link #list} holds (connected QPs): a reused record is written only
     * where the request differs from what it carried last, so a stream of similar requests writes
     * its id and little else. A record whose opcode is null here has never been written.
     */
    private final Opcode[] recOp;
    private final int[] recFlags;
    private final long[] recHeaderAddr;
    private final int[] recHeaderLength;
    private final long[] recAddr;
    private final int[] recLength;
    private final int[] recLkey;
    private final long[] recRemoteAddr;
    private final int[] recRkey;
    private final int[] recImm;
    /** Counters of this QP's send path ({@link Counters}); incremented only when {@link Counters#ENABLED}. */
    protected final PathCounters counters;

    /** A path whose native list holds {@code maxBatch} (capped at the queue depth) records. */
    AbstractSendPath(QueuePair qp, int maxBatch, int owners, int peers, PostFailureHandler onFailure) {
        this(qp, maxBatch, 0, owners, peers, onFailure);
    }

    /** As above with a list of {@code listCapacity} records when that is positive (a pool of WRs). */
    AbstractSendPath(QueuePair qp, int maxBatch, int listCapacity, int owners, int peers, PostFailureHandler onFailure) {
        this(qp, maxBatch, listCapacity, owners, peers, onFailure, 0);
    }

    /** As above with {@code slotLists} slot lists in the credits ({@link SendCredits#sequenceSlot}). */
    AbstractSendPath(QueuePair qp, int maxBatch, int listCapacity, int owners, int peers, PostFailureHandler onFailure,
                     int slotLists) {
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
        this.credits = new SendCredits(depth, owners, qp.pd().context().capabilities().inOrder(), slotLists);
        this.maxSge = Math.max(1, Math.min(2, qp.attributes().maxSendSge()));
        int records = listCapacity > 0 ? listCapacity : this.maxBatch;
        this.list = new SendWorkRequests(records, maxSge);
        list.fill(records); // linked once: a post takes a prefix (SendWorkRequests#prefix) or a sub-chain
        this.recOp = new Opcode[records];
        this.recFlags = new int[records];
        this.recHeaderAddr = new long[records];
        this.recHeaderLength = new int[records];
        this.recAddr = new long[records];
        this.recLength = new int[records];
        this.recLkey = new int[records];
        this.recRemoteAddr = new long[records];
        this.recRkey = new int[records];
        this.recImm = new int[records];
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

    /** Write request {@code i} of {@code b} into the next record of {@link #list}; the caller holds the right to post and has checked room. */
    protected final void append(SendBatch b, int i) {
        int rec = (int) pending.lpVal();
        pending.spVal(rec + 1);
        rewrite(rec, b, i);
    }

    /**
     * Write request {@code i} of {@code b} into the next record of {@link #list} with its id, local
     * address and remote address moved by the given amounts (one request of a run); the caller holds
     * the right to post and has checked room.
     */
    protected final void appendShifted(SendBatch b, int i, long idAdd, long localAdd, long remoteAdd) {
        int rec = (int) pending.lpVal();
        pending.spVal(rec + 1);
        list.wrId(rec, credits.sequence(b.wrId(i) + idAdd));
        Opcode op = b.op(i);
        long laddr = b.localAddr(i) + localAdd;
        long raddr = b.remoteAddr(i) + remoteAdd;
        if (connectionless || op.isAtomic() || differs(rec, b, i, laddr, raddr)) {
            write(rec, op, b.flags(i), b.headerAddr(i), b.headerLength(i), laddr, b.length(i), b.lkey(i),
                    raddr, b.rkey(i), b.imm(i), b.compareAdd(i), b.swap(i), b.peer(i));
        }
    }

    /** Records written and not yet posted (holder of the right to post). */
    protected final int pending() {
        return (int) pending.lpVal();
    }

    /** Set the count of records written and not yet posted (a path that writes records itself). */
    protected final void pending(int n) {
        pending.spVal(n);
    }

    /**
     * Write request {@code i} of {@code b} into record {@code rec} of {@link #list}, a pre-linked
     * record reused from an earlier post: its id always, every other field only where it differs
     * from what the record holds (on a connectionless QP, whose destination shares the record's
     * union with the RDMA fields, every field). The native record then reads exactly as if every
     * field had been written.
     */
    protected final void rewrite(int rec, SendBatch b, int i) {
        list.wrId(rec, credits.sequence(b.wrId(i)));
        Opcode op = b.op(i);
        if (connectionless || op.isAtomic() || differs(rec, b, i)) {
            write(rec, op, b.flags(i), b.headerAddr(i), b.headerLength(i), b.localAddr(i), b.length(i), b.lkey(i),
                    b.remoteAddr(i), b.rkey(i), b.imm(i), b.compareAdd(i), b.swap(i), b.peer(i));
        }
    }

    /** Whether request {@code i} of {@code b} differs from what record {@code rec} holds in any field but its id (connected QPs). */
    private boolean differs(int rec, SendBatch b, int i) {
        return differs(rec, b, i, b.localAddr(i), b.remoteAddr(i));
    }

    /** As {@link #differs(int, SendBatch, int)}, with the request's addresses given. */
    private boolean differs(int rec, SendBatch b, int i, long laddr, long raddr) {
        Opcode op = b.op(i);
        return op != recOp[rec] || b.flags(i) != recFlags[rec] || laddr != recAddr[rec]
                || b.length(i) != recLength[rec] || b.lkey(i) != recLkey[rec] || b.headerLength(i) != recHeaderLength[rec]
                || b.headerAddr(i) != recHeaderAddr[rec]
                || (op.isRdma() && (raddr != recRemoteAddr[rec] || b.rkey(i) != recRkey[rec]))
                || (op.hasImmediate() && b.imm(i) != recImm[rec]);
    }

    /**
     * Write a request (every field but its id) into record {@code rec}: on a connectionless QP or
     * for an atomic every field ({@link #writeWhole}), else only the fields in which it differs
     * from what the record held last. The callers first test whether anything changed, so this
     * runs when something did.
     */
    protected final void write(int rec, Opcode op, int flags, long headerAddr, int headerLength, long laddr,
                               int length, int lkey, long raddr, int rkey, int imm, long compareAdd, long swap,
                               int peer) {
        if (connectionless || op.isAtomic()) {
            writeWhole(rec, op, flags, headerAddr, headerLength, laddr, length, lkey, raddr, rkey, imm, compareAdd, swap,
                    peer);
            return;
        }
        SendWorkRequests w = list;
        Opcode was = recOp[rec];
        if (was == null) {
            writeAll(rec, op, flags, headerAddr, headerLength, laddr, length, lkey, raddr, rkey, imm);
            return;
        }
        if (op != was) {
            w.opcode(rec, op);
            recOp[rec] = op;
        }
        if (flags != recFlags[rec]) {
            w.flags(rec, flags);
            recFlags[rec] = flags;
        }
        if (laddr != recAddr[rec] || length != recLength[rec] || lkey != recLkey[rec]
                || headerLength != recHeaderLength[rec] || headerAddr != recHeaderAddr[rec]) {
            writeSges(rec, headerAddr, headerLength, laddr, length, lkey);
        }
        if (op.isRdma() && (raddr != recRemoteAddr[rec] || rkey != recRkey[rec])) {
            writeRdma(rec, raddr, rkey);
        }
        if (op.hasImmediate() && imm != recImm[rec]) {
            w.imm(rec, imm);
            recImm[rec] = imm;
        }
    }

    /**
     * Every field of a request but its id into record {@code rec}: on a connectionless QP (its
     * destination shares the record's union with the RDMA fields) and for an atomic (whose fields
     * share it too); the record's remembered contents are forgotten, so the next request written
     * into it is written whole.
     */
    private void writeWhole(int rec, Opcode op, int flags, long headerAddr, int headerLength, long laddr, int length,
                            int lkey, long raddr, int rkey, int imm, long compareAdd, long swap, int peer) {
        SendWorkRequests w = list;
        w.opcode(rec, op).flags(rec, flags);
        recFlags[rec] = flags; // the one field kept: flagsOf reads it
        w.sges(rec, headerAddr, headerLength, laddr, length, lkey);
        if (op.isRdma()) {
            w.rdma(rec, raddr, rkey);
            if (connectionless) {
                w.srdDestination(rec, peerAh[peer], peerQpn[peer], peerQkey[peer]);
            }
        } else if (op.isAtomic()) {
            w.atomic(rec, raddr, rkey, compareAdd, swap);
            if (connectionless) { // no connectionless device has atomics: the provider refuses the request
                w.srdDestination(rec, peerAh[peer], peerQpn[peer], peerQkey[peer]);
            }
        } else if (connectionless) {
            w.ud(rec, peerAh[peer], peerQpn[peer], peerQkey[peer]);
        }
        if (op.hasImmediate()) {
            w.imm(rec, imm);
        }
        recOp[rec] = null;
    }

    /** Every field of a request but its id into record {@code rec} never written, or written whole (connected QPs). */
    private void writeAll(int rec, Opcode op, int flags, long headerAddr, int headerLength, long laddr, int length,
                          int lkey, long raddr, int rkey, int imm) {
        list.opcode(rec, op).flags(rec, flags);
        recOp[rec] = op;
        recFlags[rec] = flags;
        writeSges(rec, headerAddr, headerLength, laddr, length, lkey);
        // The RDMA fields too when the opcode has none: after a record written whole (an atomic's
        // operands share them) they must hold what is remembered, or a later RDMA request with
        // the remembered remote address and rkey would keep the atomic's bytes.
        writeRdma(rec, raddr, rkey);
        list.imm(rec, imm);
        recImm[rec] = imm;
    }

    private void writeSges(int rec, long headerAddr, int headerLength, long laddr, int length, int lkey) {
        list.sges(rec, headerAddr, headerLength, laddr, length, lkey);
        recHeaderAddr[rec] = headerAddr;
        recHeaderLength[rec] = headerLength;
        recAddr[rec] = laddr;
        recLength[rec] = length;
        recLkey[rec] = lkey;
    }

    private void writeRdma(int rec, long raddr, int rkey) {
        list.rdma(rec, raddr, rkey);
        recRemoteAddr[rec] = raddr;
        recRkey[rec] = rkey;
    }

    /** The flags record {@code rec} holds (remembered, so valid once {@link #write} wrote it). */
    protected final int flagsOf(int rec) {
        return recFlags[rec];
    }

    /** Whether records are written whole (a connectionless QP: its destination shares the RDMA fields). */
    protected final boolean connectionless() {
        return connectionless;
    }

    /** Replace the flags of record {@code rec}, keeping what it remembers in step. */
    protected final void setFlags(int rec, int flags) {
        list.flags(rec, flags);
        recFlags[rec] = flags;
    }

    /**
     * Post records {@code [0, n)} of slot list {@code slot} with one doorbell: a run whose caller ids
     * are {@code firstId} and the ones after it, sequenced ({@link SendCredits#sequenceSlot}) with its
     * credits taken. Returns the provider's result, a refusal settled as {@link #postList} settles one.
     */
    protected final int postSlot(SendWorkRequests slot, int n, long firstId) {
        int rc = qp.postSend(slot.prefix(n));
        if (Counters.ENABLED) {
            counters.doorbell(n);
        }
        if (rc != 0) {
            settle(rc, slot, 0, n, true, firstId);
        }
        return rc;
    }

    /** Post the {@link #pending} records with one doorbell; returns the provider's result ({@link #settle}). */
    protected final int postList() {
        int n = pending();
        if (n == 0) {
            return 0;
        }
        int rc = qp.postSend(list.prefix(n));
        if (Counters.ENABLED) {
            counters.doorbell(n);
        }
        if (rc != 0) {
            settle(rc, 0, n);
        }
        pending.spVal(0);
        return rc;
    }

    /**
     * After the provider refused a post of records {@code [from, from + n)} with {@code rc}: the
     * requests from its bad one on are un-sequenced, their credits returned, and each is counted to
     * its owner and reported to the failure handler.
     */
    protected final void settle(int rc, int from, int n) {
        settle(rc, list, from, n, false, 0);
    }

    /**
     * {@link #settle} of a post of records {@code [from, from + n)} of {@code posted}: the caller's
     * ids from the sequence table, or with {@code run} {@code firstId} and the ones after it (a run
     * posted from a slot list, whose ids the table does not hold).
     */
    private void settle(int rc, SendWorkRequests posted, int from, int n, boolean run, long firstId) {
        int bad = posted.badIndex() - from;
        if (bad < 0 || bad > n) {
            bad = 0;
        }
        SendCredits c = credits;
        long firstSeq = c.nextSequence() - n;
        for (int i = bad; i < n; i++) {
            long id = run ? firstId + i : c.rewrite() ? c.userId(firstSeq + i) : posted.wrId(from + i);
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

    @Override
    public final long stable(long completedWrId) {
        return credits.stable(completedWrId);
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
        int rec = pending();
        SendWorkRequests w = list;
        SendCredits c = credits;
        for (int i = 0; i < n; i++, rec++) {
            // the id, then only what changed: one loop the JIT compiles whole (a call per request
            // to a separately compiled method kept every field load and range check per request)
            w.wrId(rec, c.sequence(b.wrId(i)));
            Opcode op = b.op(i);
            if (connectionless || op.isAtomic() || differs(rec, b, i)) {
                write(rec, op, b.flags(i), b.headerAddr(i), b.headerLength(i), b.localAddr(i), b.length(i), b.lkey(i),
                        b.remoteAddr(i), b.rkey(i), b.imm(i), b.compareAdd(i), b.swap(i), b.peer(i));
            }
        }
        pending.spVal(rec);
    }

    @Override
    public void close() {
        list.close();
        counters.close();
    }
}
