package dev.scalep.verbs;

/** Send work-request opcodes; {@link #code} is the {@code enum ibv_wr_opcode} value. */
public enum Opcode {
    RDMA_WRITE(0), RDMA_WRITE_WITH_IMM(1), SEND(2), SEND_WITH_IMM(3), RDMA_READ(4),
    /**
     * 64-bit compare-and-swap on an 8-byte aligned remote word ({@code wr.atomic}: remote address,
     * rkey, compare value, swap value); the word's original value lands in the one 8-byte local SGE.
     */
    ATOMIC_CMP_AND_SWP(5),
    /** 64-bit fetch-and-add on an 8-byte aligned remote word; the original value lands in the local SGE. */
    ATOMIC_FETCH_AND_ADD(6);

    /** The verbs ABI value. */
    public final int code;
    private static final Opcode[] BY_CODE = {RDMA_WRITE, RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM, RDMA_READ,
        ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD};

    Opcode(int code) {
        this.code = code;
    }

    /** The opcode for an ABI value, or {@code null} for one this model does not know. */
    public static Opcode of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /** Whether this opcode consumes a receive at the target (send, send-with-imm, write-with-imm). */
    public boolean consumesReceive() {
        return this == SEND || this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
    }

    /** Whether this opcode carries immediate data. */
    public boolean hasImmediate() {
        return this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
    }

    /**
     * Whether this opcode is an RDMA write or read (remote address and rkey in {@code wr.rdma}).
     * Atomics address remote memory too, through {@code wr.atomic}: see {@link #isAtomic}.
     */
    public boolean isRdma() {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM || this == RDMA_READ;
    }

    /** Whether this opcode is a remote atomic (remote address, rkey and operands in {@code wr.atomic}). */
    public boolean isAtomic() {
        return this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }

    /** Whether the responder returns data into the local SGEs (RDMA read and atomics): needs LOCAL_WRITE there. */
    public boolean writesLocal() {
        return this == RDMA_READ || isAtomic();
    }
}
