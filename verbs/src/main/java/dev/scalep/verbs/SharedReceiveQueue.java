package dev.scalep.verbs;

/** A shared receive queue: receives consumed by whichever attached QP gets a message first. */
public interface SharedReceiveQueue extends AutoCloseable {
    ProtectionDomain pd();

    int maxWr();

    int maxSge();

    /** {@code ibv_post_srq_recv}; 0 or a positive errno, with {@link RecvWorkRequests#badIndex()} set. */
    int postRecv(RecvWorkRequests wrs);

    /** Receives posted and not yet consumed. */
    int posted();

    /** {@code ibv_destroy_srq}; refused with EBUSY while QPs use it. Idempotent. */
    @Override
    void close();
}
