package dev.scalep.verbs;

import java.lang.foreign.MemorySegment;

/** A registered memory region: native memory the device may read and write under lkey/rkey. */
public interface MemoryRegion extends AutoCloseable {
    ProtectionDomain pd();

    /** The registered memory. */
    MemorySegment segment();

    /** Virtual address of the first byte (what SGEs and remote addresses use). */
    long address();

    long length();

    int lkey();

    int rkey();

    /** {@link Access} bits. */
    int access();

    /** {@code ibv_dereg_mr}. Throws {@link ClosedException} (no native call) when already deregistered. */
    void deregister();

    /** Deregister if still registered. Idempotent. */
    @Override
    void close();
}
