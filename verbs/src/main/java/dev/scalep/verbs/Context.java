package dev.scalep.verbs;

/**
 * An open device context ({@code struct ibv_context}). It owns every object created through it:
 * {@link #close()} destroys them all in reverse dependency order (QPs → AHs → MRs → SRQs → CQs →
 * parent domains → TDs → PDs) and then the context. Creation methods are thread-safe.
 */
public interface Context extends AutoCloseable {
    Device device();

    DeviceCapabilities capabilities();

    ContextOptions options();

    /** {@code ibv_alloc_pd}. */
    ProtectionDomain allocPd();

    /** {@code ibv_create_cq} / {@code ibv_create_cq_ex}. */
    CompletionQueue createCq(CqOptions options);

    default CompletionQueue createCq(int depth) {
        return createCq(CqOptions.of(depth));
    }

    /**
     * {@code ibv_alloc_td}. Throws {@link UnsupportedFeatureException} on devices without thread
     * domains (EFA, rxe).
     */
    ThreadDomain allocTd(TdSharing sharing);

    /** Live resources of this context (contexts = 1 while open). */
    ResourceUsage resources();

    /** A one-line description of the UAR allocation in force, e.g. {@code classic: 8 pages, 16 uUARs (4 low-latency)}. */
    String uarDescription();

    /**
     * The next asynchronous event of this context ({@code ibv_get_async_event}), waiting at most
     * {@code timeoutNanos} (0 = do not wait); null on timeout. The runtime acknowledges every event
     * before returning it ({@code ibv_ack_async_event}), so there is never an unacknowledged event
     * that would hold up destroying a QP, CQ or SRQ, nor {@link #close()}. Control path: allocates.
     * Thread-safe; concurrent callers each get distinct events. After {@link #close()} (also one
     * that happens while waiting) throws {@link ClosedException}. Events are queued per context by
     * the device (the kernel for real devices), bounded; see the provider for what it raises.
     */
    default AsyncEvent pollAsyncEvent(long timeoutNanos) {
        throw new UnsupportedFeatureException("ibv_get_async_event", device().name(), "asynchronous events");
    }

    boolean isClosed();

    /** Destroy everything this context owns, then the context. Idempotent. */
    @Override
    void close();
}
