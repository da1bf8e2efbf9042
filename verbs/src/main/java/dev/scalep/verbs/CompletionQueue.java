package dev.scalep.verbs;

/**
 * A completion queue. {@link #poll} is the data path: allocation-free, non-blocking. Unless the CQ
 * was created single-threaded, polls from several threads are serialised by the provider (the
 * mlx5 CQ lock); a single-threaded CQ must be polled by one thread at a time.
 */
public interface CompletionQueue extends AutoCloseable {
    Context context();

    /** The number of entries; more outstanding completions than this overrun the CQ. */
    int depth();

    boolean singleThreaded();

    /**
     * Move up to {@code max} (at most {@code out.capacity()}) completions into {@code out}. Returns
     * the number moved (0 when empty), or a negative errno when the CQ is in error (overrun: -EIO).
     */
    int poll(WorkCompletions out, int max);

    default int poll(WorkCompletions out) {
        return poll(out, out.capacity());
    }

    /** {@code ibv_modify_cq} moderation: an event after {@code count} CQEs or {@code periodMicros}. */
    void moderate(int count, int periodMicros);

    /** Arm the completion channel for the next completion ({@code ibv_req_notify_cq}). */
    void requestNotify();

    /**
     * Wait for a completion event ({@code ibv_get_cq_event}); returns false on timeout. Every event
     * returned must be acknowledged with {@link #ackEvents(int)} (the runtime does it at close).
     */
    boolean awaitEvent(long timeoutNanos);

    void ackEvents(int n);

    /** Events returned by {@link #awaitEvent} and not yet acknowledged. */
    int unackedEvents();

    /** Whether the CQ overran (IBV_EVENT_CQ_ERR): it is dead and its QPs are in error. */
    boolean isOverrun();

    /** CQEs the device wrote into this CQ so far (a feature-effect counter). */
    long cqesWritten();

    /**
     * {@code ibv_destroy_cq}; refused with EBUSY while QPs use it; acknowledges outstanding events
     * first. Idempotent.
     */
    @Override
    void close();
}
