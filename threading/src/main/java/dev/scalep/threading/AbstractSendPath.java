package dev.scalep.threading;

import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendWorkRequests;

/**
 * Credits, id rewriting ({@link SendCredits}) and postlist filling shared by the send paths. On an
 * in-order device the provider sees each request's send-queue sequence number as its {@code wr_id},
 * so a completion tells exactly which requests it retires, including unsignaled ones of other
 * threads. Out of order (SRD) every request must be signaled and retires only itself; ids pass
 * through unchanged.
 */
abstract class AbstractSendPath implements SendPath {
    protected final QueuePair qp;
    protected final int depth;
    protected final int maxBatch;
    /** Owner indexes whose retirements and refusals are counted ({@link WrIds#owner}). */
    protected final int owners;
    protected final SendCredits credits;
    protected final SendWorkRequests list;
    private final PostFailureHandler onFailure;
    private final boolean connectionless;
    private final long[] peerAh;
    private final int[] peerQpn;
    private final int[] peerQkey;

    AbstractSendPath(QueuePair qp, int maxBatch, int owners, int peers, PostFailureHandler onFailure) {
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
        this.list = new SendWorkRequests(this.maxBatch, 1);
        this.onFailure = onFailure == null ? (id, errno) -> { } : onFailure;
        this.connectionless = qp.type().connectionless();
        this.peerAh = new long[Math.max(peers, 0)];
        this.peerQpn = new int[Math.max(peers, 0)];
        this.peerQkey = new int[Math.max(peers, 0)];
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

    /** Append one request to {@link #list}; the caller holds the right to post and has checked room. */
    protected final void append(long wrId, int opcode, int flags, long localAddr, int length, int lkey,
                                long remoteAddr, int rkey, int imm, int peer) {
        long id = credits.sequence(wrId);
        Opcode op = Opcode.of(opcode);
        int i = list.add(id, op, flags);
        if (length > 0) {
            list.sge(i, localAddr, length, lkey);
        }
        if (op.isRdma()) {
            list.rdma(i, remoteAddr, rkey);
            if (connectionless) {
                list.srdDestination(i, peerAh[peer], peerQpn[peer], peerQkey[peer]);
            }
        } else if (connectionless) {
            list.ud(i, peerAh[peer], peerQpn[peer], peerQkey[peer]);
        }
        if (op.hasImmediate()) {
            list.imm(i, imm);
        }
    }

    /**
     * Post {@link #list} with one doorbell. On failure the requests from {@code badIndex} on are
     * un-sequenced, their credits returned and each reported to the failure handler. Returns the
     * provider's result.
     */
    protected final int postList() {
        int n = list.count();
        if (n == 0) {
            return 0;
        }
        int rc = qp.postSend(list);
        if (rc != 0) {
            int bad = list.badIndex();
            if (bad < 0 || bad > n) {
                bad = 0;
            }
            SendCredits c = credits;
            long firstSeq = c.nextSequence() - n;
            for (int i = bad; i < n; i++) {
                long id = c.rewrite() ? c.userId(firstSeq + i) : list.wrId(i);
                c.reject(id, rc);
                onFailure.rejected(id, rc);
            }
            c.unsequence(n - bad);
            c.give(n - bad);
        }
        list.clear();
        return rc;
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
     * Admission, the same on every path: EINVAL for a batch above {@link #maxBatch}, 0 for an empty
     * one, back-pressure ({@link #noCredits()}) without a credit per request; then
     * {@link #postAdmitted} with the credits held.
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
        if (!credits.tryTake(n)) {
            return noCredits();
        }
        return postAdmitted(b, n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    @Override
    public final int post(long wrId, Opcode op, int flags, long localAddr, int length, int lkey,
                          long remoteAddr, int rkey, int imm, int peer) {
        if (!credits.tryTake(1)) {
            return noCredits();
        }
        return postAdmitted(null, 1, wrId, op.code, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
    }

    /**
     * Post {@code n} admitted requests (their credits are held): those of {@code b}, or when
     * {@code b} is null the one given in the remaining arguments. Same result as {@link #post}.
     */
    protected abstract int postAdmitted(SendBatch b, int n, long wrId, int opcode, int flags, long localAddr,
                                        int length, int lkey, long remoteAddr, int rkey, int imm, int peer);

    /** What a post without credits returns ({@link #EAGAIN}); a path may first help the holder. */
    protected int noCredits() {
        return EAGAIN;
    }

    /**
     * Append admitted requests to {@link #list} (as {@link #postAdmitted} receives them). Holder of the
     * right to post only.
     */
    protected final void appendOwn(SendBatch b, int n, long wrId, int opcode, int flags, long localAddr, int length,
                                   int lkey, long remoteAddr, int rkey, int imm, int peer) {
        if (b == null) {
            append(wrId, opcode, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
            return;
        }
        for (int i = 0; i < n; i++) {
            append(b.wrId[i], b.opcode[i], b.flags[i], b.localAddr[i], b.length[i], b.lkey[i],
                    b.remoteAddr[i], b.rkey[i], b.imm[i], b.peer[i]);
        }
    }

    @Override
    public void close() {
        list.close();
    }

    static boolean isRc(QueuePair qp) {
        return qp.type() == QpType.RC;
    }
}
