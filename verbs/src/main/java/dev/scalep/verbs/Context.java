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

    boolean isClosed();

    /** Destroy everything this context owns, then the context. Idempotent. */
    @Override
    void close();
}
