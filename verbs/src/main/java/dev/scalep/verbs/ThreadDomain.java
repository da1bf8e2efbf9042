package dev.scalep.verbs;

/**
 * A thread domain ({@code ibv_alloc_td}): a promise that one thread at a time uses the objects bound
 * to it, which lets mlx5 give them a dedicated doorbell register without a lock. Bind QPs to it by
 * creating them through {@link ProtectionDomain#parentDomain(ThreadDomain)}.
 */
public interface ThreadDomain extends AutoCloseable {
    Context context();

    TdSharing sharing();

    /** The UAR page index (within the context) holding this TD's uUAR; -1 where the device has none. */
    int uarPage();

    /** The uUAR (doorbell register) index within the context; -1 where the device has none. */
    int uuar();

    /** {@code ibv_dealloc_td}; refused with EBUSY while a parent domain uses it. Idempotent. */
    @Override
    void close();
}
