package dev.scalep.verbs;

/** Completion opcodes ({@code enum ibv_wc_opcode}). */
public final class WcOpcode {
    private WcOpcode() {
    }

    public static final int SEND = 0;
    public static final int RDMA_WRITE = 1;
    public static final int RDMA_READ = 2;
    /** A completed {@link Opcode#ATOMIC_CMP_AND_SWP}. */
    public static final int COMP_SWAP = 3;
    /** A completed {@link Opcode#ATOMIC_FETCH_AND_ADD}. */
    public static final int FETCH_ADD = 4;
    /** Receive completions: this value, and the bit every receive opcode has set ({@link #isReceive}). */
    public static final int RECV = 128;
    public static final int RECV_RDMA_WITH_IMM = 129;

    /** Whether a completion opcode is a receive side's ({@code IBV_WC_RECV} bit set). */
    public static boolean isReceive(int opcode) {
        return (opcode & RECV) != 0;
    }

    /** The completion opcode the requester sees for a send opcode. */
    public static int forRequester(Opcode op) {
        return switch (op) {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> RDMA_WRITE;
            case SEND, SEND_WITH_IMM -> SEND;
            case RDMA_READ -> RDMA_READ;
            case ATOMIC_CMP_AND_SWP -> COMP_SWAP;
            case ATOMIC_FETCH_AND_ADD -> FETCH_ADD;
        };
    }
}
