package dev.scalep.verbs.ffm;

/**
 * Constants of {@code infiniband/verbs.h} and {@code efadv.h} (rdma-core v44) that the raw layer uses
 * and the public enums ({@code Opcode}, {@code WcStatus}, {@code QpState}, ...) do not already carry.
 * The layout-conformance test checks each against the C preprocessor's value.
 */
public final class IbvConst {
    private IbvConst() {
    }

    public static final int IBV_QP_STATE = 1;
    public static final int IBV_QP_ACCESS_FLAGS = 8;
    public static final int IBV_QP_PKEY_INDEX = 16;
    public static final int IBV_QP_PORT = 32;
    public static final int IBV_QP_QKEY = 64;
    public static final int IBV_QP_AV = 128;
    public static final int IBV_QP_PATH_MTU = 256;
    public static final int IBV_QP_TIMEOUT = 512;
    public static final int IBV_QP_RETRY_CNT = 1024;
    public static final int IBV_QP_RNR_RETRY = 2048;
    public static final int IBV_QP_RQ_PSN = 4096;
    public static final int IBV_QP_MAX_QP_RD_ATOMIC = 8192;
    public static final int IBV_QP_MIN_RNR_TIMER = 32768;
    public static final int IBV_QP_SQ_PSN = 65536;
    public static final int IBV_QP_MAX_DEST_RD_ATOMIC = 131072;
    public static final int IBV_QP_DEST_QPN = 1048576;

    public static final int IBV_WR_ATOMIC_CMP_AND_SWP = 5;
    public static final int IBV_WR_ATOMIC_FETCH_AND_ADD = 6;
    /** {@code enum ibv_atomic_cap} ({@code ibv_device_attr.atomic_cap}). */
    public static final int IBV_ATOMIC_NONE = 0;
    public static final int IBV_ATOMIC_HCA = 1;
    public static final int IBV_ATOMIC_GLOB = 2;
    public static final int IBV_QPT_UC = 3;

    public static final int IBV_QP_INIT_ATTR_PD = 1;
    public static final int IBV_QP_INIT_ATTR_SEND_OPS_FLAGS = 64;
    public static final long IBV_QP_EX_WITH_RDMA_WRITE = 1;
    public static final long IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM = 2;
    public static final long IBV_QP_EX_WITH_SEND = 4;
    public static final long IBV_QP_EX_WITH_SEND_WITH_IMM = 8;
    public static final long IBV_QP_EX_WITH_RDMA_READ = 16;

    public static final int IBV_ACCESS_RELAXED_ORDERING = 1048576;

    public static final int IBV_CQ_ATTR_MODERATE = 1;
    public static final int IBV_CQ_INIT_ATTR_MASK_FLAGS = 1;
    public static final int IBV_CQ_INIT_ATTR_MASK_PD = 2;
    public static final int IBV_CREATE_CQ_ATTR_SINGLE_THREADED = 1;
    public static final long IBV_WC_EX_WITH_BYTE_LEN = 1;
    public static final long IBV_WC_EX_WITH_IMM = 2;
    public static final long IBV_WC_EX_WITH_QP_NUM = 4;
    public static final long IBV_WC_EX_WITH_SRC_QP = 8;
    public static final long IBV_WC_STANDARD_FLAGS = 127;

    public static final int IBV_LINK_LAYER_INFINIBAND = 1;
    public static final int IBV_LINK_LAYER_ETHERNET = 2;
    public static final int IBV_PORT_ACTIVE = 4;
    public static final int IBV_DEVICE_RC_RNR_NAK_GEN = 1 << 12;
    public static final int IBV_DEVICE_SRQ_RESIZE = 1 << 13;

    public static final int EFADV_QP_DRIVER_TYPE_SRD = 0;
    public static final int EFADV_DEVICE_ATTR_CAPS_RDMA_READ = 1;
    public static final int EFADV_DEVICE_ATTR_CAPS_RNR_RETRY = 2;
    public static final int EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID = 4;

    public static final int MLX5DV_UAR_ALLOC_TYPE_BF = 0;
    public static final int MLX5DV_UAR_ALLOC_TYPE_NC = 1;

    /** {@code __VERBS_ABI_IS_EXTENDED}: the {@code abi_compat} marker of a context with {@code verbs_context}. */
    public static final long VERBS_ABI_IS_EXTENDED = -1L;
}
