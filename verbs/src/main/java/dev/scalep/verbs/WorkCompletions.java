package dev.scalep.verbs;

import dev.scalep.verbs.ffm.Structs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * A reusable, allocation-free batch of completions in the native {@code struct ibv_wc} layout:
 * {@link CompletionQueue#poll(WorkCompletions, int)} fills entries {@code 0..n-1}; readers index
 * them. On an error status only {@code wrId}, {@code status}, {@code qpNum} and {@code vendorErr}
 * are valid ({@code ibv_poll_cq(3)}). Not thread-safe.
 */
public final class WorkCompletions implements AutoCloseable {
    private static final long WC = Structs.IBV_WC.byteSize();

    private final Arena arena;
    private final MemorySegment wcs;
    private final int capacity;

    public WorkCompletions(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
        }
        this.capacity = capacity;
        this.arena = Arena.ofShared();
        this.wcs = arena.allocate(WC * capacity, 64);
    }

    public int capacity() {
        return capacity;
    }

    public long wrId(int i) {
        return wcs.get(JAVA_LONG_UNALIGNED, WC * i + Structs.WC_WR_ID);
    }

    /** A {@link WcStatus} value. */
    public int status(int i) {
        return wcs.get(JAVA_INT_UNALIGNED, WC * i + Structs.WC_STATUS);
    }

    /** A {@link WcOpcode} value. */
    public int opcode(int i) {
        return wcs.get(JAVA_INT_UNALIGNED, WC * i + Structs.WC_OPCODE);
    }

    public int vendorErr(int i) {
        return wcs.get(JAVA_INT_UNALIGNED, WC * i + Structs.WC_VENDOR_ERR);
    }

    public int byteLen(int i) {
        return wcs.get(JAVA_INT_UNALIGNED, WC * i + Structs.WC_BYTE_LEN);
    }

    /** Immediate data in host order; valid when {@link #hasImm(int)}. */
    public int imm(int i) {
        return Integer.reverseBytes(wcs.get(JAVA_INT_UNALIGNED, WC * i + Structs.WC_IMM));
    }

    public boolean hasImm(int i) {
        return (wcs.get(JAVA_INT_UNALIGNED, WC * i + Structs.WC_FLAGS) & Structs.IBV_WC_WITH_IMM) != 0;
    }

    public int qpNum(int i) {
        return wcs.get(JAVA_INT_UNALIGNED, WC * i + Structs.WC_QP_NUM);
    }

    public int srcQp(int i) {
        return wcs.get(JAVA_INT_UNALIGNED, WC * i + Structs.WC_SRC_QP);
    }

    /**
     * Write entry {@code i} (for providers that do not poll into this memory directly).
     * {@code imm} is in host order.
     */
    public void put(int i, long wrId, int status, int opcode, int byteLen, int imm, boolean withImm,
                    int qpNum, int srcQp) {
        long b = WC * i;
        wcs.set(JAVA_LONG_UNALIGNED, b + Structs.WC_WR_ID, wrId);
        wcs.set(JAVA_INT_UNALIGNED, b + Structs.WC_STATUS, status);
        wcs.set(JAVA_INT_UNALIGNED, b + Structs.WC_OPCODE, opcode);
        wcs.set(JAVA_INT_UNALIGNED, b + Structs.WC_VENDOR_ERR, 0);
        wcs.set(JAVA_INT_UNALIGNED, b + Structs.WC_BYTE_LEN, byteLen);
        wcs.set(JAVA_INT_UNALIGNED, b + Structs.WC_IMM, Integer.reverseBytes(imm));
        wcs.set(JAVA_INT_UNALIGNED, b + Structs.WC_QP_NUM, qpNum);
        wcs.set(JAVA_INT_UNALIGNED, b + Structs.WC_SRC_QP, srcQp);
        wcs.set(JAVA_INT_UNALIGNED, b + Structs.WC_FLAGS, withImm ? Structs.IBV_WC_WITH_IMM : 0);
    }

    /** The native array of {@code capacity} {@code struct ibv_wc}. */
    public MemorySegment segment() {
        return wcs;
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
