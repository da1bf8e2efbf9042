package dev.scalep.verbs;

/**
 * Host memory the mlx5 driver allocates per verbs object, as the research measured it for one
 * endpoint at default depths: CTX 256 KiB, PD 144 B, MR 144 B, QP 80 KiB, CQ 9 KiB. The reference
 * depths are the runtime's defaults: a QP of {@value #REF_QP_WRS} send plus {@value #REF_QP_WRS}
 * receive work requests (512 WRs, so 160 B per WR) and a CQ of {@value #REF_CQES} entries (36 B per
 * CQE); QPs and CQs scale linearly with depth, an SRQ costs {@value #SRQ_BYTES_PER_WR} B per WR, TDs
 * and address handles nothing. Both providers (simulated and real) report with this one model, so a
 * report compares like with like whatever the device.
 */
public final class MemoryModel {
    public static final long CTX_BYTES = 256 * 1024;
    public static final long PD_BYTES = 144;
    public static final long MR_BYTES = 144;
    public static final int REF_QP_WRS = 256;
    public static final int REF_CQES = 256;
    public static final long QP_BYTES_PER_WR = 80 * 1024 / (2 * REF_QP_WRS);
    public static final long CQ_BYTES_PER_CQE = 9 * 1024 / REF_CQES;
    public static final long SRQ_BYTES_PER_WR = 64;

    private MemoryModel() {
    }

    /** A QP with {@code sendWr} send and {@code recvWr} receive work requests. */
    public static long qpBytes(int sendWr, int recvWr) {
        return QP_BYTES_PER_WR * ((long) sendWr + recvWr);
    }

    /** A CQ of {@code cqe} entries. */
    public static long cqBytes(int cqe) {
        return CQ_BYTES_PER_CQE * cqe;
    }

    /** An SRQ of {@code wr} work requests. */
    public static long srqBytes(int wr) {
        return SRQ_BYTES_PER_WR * wr;
    }
}
