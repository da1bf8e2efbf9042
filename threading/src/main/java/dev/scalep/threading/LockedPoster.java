package dev.scalep.threading;

import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.counters.Counters;

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
        if (Counters.ENABLED) {
            boolean waited = !lock.tryLock();
            if (waited) {
                lock.lock();
            }
            counters.acquired(waited);
        } else {
            lock.lock();
        }
        try {
            appendAll(b, n);
            return postList();
        } finally {
            lock.unlock();
        }
    }
}
