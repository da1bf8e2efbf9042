package dev.scalep.verbs;

/** Send work-request opcodes; {@link #code} is the {@code enum ibv_wr_opcode} value. */
public enum Opcode {
    RDMA_WRITE(0), RDMA_WRITE_WITH_IMM(1), SEND(2), SEND_WITH_IMM(3), RDMA_READ(4);

    /** The verbs ABI value. */
    public final int code;
    private static final Opcode[] BY_CODE = {RDMA_WRITE, RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM, RDMA_READ};

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

    /** Whether this opcode addresses remote memory (needs remote address and rkey). */
    public boolean isRdma() {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM || this == RDMA_READ;
    }
}
