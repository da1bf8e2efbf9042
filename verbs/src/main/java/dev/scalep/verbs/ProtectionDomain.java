package dev.scalep.verbs;

import java.lang.foreign.MemorySegment;

/**
 * A protection domain ({@code ibv_alloc_pd}), or a parent domain ({@code ibv_alloc_parent_domain})
 * that carries a thread domain: QPs created through a parent domain use the TD's doorbell register
 * and run without the QP lock, so each must be used by one thread at a time.
 */
public interface ProtectionDomain extends AutoCloseable {
    Context context();

    /** The thread domain of a parent domain; {@code null} for an ordinary PD. */
    ThreadDomain threadDomain();

    /**
     * {@code ibv_reg_mr} over a native segment. The caller keeps the segment alive until the MR is
     * deregistered. {@code access} is a set of {@link Access} bits.
     */
    MemoryRegion register(MemorySegment segment, int access);

    /**
     * Memory for buffers this PD's MRs will cover, owned by the PD (freed when it is destroyed,
     * after its MRs). Memory that a peer process may reach remotely must come from here: on the
     * simulated devices, which span the processes of a machine, it is a shared-memory file the
     * peer's simulated NIC maps (registering other memory for remote access is refused there); on
     * real devices it is plain aligned native memory.
     */
    MemorySegment allocate(long byteSize, long alignment);

    /** {@code ibv_create_qp} (or {@code efadv_create_qp_ex} for SRD). */
    QueuePair createQp(QpInitAttr attr);

    /** {@code ibv_create_srq}. */
    SharedReceiveQueue createSrq(int maxWr, int maxSge);

    /** {@code ibv_create_ah} towards a peer's address (UD and SRD). */
    AddressHandle createAh(QpAddress destination);

    /** {@code ibv_alloc_parent_domain} with this PD and {@code td}. */
    ProtectionDomain parentDomain(ThreadDomain td);

    /** {@code ibv_dealloc_pd}; refused with EBUSY, naming them, while MRs, QPs, SRQs or AHs live. Idempotent. */
    @Override
    void close();
}
