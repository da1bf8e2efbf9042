package dev.scalep.verbs.ffm;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Memory layouts of the libibverbs work-request and completion structs (rdma-core v44, x86_64,
 * {@code infiniband/verbs.h}). The provider-neutral work-request flyweights store their data in
 * exactly these layouts so that the {@code ibv} provider hands them to {@code ibv_post_send} /
 * {@code ibv_poll_cq} without copying, and the simulated device reads the same bytes.
 * Offsets are derived from the layouts by path, never typed by hand; the layout-conformance test
 * compares them with the C compiler's view of the installed headers. Members named {@code anon_*}
 * stand for C's anonymous unions: their members are top-level fields in C.
 */
public final class Structs {
    private Structs() {
    }

    /** {@code struct ibv_sge}. */
    public static final StructLayout IBV_SGE = MemoryLayout.structLayout(
            JAVA_LONG.withName("addr"),
            JAVA_INT.withName("length"),
            JAVA_INT.withName("lkey")).withName("ibv_sge");
    public static final long SGE_ADDR = off(IBV_SGE, "addr");
    public static final long SGE_LENGTH = off(IBV_SGE, "length");
    public static final long SGE_LKEY = off(IBV_SGE, "lkey");

    /** The {@code wr.rdma} arm of the union in {@code struct ibv_send_wr}. */
    private static final StructLayout RDMA = MemoryLayout.structLayout(
            JAVA_LONG.withName("remote_addr"), JAVA_INT.withName("rkey"), MemoryLayout.paddingLayout(4))
            .withName("rdma");
    /** The {@code wr.ud} arm. */
    private static final StructLayout UD = MemoryLayout.structLayout(
            ADDRESS.withName("ah"), JAVA_INT.withName("remote_qpn"), JAVA_INT.withName("remote_qkey"))
            .withName("ud");
    /** The {@code wr.atomic} arm. */
    private static final StructLayout ATOMIC = MemoryLayout.structLayout(
            JAVA_LONG.withName("remote_addr"), JAVA_LONG.withName("compare_add"),
            JAVA_LONG.withName("swap"), JAVA_INT.withName("rkey"), MemoryLayout.paddingLayout(4))
            .withName("atomic");

    /** The {@code bind_mw} arm of the trailing union: {@code mw}, {@code rkey}, {@code ibv_mw_bind_info}. */
    private static final StructLayout BIND_MW = MemoryLayout.structLayout(
            ADDRESS.withName("mw"), JAVA_INT.withName("rkey"), MemoryLayout.paddingLayout(4),
            MemoryLayout.structLayout(ADDRESS.withName("mr"), JAVA_LONG.withName("addr"), JAVA_LONG.withName("length"),
                    JAVA_INT.withName("mw_access_flags"), MemoryLayout.paddingLayout(4)).withName("bind_info"))
            .withName("bind_mw");
    /** The {@code tso} arm of the trailing union. */
    private static final StructLayout TSO = MemoryLayout.structLayout(
            ADDRESS.withName("hdr"), JAVA_SHORT.withName("hdr_sz"), JAVA_SHORT.withName("mss"),
            MemoryLayout.paddingLayout(4)).withName("tso");

    /** {@code struct ibv_send_wr} (128 bytes). */
    public static final StructLayout IBV_SEND_WR = MemoryLayout.structLayout(
            JAVA_LONG.withName("wr_id"),
            ADDRESS.withName("next"),
            ADDRESS.withName("sg_list"),
            JAVA_INT.withName("num_sge"),
            JAVA_INT.withName("opcode"),
            JAVA_INT.withName("send_flags"),
            MemoryLayout.unionLayout(JAVA_INT.withName("imm_data"), JAVA_INT.withName("invalidate_rkey"))
                    .withName("anon_imm"),
            MemoryLayout.unionLayout(RDMA, ATOMIC, UD).withName("wr"),
            MemoryLayout.unionLayout(MemoryLayout.structLayout(JAVA_INT.withName("remote_srqn")).withName("xrc"))
                    .withName("qp_type"),
            MemoryLayout.paddingLayout(4),
            MemoryLayout.unionLayout(BIND_MW, TSO).withName("anon_ext")).withName("ibv_send_wr");
    public static final long SEND_WR_ID = off(IBV_SEND_WR, "wr_id");
    public static final long SEND_NEXT = off(IBV_SEND_WR, "next");
    public static final long SEND_SG_LIST = off(IBV_SEND_WR, "sg_list");
    public static final long SEND_NUM_SGE = off(IBV_SEND_WR, "num_sge");
    public static final long SEND_OPCODE = off(IBV_SEND_WR, "opcode");
    public static final long SEND_FLAGS = off(IBV_SEND_WR, "send_flags");
    public static final long SEND_IMM = IBV_SEND_WR.byteOffset(groupElement("anon_imm"), groupElement("imm_data"));
    public static final long SEND_RDMA_REMOTE_ADDR = IBV_SEND_WR.byteOffset(
            groupElement("wr"), groupElement("rdma"), groupElement("remote_addr"));
    public static final long SEND_RDMA_RKEY = IBV_SEND_WR.byteOffset(
            groupElement("wr"), groupElement("rdma"), groupElement("rkey"));
    public static final long SEND_ATOMIC_REMOTE_ADDR = IBV_SEND_WR.byteOffset(
            groupElement("wr"), groupElement("atomic"), groupElement("remote_addr"));
    public static final long SEND_ATOMIC_COMPARE_ADD = IBV_SEND_WR.byteOffset(
            groupElement("wr"), groupElement("atomic"), groupElement("compare_add"));
    public static final long SEND_ATOMIC_SWAP = IBV_SEND_WR.byteOffset(
            groupElement("wr"), groupElement("atomic"), groupElement("swap"));
    public static final long SEND_ATOMIC_RKEY = IBV_SEND_WR.byteOffset(
            groupElement("wr"), groupElement("atomic"), groupElement("rkey"));
    public static final long SEND_UD_AH = IBV_SEND_WR.byteOffset(
            groupElement("wr"), groupElement("ud"), groupElement("ah"));
    public static final long SEND_UD_REMOTE_QPN = IBV_SEND_WR.byteOffset(
            groupElement("wr"), groupElement("ud"), groupElement("remote_qpn"));
    public static final long SEND_UD_REMOTE_QKEY = IBV_SEND_WR.byteOffset(
            groupElement("wr"), groupElement("ud"), groupElement("remote_qkey"));
    /** Start of the {@code bind_mw} area (48 bytes), which libibverbs never reads for RDMA or send opcodes. */
    public static final long SEND_BIND_MW = IBV_SEND_WR.byteOffset(groupElement("anon_ext"), groupElement("bind_mw"));
    /**
     * scalep-private fields inside the {@code bind_mw} area: the SRD destination (AH handle, remote
     * QPN, QKEY) of an RDMA work request, whose {@code wr} union already holds remote address and rkey.
     * The ibv provider turns them into {@code ibv_wr_set_ud_addr}; nothing else reads them.
     */
    public static final long SEND_SCALEP_SRD_AH = SEND_BIND_MW;
    public static final long SEND_SCALEP_SRD_QPN = SEND_BIND_MW + 8;
    public static final long SEND_SCALEP_SRD_QKEY = SEND_BIND_MW + 12;

    /** {@code struct ibv_recv_wr} (32 bytes). */
    public static final StructLayout IBV_RECV_WR = MemoryLayout.structLayout(
            JAVA_LONG.withName("wr_id"),
            ADDRESS.withName("next"),
            ADDRESS.withName("sg_list"),
            JAVA_INT.withName("num_sge"),
            MemoryLayout.paddingLayout(4)).withName("ibv_recv_wr");
    public static final long RECV_WR_ID = off(IBV_RECV_WR, "wr_id");
    public static final long RECV_NEXT = off(IBV_RECV_WR, "next");
    public static final long RECV_SG_LIST = off(IBV_RECV_WR, "sg_list");
    public static final long RECV_NUM_SGE = off(IBV_RECV_WR, "num_sge");

    /** {@code struct ibv_wc} (48 bytes). */
    public static final StructLayout IBV_WC = MemoryLayout.structLayout(
            JAVA_LONG.withName("wr_id"),
            JAVA_INT.withName("status"),
            JAVA_INT.withName("opcode"),
            JAVA_INT.withName("vendor_err"),
            JAVA_INT.withName("byte_len"),
            JAVA_INT.withName("imm_data"),
            JAVA_INT.withName("qp_num"),
            JAVA_INT.withName("src_qp"),
            JAVA_INT.withName("wc_flags"),
            JAVA_SHORT.withName("pkey_index"),
            JAVA_SHORT.withName("slid"),
            JAVA_BYTE.withName("sl"),
            JAVA_BYTE.withName("dlid_path_bits"),
            MemoryLayout.paddingLayout(2)).withName("ibv_wc");
    public static final long WC_WR_ID = off(IBV_WC, "wr_id");
    public static final long WC_STATUS = off(IBV_WC, "status");
    public static final long WC_OPCODE = off(IBV_WC, "opcode");
    public static final long WC_VENDOR_ERR = off(IBV_WC, "vendor_err");
    public static final long WC_BYTE_LEN = off(IBV_WC, "byte_len");
    public static final long WC_IMM = off(IBV_WC, "imm_data");
    public static final long WC_QP_NUM = off(IBV_WC, "qp_num");
    public static final long WC_SRC_QP = off(IBV_WC, "src_qp");
    public static final long WC_FLAGS = off(IBV_WC, "wc_flags");

    /** {@code IBV_WC_WITH_IMM} in {@code wc_flags}. */
    public static final int IBV_WC_WITH_IMM = 1 << 1;

    static long off(StructLayout layout, String field) {
        return layout.byteOffset(groupElement(field));
    }
}
