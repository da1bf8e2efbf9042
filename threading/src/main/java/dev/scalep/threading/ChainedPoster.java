package dev.scalep.threading;

import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.counters.Counters;

/**
 * The send path of a QP used by one thread whose work requests come from a pre-initialised pool:
 * {@code poolSize} native records linked once ({@link SendWorkRequests#fill}) and never freed. A
 * batch is written into the next records, only the per-request fields, and posted as one sub-chain
 * ({@link QueuePair#postSend(SendWorkRequests, int, int)}, one doorbell), at most
 * {@link #maxBatch()} long; a batch that reaches the pool's end goes out as two chains. Records are
 * reused round-robin (the provider has copied a WQE when {@code postSend} returns) and hold two
 * SGEs, so a header and a payload go out as one work request.
 *
 * <p>Credits, retirement and refusals follow {@link SendPath}. {@link #post} must be called by one
 * thread at a time (the endpoint layer binds it to its owner); {@link #retire} may run on the CQ
 * poller's thread. Allocation-free after construction.
 */
public final class ChainedPoster extends AbstractSendPath {
    private final int poolSize;
    /** Next record to write into, and the first written record not yet posted (poster thread). */
    private int cursor;
    private int chainStart;
    private long chains;

    /**
     * @param poolSize records in the pool
     * @param maxChain most requests per chain (capped at the queue depth and the pool)
     * @param owners   owner indexes that appear in ids ({@link WrIds#owner})
     * @param peers    address-handle table size for connectionless QPs (0 for RC)
     */
    public ChainedPoster(QueuePair qp, int poolSize, int maxChain, int owners, int peers, PostFailureHandler onFailure) {
        super(qp, checked(poolSize, maxChain), poolSize, owners, peers, onFailure);
        this.poolSize = poolSize;
    }

    private static int checked(int poolSize, int maxChain) {
        if (poolSize < 1 || maxChain < 1 || maxChain > poolSize) {
            throw new IllegalArgumentException("pool " + poolSize + " and chain length " + maxChain
                    + " must be >= 1, chain <= pool");
        }
        return maxChain;
    }

    @Override
    protected int postAdmitted(SendBatch b, int n) {
        int rc = 0;
        for (int i = 0; i < n; i++) {
            if (cursor == poolSize) {
                rc = firstError(rc, postChain());
            }
            rewrite(cursor++, b, i);
        }
        return firstError(rc, postChain());
    }

    private static int firstError(int a, int b) {
        return a != 0 ? a : b;
    }

    /** Post the written records as one chain; the refused ones are settled ({@link #settle}). */
    private int postChain() {
        int n = cursor - chainStart;
        int rc = 0;
        if (n > 0) {
            rc = qp.postSend(list, chainStart, n);
            chains++;
            if (Counters.ENABLED) {
                counters.doorbell(n);
            }
            if (rc != 0) {
                settle(rc, chainStart, n);
            }
        }
        cursor = cursor == poolSize ? 0 : cursor;
        chainStart = cursor;
        return rc;
    }

    /** Records in the pool. */
    public int poolSize() {
        return poolSize;
    }

    /** Chains posted (doorbells rung by this path). */
    public long chains() {
        return chains;
    }

    /** Native address of the record the last request went into (tests check that records are reused). */
    public long lastRecordAddress() {
        return list.address(cursor == 0 ? poolSize - 1 : cursor - 1);
    }
}
