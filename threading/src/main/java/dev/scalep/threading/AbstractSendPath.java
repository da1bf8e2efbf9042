package dev.scalep.threading;

import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendWorkRequests;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Credits, id rewriting and postlist filling shared by the send paths. On an in-order device the
 * provider sees each request's send-queue sequence number as its {@code wr_id}; the caller's id is
 * kept in a table indexed by that sequence, so a completion tells exactly which requests it
 * retires, including unsignaled ones of other threads. Out of order (SRD) every request must be
 * signaled and retires only itself; ids pass through unchanged.
 */
abstract class AbstractSendPath implements SendPath {
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    protected final QueuePair qp;
    protected final int depth;
    protected final int maxBatch;
    protected final boolean rewrite;
    protected final PaddedAtomicLong credits;
    protected final SendWorkRequests list;
    private final PostFailureHandler onFailure;
    private final PaddedLongArray retiredBy;
    private final PaddedAtomicLong rejected = new PaddedAtomicLong();
    private final long[] userIds;
    private final int mask;
    private final boolean connectionless;
    private final long[] peerAh;
    private final int[] peerQpn;
    private final int[] peerQkey;
    /** Next send-queue sequence; written only by the thread that holds the right to post. */
    protected long sqSeq;
    /** First sequence not yet retired; written only by the poll-role holder. */
    private long retiredSeq;

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
        this.rewrite = qp.pd().context().capabilities().inOrder();
        this.credits = new PaddedAtomicLong(depth);
        this.list = new SendWorkRequests(this.maxBatch, 1);
        this.onFailure = onFailure == null ? (id, errno) -> { } : onFailure;
        this.retiredBy = new PaddedLongArray(owners);
        int cap = Integer.highestOneBit(Math.max(1, depth - 1)) << 1;
        this.userIds = new long[rewrite ? cap : 1];
        this.mask = cap - 1;
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
        return credits.get();
    }

    @Override
    public final long retired(int owner) {
        return retiredBy.getAcquire(owner);
    }

    @Override
    public final long rejected() {
        return rejected.get();
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
        long id = wrId;
        if (rewrite) {
            long seq = sqSeq++;
            // Release: pairs with the acquire in retire(); the provider's completion also orders it.
            LONGS.setRelease(userIds, (int) (seq & mask), wrId);
            id = seq;
        }
        Opcode op = Opcode.of(opcode);
        int i = list.add(id, op, flags);
        if (length > 0) {
            list.sge(i, localAddr, length, lkey);
        }
        if (op.isRdma()) {
            list.rdma(i, remoteAddr, rkey);
            if (connectionless) {
                srdByHandle(i, peer);
            }
        } else if (connectionless) {
            // SendWorkRequests.ud() wants the object; write the same union through the handle table.
            udByHandle(i, peer);
        }
        if (op.hasImmediate()) {
            list.imm(i, imm);
        }
    }

    private void udByHandle(int i, int peer) {
        long base = dev.scalep.verbs.ffm.Structs.IBV_SEND_WR.byteSize() * i;
        var seg = list.segment();
        seg.set(java.lang.foreign.ValueLayout.JAVA_LONG, base + dev.scalep.verbs.ffm.Structs.SEND_UD_AH, peerAh[peer]);
        seg.set(java.lang.foreign.ValueLayout.JAVA_INT, base + dev.scalep.verbs.ffm.Structs.SEND_UD_REMOTE_QPN, peerQpn[peer]);
        seg.set(java.lang.foreign.ValueLayout.JAVA_INT, base + dev.scalep.verbs.ffm.Structs.SEND_UD_REMOTE_QKEY, peerQkey[peer]);
    }

    private void srdByHandle(int i, int peer) {
        long base = dev.scalep.verbs.ffm.Structs.IBV_SEND_WR.byteSize() * i;
        var seg = list.segment();
        seg.set(java.lang.foreign.ValueLayout.JAVA_LONG, base + dev.scalep.verbs.ffm.Structs.SEND_SCALEP_SRD_AH, peerAh[peer]);
        seg.set(java.lang.foreign.ValueLayout.JAVA_INT, base + dev.scalep.verbs.ffm.Structs.SEND_SCALEP_SRD_QPN, peerQpn[peer]);
        seg.set(java.lang.foreign.ValueLayout.JAVA_INT, base + dev.scalep.verbs.ffm.Structs.SEND_SCALEP_SRD_QKEY, peerQkey[peer]);
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
            long firstSeq = sqSeq - n;
            for (int i = bad; i < n; i++) {
                long id = rewrite ? (long) LONGS.getAcquire(userIds, (int) ((firstSeq + i) & mask)) : list.wrId(i);
                rejected.getAndAdd(1);
                onFailure.rejected(id, rc);
            }
            if (rewrite) {
                sqSeq = firstSeq + bad;
            }
            credits.getAndAdd(n - bad);
        }
        list.clear();
        return rc;
    }

    @Override
    public final long retire(long completedWrId) {
        if (!rewrite) {
            int owner = WrIds.owner(completedWrId);
            if (owner < retiredBy.length()) {
                retiredBy.addOrdered(owner, 1);
            }
            credits.getAndAdd(1);
            return completedWrId;
        }
        long s = completedWrId;
        long r = retiredSeq;
        long mine = (long) LONGS.getAcquire(userIds, (int) (s & mask));
        if (s < r) {
            return mine; // already retired by a later completion; no credit twice
        }
        for (long k = r; k <= s; k++) {
            int owner = WrIds.owner((long) LONGS.getAcquire(userIds, (int) (k & mask)));
            if (owner < retiredBy.length()) {
                retiredBy.addOrdered(owner, 1);
            }
        }
        retiredSeq = s + 1;
        // Release the slots last: a credit lets a poster overwrite the table entries read above.
        credits.getAndAdd(s + 1 - r);
        return mine;
    }

    protected static int checkBatch(int n, int maxBatch) {
        return n > maxBatch ? Errno.EINVAL : 0;
    }

    @Override
    public void close() {
        list.close();
    }

    static boolean isRc(QueuePair qp) {
        return qp.type() == QpType.RC;
    }
}
