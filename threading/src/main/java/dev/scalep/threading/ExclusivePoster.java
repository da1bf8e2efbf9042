package dev.scalep.threading;

import dev.scalep.verbs.QueuePair;

/**
 * The send path of a QP used by one thread: fills the postlist and rings the doorbell directly,
 * without a lock (with a thread domain and parent domain the provider takes none either).
 * {@link #post} must be called by one thread at a time; the caller serialises it (the endpoint
 * layer binds it to its owner thread). {@link #retire} may run on the CQ poller's thread.
 */
public final class ExclusivePoster extends AbstractSendPath {
    public ExclusivePoster(QueuePair qp, int maxBatch, int owners, int peers, PostFailureHandler onFailure) {
        super(qp, maxBatch, owners, peers, onFailure);
    }

    @Override
    protected int postAdmitted(SendBatch b, int n) {
        appendAll(b, n);
        return postList();
    }
}
