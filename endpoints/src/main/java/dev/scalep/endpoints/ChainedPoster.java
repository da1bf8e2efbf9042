package dev.scalep.endpoints;

import dev.scalep.threading.SendBatch;
import dev.scalep.threading.SendCredits;
import dev.scalep.threading.SendPath;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendWorkRequests;

/**
 * The send path of a per-thread QP whose work requests come from a pre-initialised pool: one
 * {@link SendWorkRequests} of {@code poolSize} records, linked once ({@link SendWorkRequests#fill})
 * and never freed; the owner stages each request straight into the next record (only the
 * per-operation fields are written) and posts the staged records as one sub-chain
 * ({@link QueuePair#postSend(SendWorkRequests, int, int)}, one doorbell), at most
 * {@code maxChain} long. Records are reused round-robin (the provider has copied a WQE when
 * {@code postSend} returns). Records have two SGEs, so a header and a payload go out as one WR.
 *
 * <p>Credits and retirement follow {@link SendPath}: in order, the provider sees send-queue
 * sequence numbers as {@code wr_id}s and a signaled completion retires every earlier request;
 * out of order (SRD) each request is signaled and retires itself. Staging and posting are for the
 * owner thread only; {@link #retire} runs on the CQ poller's thread; {@link #retired} on any.
 * Allocation-free after construction.
 */
final class ChainedPoster implements SendPath {
    private final QueuePair qp;
    private final int depth;
    private final int poolSize;
    private final int maxChain;
    private final boolean connectionless;
    private final SendWorkRequests pool;
    private final SendCredits credits;
    /** The peer's AH handle; 0 until {@link #peer} (the provider refuses a request without one). */
    private long ahHandle;
    private int remoteQpn;
    private int remoteQkey;
    /** Next record to stage into, and first staged record not yet posted (owner thread). */
    private int cursor;
    private int chainStart;
    private long chains;

    ChainedPoster(QueuePair qp, int poolSize, int maxChain, int owners) {
        if (poolSize < 1 || maxChain < 1 || maxChain > poolSize) {
            throw new IllegalArgumentException("pool " + poolSize + " and chain length " + maxChain + " must be >= 1, chain <= pool");
        }
        this.qp = qp;
        this.depth = qp.attributes().maxSendWr();
        this.poolSize = poolSize;
        this.maxChain = Math.min(maxChain, depth);
        this.connectionless = qp.type().connectionless();
        this.pool = new SendWorkRequests(poolSize, 2).fill(poolSize);
        this.credits = new SendCredits(depth, owners, qp.pd().context().capabilities().inOrder());
    }

    /** Records staged and not yet posted. */
    int staged() {
        return cursor - chainStart;
    }

    /** Whether the next stage needs a post first (the chain is at its longest or the pool's end). */
    boolean chainFull() {
        return cursor - chainStart >= maxChain || cursor == poolSize;
    }

    /** Native address of the record the last staged request went into (tests check reuse). */
    long lastRecordAddress() {
        return pool.address(cursor == 0 ? poolSize - 1 : cursor - 1);
    }

    int poolSize() {
        return poolSize;
    }

    int maxChain() {
        return maxChain;
    }

    /** Chains posted (doorbells rung by this path). */
    long chains() {
        return chains;
    }

    /**
     * Write one request into the next pool record: a payload SGE ({@code length > 0}) preceded by a
     * header SGE when {@code headerLength > 0}. Returns 0, or {@link #EAGAIN} when no credit is left
     * (nothing staged). The caller posts first when {@link #chainFull()}.
     */
    int stage(long wrId, Opcode op, int flags, long headerAddr, int headerLength, long localAddr, int length, int lkey,
              long remoteAddr, int rkey, int imm) {
        if (!credits.tryTake(1)) {
            return EAGAIN;
        }
        int i = cursor++;
        long id = credits.sequence(wrId);
        SendWorkRequests w = pool;
        w.wrId(i, id).opcode(i, op).flags(i, flags);
        int sges = 0;
        if (headerLength > 0) {
            w.numSge(i, 1).sgeAt(i, 0, headerAddr, headerLength, lkey);
            sges = 1;
        }
        if (length > 0) {
            w.numSge(i, sges + 1).sgeAt(i, sges, localAddr, length, lkey);
            sges++;
        }
        w.numSge(i, sges);
        if (op.isRdma()) {
            w.rdma(i, remoteAddr, rkey);
            if (connectionless) {
                w.srdDestination(i, ahHandle, remoteQpn, remoteQkey);
            }
        } else if (connectionless) {
            w.ud(i, ahHandle, remoteQpn, remoteQkey);
        }
        if (op.hasImmediate()) {
            w.imm(i, imm);
        }
        return 0;
    }

    /** Set SIGNALED on the last staged record (flush). */
    void signalLast() {
        if (cursor > chainStart) {
            pool.flags(cursor - 1, pool.flags(cursor - 1) | dev.scalep.verbs.SendFlags.SIGNALED);
        }
    }

    /** Drop staged records and return their credits (only after a failed post's cleanup or at close). */
    void discardStaged() {
        int n = cursor - chainStart;
        if (n > 0) {
            credits.unsequence(n);
            credits.give(n);
            cursor = chainStart;
        }
    }

    /**
     * Post the staged records as one chain (one doorbell). 0, or the provider's errno: the records
     * from the bad one on are un-staged and their credits returned.
     */
    int postStaged() {
        int n = cursor - chainStart;
        if (n == 0) {
            return 0;
        }
        int rc = qp.postSend(pool, chainStart, n);
        chains++;
        if (rc != 0) {
            int bad = pool.badIndex() - chainStart;
            if (bad < 0 || bad > n) {
                bad = 0;
            }
            long firstSeq = credits.nextSequence() - n;
            for (int i = bad; i < n; i++) {
                credits.reject(credits.rewrite() ? credits.userId(firstSeq + i) : pool.wrId(chainStart + i), rc);
            }
            credits.unsequence(n - bad);
            credits.give(n - bad);
        }
        cursor = cursor == poolSize ? 0 : cursor;
        chainStart = cursor;
        return rc;
    }

    @Override
    public QueuePair qp() {
        return qp;
    }

    @Override
    public int depth() {
        return depth;
    }

    @Override
    public int maxBatch() {
        return maxChain;
    }

    @Override
    public long freeSlots() {
        return credits.free();
    }

    /** Not used: the owning endpoint stages into the pool directly. */
    @Override
    public int post(SendBatch batch) {
        throw new UnsupportedOperationException("a chained-post path is fed through its pool (Endpoint), not a SendBatch");
    }

    @Override
    public int post(long wrId, Opcode op, int flags, long localAddr, int length, int lkey, long remoteAddr, int rkey,
                    int imm, int peer) {
        if (chainFull()) {
            int rc = postStaged();
            if (rc != 0) {
                return rc;
            }
        }
        int rc = stage(wrId, op, flags, 0, 0, localAddr, length, lkey, remoteAddr, rkey, imm);
        return rc != 0 ? rc : postStaged();
    }

    @Override
    public long retire(long completedWrId) {
        return credits.retire(completedWrId);
    }

    @Override
    public long idOf(long completedWrId) {
        return credits.idOf(completedWrId);
    }

    @Override
    public long retired(int owner) {
        return credits.retired(owner);
    }

    @Override
    public long rejected() {
        return credits.rejected();
    }

    @Override
    public long rejected(int owner) {
        return credits.rejected(owner);
    }

    @Override
    public int firstRejectErrno(int owner) {
        return credits.firstRejectErrno(owner);
    }

    @Override
    public void peer(int index, AddressHandle ah, int remoteQpn, int remoteQkey) {
        if (index != 0) {
            throw new IllegalArgumentException("a chained-post path has one peer (index 0): " + index);
        }
        this.ahHandle = ah.handle();
        this.remoteQpn = remoteQpn;
        this.remoteQkey = remoteQkey;
    }

    @Override
    public void close() {
        pool.close();
    }
}
