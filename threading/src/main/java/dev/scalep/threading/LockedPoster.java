package dev.scalep.threading;

import dev.scalep.verbs.QueuePair;

/**
 * The reference send path of a QP shared by several threads, as MPI+threads implements it today:
 * one lock held around filling the postlist and ringing the doorbell, plus an atomic on the free
 * queue depth. The lock is a {@link SpinYieldLock}, so waiting allocates nothing. Thread-safe. Contention serialises the threads (compare {@link CombiningPoster}).
 */
public final class LockedPoster extends AbstractSendPath {
    private final SpinYieldLock lock = new SpinYieldLock();

    public LockedPoster(QueuePair qp, int maxBatch, int owners, int peers, PostFailureHandler onFailure) {
        super(qp, maxBatch, owners, peers, onFailure);
    }

    @Override
    protected int postAdmitted(SendBatch b, int n) {
        lock.lock();
        try {
            appendAll(b, n);
            return postList();
        } finally {
            lock.unlock();
        }
    }
}
