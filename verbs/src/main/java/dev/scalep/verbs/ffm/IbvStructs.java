package dev.scalep.verbs.ffm;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.sequenceLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Memory layouts of the control-path structs of libibverbs, {@code efadv.h} and {@code mlx5dv.h}
 * (rdma-core v44, x86_64), one constant per struct; the work-request and completion structs live in
 * {@link Structs}. Fields the runtime never touches are padding, but every struct has its C size and
 * alignment, and every named field its C offset: the layout-conformance test compiles the installed
 * headers and compares each of them. Offsets are derived from the layouts by path.
 */
public final class IbvStructs {
    private IbvStructs() {
    }

    private static final MemoryLayout U8 = JAVA_BYTE;
    private static final MemoryLayout U16 = JAVA_SHORT;
    private static final MemoryLayout U32 = JAVA_INT;
    private static final MemoryLayout U64 = JAVA_LONG;
    private static final MemoryLayout PTR = ADDRESS;
    /** {@code pthread_mutex_t} on x86_64 glibc: 40 bytes, 8-aligned. */
    private static MemoryLayout mutex(String name) {
        return structLayout(sequenceLayout(5, U64)).withName(name);
    }
    /** {@code pthread_cond_t} on x86_64 glibc: 48 bytes, 8-aligned. */
    private static MemoryLayout cond(String name) {
        return structLayout(sequenceLayout(6, U64)).withName(name);
    }

    /** {@code union ibv_gid}: 16 bytes, 8-aligned. */
    public static final StructLayout IBV_GID = structLayout(
            U64.withName("subnet_prefix"), U64.withName("interface_id")).withName("ibv_gid");

    /** {@code struct ibv_gid_entry} ({@code ibv_query_gid_ex}). */
    public static final StructLayout IBV_GID_ENTRY = structLayout(
            IBV_GID.withName("gid"), U32.withName("gid_index"), U32.withName("port_num"), U32.withName("gid_type"),
            U32.withName("ndev_ifindex")).withName("ibv_gid_entry");
    public static final long GE_GID_TYPE = off(IBV_GID_ENTRY, "gid_type");

    /** {@code struct ibv_qp_cap}. */
    public static final StructLayout IBV_QP_CAP = structLayout(
            U32.withName("max_send_wr"), U32.withName("max_recv_wr"), U32.withName("max_send_sge"),
            U32.withName("max_recv_sge"), U32.withName("max_inline_data")).withName("ibv_qp_cap");
    public static final long CAP_MAX_SEND_WR = off(IBV_QP_CAP, "max_send_wr");
    public static final long CAP_MAX_RECV_WR = off(IBV_QP_CAP, "max_recv_wr");
    public static final long CAP_MAX_SEND_SGE = off(IBV_QP_CAP, "max_send_sge");
    public static final long CAP_MAX_RECV_SGE = off(IBV_QP_CAP, "max_recv_sge");
    public static final long CAP_MAX_INLINE = off(IBV_QP_CAP, "max_inline_data");

    /** {@code struct ibv_qp_init_attr}. */
    public static final StructLayout IBV_QP_INIT_ATTR = structLayout(
            PTR.withName("qp_context"), PTR.withName("send_cq"), PTR.withName("recv_cq"), PTR.withName("srq"),
            IBV_QP_CAP.withName("cap"), U32.withName("qp_type"), U32.withName("sq_sig_all"), paddingLayout(4))
            .withName("ibv_qp_init_attr");
    public static final long QPIA_SEND_CQ = off(IBV_QP_INIT_ATTR, "send_cq");
    public static final long QPIA_RECV_CQ = off(IBV_QP_INIT_ATTR, "recv_cq");
    public static final long QPIA_SRQ = off(IBV_QP_INIT_ATTR, "srq");
    public static final long QPIA_CAP = off(IBV_QP_INIT_ATTR, "cap");
    public static final long QPIA_QP_TYPE = off(IBV_QP_INIT_ATTR, "qp_type");
    public static final long QPIA_SQ_SIG_ALL = off(IBV_QP_INIT_ATTR, "sq_sig_all");

    /** {@code struct ibv_rx_hash_conf}. */
    private static final StructLayout IBV_RX_HASH_CONF = structLayout(
            U8.withName("rx_hash_function"), U8.withName("rx_hash_key_len"), paddingLayout(6),
            PTR.withName("rx_hash_key"), U64.withName("rx_hash_fields_mask")).withName("ibv_rx_hash_conf");

    /** {@code struct ibv_qp_init_attr_ex}: the first 64 bytes are {@code ibv_qp_init_attr}'s. */
    public static final StructLayout IBV_QP_INIT_ATTR_EX = structLayout(
            PTR.withName("qp_context"), PTR.withName("send_cq"), PTR.withName("recv_cq"), PTR.withName("srq"),
            IBV_QP_CAP.withName("cap"), U32.withName("qp_type"), U32.withName("sq_sig_all"),
            U32.withName("comp_mask"), PTR.withName("pd"), PTR.withName("xrcd"), U32.withName("create_flags"),
            U16.withName("max_tso_header"), paddingLayout(2), PTR.withName("rwq_ind_tbl"),
            IBV_RX_HASH_CONF.withName("rx_hash_conf"), U32.withName("source_qpn"), paddingLayout(4),
            U64.withName("send_ops_flags")).withName("ibv_qp_init_attr_ex");
    public static final long QPIAX_SEND_CQ = off(IBV_QP_INIT_ATTR_EX, "send_cq");
    public static final long QPIAX_RECV_CQ = off(IBV_QP_INIT_ATTR_EX, "recv_cq");
    public static final long QPIAX_SRQ = off(IBV_QP_INIT_ATTR_EX, "srq");
    public static final long QPIAX_CAP = off(IBV_QP_INIT_ATTR_EX, "cap");
    public static final long QPIAX_QP_TYPE = off(IBV_QP_INIT_ATTR_EX, "qp_type");
    public static final long QPIAX_SQ_SIG_ALL = off(IBV_QP_INIT_ATTR_EX, "sq_sig_all");
    public static final long QPIAX_COMP_MASK = off(IBV_QP_INIT_ATTR_EX, "comp_mask");
    public static final long QPIAX_PD = off(IBV_QP_INIT_ATTR_EX, "pd");
    public static final long QPIAX_SEND_OPS_FLAGS = off(IBV_QP_INIT_ATTR_EX, "send_ops_flags");

    /** {@code struct ibv_global_route}. */
    public static final StructLayout IBV_GLOBAL_ROUTE = structLayout(
            IBV_GID.withName("dgid"), U32.withName("flow_label"), U8.withName("sgid_index"),
            U8.withName("hop_limit"), U8.withName("traffic_class"), paddingLayout(1)).withName("ibv_global_route");

    /** {@code struct ibv_ah_attr}. */
    public static final StructLayout IBV_AH_ATTR = structLayout(
            IBV_GLOBAL_ROUTE.withName("grh"), U16.withName("dlid"), U8.withName("sl"), U8.withName("src_path_bits"),
            U8.withName("static_rate"), U8.withName("is_global"), U8.withName("port_num"), paddingLayout(1))
            .withName("ibv_ah_attr");
    public static final long AH_GRH_DGID = IBV_AH_ATTR.byteOffset(groupElement("grh"), groupElement("dgid"));
    public static final long AH_GRH_SGID_INDEX = IBV_AH_ATTR.byteOffset(groupElement("grh"), groupElement("sgid_index"));
    public static final long AH_GRH_TRAFFIC_CLASS = IBV_AH_ATTR.byteOffset(groupElement("grh"), groupElement("traffic_class"));
    public static final long AH_GRH_HOP_LIMIT = IBV_AH_ATTR.byteOffset(groupElement("grh"), groupElement("hop_limit"));
    public static final long AH_DLID = off(IBV_AH_ATTR, "dlid");
    public static final long AH_SL = off(IBV_AH_ATTR, "sl");
    public static final long AH_IS_GLOBAL = off(IBV_AH_ATTR, "is_global");
    public static final long AH_PORT_NUM = off(IBV_AH_ATTR, "port_num");

    /** {@code struct ibv_qp_attr}. */
    public static final StructLayout IBV_QP_ATTR = structLayout(
            U32.withName("qp_state"), U32.withName("cur_qp_state"), U32.withName("path_mtu"),
            U32.withName("path_mig_state"), U32.withName("qkey"), U32.withName("rq_psn"), U32.withName("sq_psn"),
            U32.withName("dest_qp_num"), U32.withName("qp_access_flags"), IBV_QP_CAP.withName("cap"),
            IBV_AH_ATTR.withName("ah_attr"), IBV_AH_ATTR.withName("alt_ah_attr"), U16.withName("pkey_index"),
            U16.withName("alt_pkey_index"), U8.withName("en_sqd_async_notify"), U8.withName("sq_draining"),
            U8.withName("max_rd_atomic"), U8.withName("max_dest_rd_atomic"), U8.withName("min_rnr_timer"),
            U8.withName("port_num"), U8.withName("timeout"), U8.withName("retry_cnt"), U8.withName("rnr_retry"),
            U8.withName("alt_port_num"), U8.withName("alt_timeout"), paddingLayout(1), U32.withName("rate_limit"),
            paddingLayout(4)).withName("ibv_qp_attr");
    public static final long QPA_STATE = off(IBV_QP_ATTR, "qp_state");
    public static final long QPA_PATH_MTU = off(IBV_QP_ATTR, "path_mtu");
    public static final long QPA_QKEY = off(IBV_QP_ATTR, "qkey");
    public static final long QPA_RQ_PSN = off(IBV_QP_ATTR, "rq_psn");
    public static final long QPA_SQ_PSN = off(IBV_QP_ATTR, "sq_psn");
    public static final long QPA_DEST_QP_NUM = off(IBV_QP_ATTR, "dest_qp_num");
    public static final long QPA_ACCESS_FLAGS = off(IBV_QP_ATTR, "qp_access_flags");
    public static final long QPA_CAP = off(IBV_QP_ATTR, "cap");
    public static final long QPA_AH_ATTR = off(IBV_QP_ATTR, "ah_attr");
    public static final long QPA_PKEY_INDEX = off(IBV_QP_ATTR, "pkey_index");
    public static final long QPA_MAX_RD_ATOMIC = off(IBV_QP_ATTR, "max_rd_atomic");
    public static final long QPA_MAX_DEST_RD_ATOMIC = off(IBV_QP_ATTR, "max_dest_rd_atomic");
    public static final long QPA_MIN_RNR_TIMER = off(IBV_QP_ATTR, "min_rnr_timer");
    public static final long QPA_PORT_NUM = off(IBV_QP_ATTR, "port_num");
    public static final long QPA_TIMEOUT = off(IBV_QP_ATTR, "timeout");
    public static final long QPA_RETRY_CNT = off(IBV_QP_ATTR, "retry_cnt");
    public static final long QPA_RNR_RETRY = off(IBV_QP_ATTR, "rnr_retry");

    /** {@code struct ibv_cq_init_attr_ex}. */
    public static final StructLayout IBV_CQ_INIT_ATTR_EX = structLayout(
            U32.withName("cqe"), paddingLayout(4), PTR.withName("cq_context"), PTR.withName("channel"),
            U32.withName("comp_vector"), paddingLayout(4), U64.withName("wc_flags"), U32.withName("comp_mask"),
            U32.withName("flags"), PTR.withName("parent_domain")).withName("ibv_cq_init_attr_ex");
    public static final long CQIA_CQE = off(IBV_CQ_INIT_ATTR_EX, "cqe");
    public static final long CQIA_CHANNEL = off(IBV_CQ_INIT_ATTR_EX, "channel");
    public static final long CQIA_COMP_VECTOR = off(IBV_CQ_INIT_ATTR_EX, "comp_vector");
    public static final long CQIA_WC_FLAGS = off(IBV_CQ_INIT_ATTR_EX, "wc_flags");
    public static final long CQIA_COMP_MASK = off(IBV_CQ_INIT_ATTR_EX, "comp_mask");
    public static final long CQIA_FLAGS = off(IBV_CQ_INIT_ATTR_EX, "flags");
    public static final long CQIA_PARENT_DOMAIN = off(IBV_CQ_INIT_ATTR_EX, "parent_domain");

    /** {@code struct ibv_td_init_attr}. */
    public static final StructLayout IBV_TD_INIT_ATTR = structLayout(U32.withName("comp_mask"))
            .withName("ibv_td_init_attr");
    /** {@code struct ibv_td}. */
    public static final StructLayout IBV_TD = structLayout(PTR.withName("context")).withName("ibv_td");

    /** {@code struct ibv_parent_domain_init_attr}. */
    public static final StructLayout IBV_PARENT_DOMAIN_INIT_ATTR = structLayout(
            PTR.withName("pd"), PTR.withName("td"), U32.withName("comp_mask"), paddingLayout(4),
            PTR.withName("alloc"), PTR.withName("free"), PTR.withName("pd_context"))
            .withName("ibv_parent_domain_init_attr");
    public static final long PDIA_PD = off(IBV_PARENT_DOMAIN_INIT_ATTR, "pd");
    public static final long PDIA_TD = off(IBV_PARENT_DOMAIN_INIT_ATTR, "td");

    /** {@code struct ibv_device_attr}. */
    public static final StructLayout IBV_DEVICE_ATTR = structLayout(
            sequenceLayout(64, U8).withName("fw_ver"), U64.withName("node_guid"), U64.withName("sys_image_guid"),
            U64.withName("max_mr_size"), U64.withName("page_size_cap"), U32.withName("vendor_id"),
            U32.withName("vendor_part_id"), U32.withName("hw_ver"), U32.withName("max_qp"),
            U32.withName("max_qp_wr"), U32.withName("device_cap_flags"), U32.withName("max_sge"),
            U32.withName("max_sge_rd"), U32.withName("max_cq"), U32.withName("max_cqe"), U32.withName("max_mr"),
            U32.withName("max_pd"), U32.withName("max_qp_rd_atom"), U32.withName("max_ee_rd_atom"),
            U32.withName("max_res_rd_atom"), U32.withName("max_qp_init_rd_atom"),
            U32.withName("max_ee_init_rd_atom"), U32.withName("atomic_cap"), U32.withName("max_ee"),
            U32.withName("max_rdd"), U32.withName("max_mw"), U32.withName("max_raw_ipv6_qp"),
            U32.withName("max_raw_ethy_qp"), U32.withName("max_mcast_grp"), U32.withName("max_mcast_qp_attach"),
            U32.withName("max_total_mcast_qp_attach"), U32.withName("max_ah"), U32.withName("max_fmr"),
            U32.withName("max_map_per_fmr"), U32.withName("max_srq"), U32.withName("max_srq_wr"),
            U32.withName("max_srq_sge"), U16.withName("max_pkeys"), U8.withName("local_ca_ack_delay"),
            U8.withName("phys_port_cnt"), paddingLayout(4)).withName("ibv_device_attr");
    public static final long DA_FW_VER = off(IBV_DEVICE_ATTR, "fw_ver");
    public static final long DA_NODE_GUID = off(IBV_DEVICE_ATTR, "node_guid");
    public static final long DA_MAX_MR_SIZE = off(IBV_DEVICE_ATTR, "max_mr_size");
    public static final long DA_VENDOR_ID = off(IBV_DEVICE_ATTR, "vendor_id");
    public static final long DA_VENDOR_PART_ID = off(IBV_DEVICE_ATTR, "vendor_part_id");
    public static final long DA_MAX_QP = off(IBV_DEVICE_ATTR, "max_qp");
    public static final long DA_MAX_QP_WR = off(IBV_DEVICE_ATTR, "max_qp_wr");
    public static final long DA_DEVICE_CAP_FLAGS = off(IBV_DEVICE_ATTR, "device_cap_flags");
    public static final long DA_MAX_SGE = off(IBV_DEVICE_ATTR, "max_sge");
    public static final long DA_MAX_SGE_RD = off(IBV_DEVICE_ATTR, "max_sge_rd");
    public static final long DA_MAX_CQ = off(IBV_DEVICE_ATTR, "max_cq");
    public static final long DA_MAX_CQE = off(IBV_DEVICE_ATTR, "max_cqe");
    public static final long DA_MAX_MR = off(IBV_DEVICE_ATTR, "max_mr");
    public static final long DA_MAX_PD = off(IBV_DEVICE_ATTR, "max_pd");
    public static final long DA_MAX_QP_RD_ATOM = off(IBV_DEVICE_ATTR, "max_qp_rd_atom");
    public static final long DA_MAX_QP_INIT_RD_ATOM = off(IBV_DEVICE_ATTR, "max_qp_init_rd_atom");
    public static final long DA_ATOMIC_CAP = off(IBV_DEVICE_ATTR, "atomic_cap");
    public static final long DA_MAX_SRQ = off(IBV_DEVICE_ATTR, "max_srq");
    public static final long DA_MAX_SRQ_WR = off(IBV_DEVICE_ATTR, "max_srq_wr");
    public static final long DA_MAX_SRQ_SGE = off(IBV_DEVICE_ATTR, "max_srq_sge");
    public static final long DA_PHYS_PORT_CNT = off(IBV_DEVICE_ATTR, "phys_port_cnt");

    /** {@code struct ibv_odp_caps}. */
    private static final StructLayout IBV_ODP_CAPS = structLayout(
            U64.withName("general_caps"),
            structLayout(U32.withName("rc_odp_caps"), U32.withName("uc_odp_caps"), U32.withName("ud_odp_caps"))
                    .withName("per_transport_caps"), paddingLayout(4)).withName("ibv_odp_caps");

    /** {@code struct ibv_device_attr_ex} up to {@code device_cap_flags_ex}; the rest is padding. */
    public static final StructLayout IBV_DEVICE_ATTR_EX = structLayout(
            IBV_DEVICE_ATTR.withName("orig_attr"), U32.withName("comp_mask"), paddingLayout(4),
            IBV_ODP_CAPS.withName("odp_caps"), U64.withName("completion_timestamp_mask"),
            U64.withName("hca_core_clock"), U64.withName("device_cap_flags_ex"), paddingLayout(112))
            .withName("ibv_device_attr_ex");
    public static final long DAX_DEVICE_CAP_FLAGS_EX = off(IBV_DEVICE_ATTR_EX, "device_cap_flags_ex");

    /** {@code struct ibv_port_attr}. */
    public static final StructLayout IBV_PORT_ATTR = structLayout(
            U32.withName("state"), U32.withName("max_mtu"), U32.withName("active_mtu"), U32.withName("gid_tbl_len"),
            U32.withName("port_cap_flags"), U32.withName("max_msg_sz"), U32.withName("bad_pkey_cntr"),
            U32.withName("qkey_viol_cntr"), U16.withName("pkey_tbl_len"), U16.withName("lid"),
            U16.withName("sm_lid"), U8.withName("lmc"), U8.withName("max_vl_num"), U8.withName("sm_sl"),
            U8.withName("subnet_timeout"), U8.withName("init_type_reply"), U8.withName("active_width"),
            U8.withName("active_speed"), U8.withName("phys_state"), U8.withName("link_layer"), U8.withName("flags"),
            U16.withName("port_cap_flags2"), paddingLayout(2)).withName("ibv_port_attr");
    public static final long PA_STATE = off(IBV_PORT_ATTR, "state");
    public static final long PA_MAX_MTU = off(IBV_PORT_ATTR, "max_mtu");
    public static final long PA_ACTIVE_MTU = off(IBV_PORT_ATTR, "active_mtu");
    public static final long PA_GID_TBL_LEN = off(IBV_PORT_ATTR, "gid_tbl_len");
    public static final long PA_LID = off(IBV_PORT_ATTR, "lid");
    public static final long PA_LINK_LAYER = off(IBV_PORT_ATTR, "link_layer");

    /** {@code struct ibv_mr}. */
    public static final StructLayout IBV_MR = structLayout(
            PTR.withName("context"), PTR.withName("pd"), PTR.withName("addr"), U64.withName("length"),
            U32.withName("handle"), U32.withName("lkey"), U32.withName("rkey"), paddingLayout(4)).withName("ibv_mr");
    public static final long MR_LKEY = off(IBV_MR, "lkey");
    public static final long MR_RKEY = off(IBV_MR, "rkey");

    /** {@code struct ibv_pd}. */
    public static final StructLayout IBV_PD = structLayout(
            PTR.withName("context"), U32.withName("handle"), paddingLayout(4)).withName("ibv_pd");

    /** {@code struct ibv_cq}. */
    public static final StructLayout IBV_CQ = structLayout(
            PTR.withName("context"), PTR.withName("channel"), PTR.withName("cq_context"), U32.withName("handle"),
            U32.withName("cqe"), mutex("mutex"), cond("cond"), U32.withName("comp_events_completed"),
            U32.withName("async_events_completed")).withName("ibv_cq");
    public static final long CQ_CONTEXT = off(IBV_CQ, "context");
    public static final long CQ_CQE = off(IBV_CQ, "cqe");

    /** {@code struct ibv_srq}. */
    public static final StructLayout IBV_SRQ = structLayout(
            PTR.withName("context"), PTR.withName("srq_context"), PTR.withName("pd"), U32.withName("handle"),
            paddingLayout(4), mutex("mutex"), cond("cond"), U32.withName("events_completed"), paddingLayout(4))
            .withName("ibv_srq");
    public static final long SRQ_CONTEXT = off(IBV_SRQ, "context");

    /** {@code struct ibv_srq_attr}. */
    public static final StructLayout IBV_SRQ_ATTR = structLayout(
            U32.withName("max_wr"), U32.withName("max_sge"), U32.withName("srq_limit")).withName("ibv_srq_attr");
    /** {@code struct ibv_srq_init_attr}. */
    public static final StructLayout IBV_SRQ_INIT_ATTR = structLayout(
            PTR.withName("srq_context"), IBV_SRQ_ATTR.withName("attr"), paddingLayout(4))
            .withName("ibv_srq_init_attr");
    public static final long SRQIA_MAX_WR = IBV_SRQ_INIT_ATTR.byteOffset(groupElement("attr"), groupElement("max_wr"));
    public static final long SRQIA_MAX_SGE = IBV_SRQ_INIT_ATTR.byteOffset(groupElement("attr"), groupElement("max_sge"));

    /** {@code struct ibv_comp_channel}. */
    public static final StructLayout IBV_COMP_CHANNEL = structLayout(
            PTR.withName("context"), U32.withName("fd"), U32.withName("refcnt")).withName("ibv_comp_channel");
    public static final long CHANNEL_FD = off(IBV_COMP_CHANNEL, "fd");

    /** {@code struct ibv_ah}. */
    public static final StructLayout IBV_AH = structLayout(
            PTR.withName("context"), PTR.withName("pd"), U32.withName("handle"), paddingLayout(4)).withName("ibv_ah");

    /** {@code struct ibv_qp}. */
    public static final StructLayout IBV_QP = structLayout(
            PTR.withName("context"), PTR.withName("qp_context"), PTR.withName("pd"), PTR.withName("send_cq"),
            PTR.withName("recv_cq"), PTR.withName("srq"), U32.withName("handle"), U32.withName("qp_num"),
            U32.withName("state"), U32.withName("qp_type"), mutex("mutex"), cond("cond"),
            U32.withName("events_completed"), paddingLayout(4)).withName("ibv_qp");
    public static final long QP_CONTEXT = off(IBV_QP, "context");
    public static final long QP_NUM = off(IBV_QP, "qp_num");
    public static final long QP_STATE = off(IBV_QP, "state");

    private static final String[] CONTEXT_OPS = {
            "_compat_query_device", "_compat_query_port", "_compat_alloc_pd", "_compat_dealloc_pd",
            "_compat_reg_mr", "_compat_rereg_mr", "_compat_dereg_mr", "alloc_mw", "bind_mw", "dealloc_mw",
            "_compat_create_cq", "poll_cq", "req_notify_cq", "_compat_cq_event", "_compat_resize_cq",
            "_compat_destroy_cq", "_compat_create_srq", "_compat_modify_srq", "_compat_query_srq",
            "_compat_destroy_srq", "post_srq_recv", "_compat_create_qp", "_compat_query_qp", "_compat_modify_qp",
            "_compat_destroy_qp", "post_send", "post_recv", "_compat_create_ah", "_compat_destroy_ah",
            "_compat_attach_mcast", "_compat_detach_mcast", "_compat_async_event"};

    /** {@code struct ibv_context_ops}: 32 function pointers. */
    public static final StructLayout IBV_CONTEXT_OPS = pointers("ibv_context_ops", CONTEXT_OPS);

    /** {@code struct ibv_context}. */
    public static final StructLayout IBV_CONTEXT = structLayout(
            PTR.withName("device"), IBV_CONTEXT_OPS.withName("ops"), U32.withName("cmd_fd"),
            U32.withName("async_fd"), U32.withName("num_comp_vectors"), paddingLayout(4), mutex("mutex"),
            PTR.withName("abi_compat")).withName("ibv_context");
    public static final long CTX_DEVICE = off(IBV_CONTEXT, "device");
    public static final long CTX_POLL_CQ = IBV_CONTEXT.byteOffset(groupElement("ops"), groupElement("poll_cq"));
    public static final long CTX_REQ_NOTIFY_CQ = IBV_CONTEXT.byteOffset(groupElement("ops"), groupElement("req_notify_cq"));
    public static final long CTX_POST_SRQ_RECV = IBV_CONTEXT.byteOffset(groupElement("ops"), groupElement("post_srq_recv"));
    public static final long CTX_POST_SEND = IBV_CONTEXT.byteOffset(groupElement("ops"), groupElement("post_send"));
    public static final long CTX_POST_RECV = IBV_CONTEXT.byteOffset(groupElement("ops"), groupElement("post_recv"));
    public static final long CTX_NUM_COMP_VECTORS = off(IBV_CONTEXT, "num_comp_vectors");
    public static final long CTX_ABI_COMPAT = off(IBV_CONTEXT, "abi_compat");

    public static final long CTX_ASYNC_FD = off(IBV_CONTEXT, "async_fd");

    /** {@code struct ibv_async_event}: a union {@code element} {cq, qp, srq, wq, port_num} and {@code event_type}. */
    public static final StructLayout IBV_ASYNC_EVENT = structLayout(
            MemoryLayout.unionLayout(PTR.withName("cq"), PTR.withName("qp"), PTR.withName("srq"), PTR.withName("wq"),
                    U32.withName("port_num")).withName("element"),
            U32.withName("event_type"), paddingLayout(4)).withName("ibv_async_event");
    public static final long AE_ELEMENT = off(IBV_ASYNC_EVENT, "element");
    public static final long AE_PORT_NUM = IBV_ASYNC_EVENT.byteOffset(groupElement("element"), groupElement("port_num"));
    public static final long AE_EVENT_TYPE = off(IBV_ASYNC_EVENT, "event_type");

    private static final String[] VERBS_CONTEXT_OPS = {
            "query_port", "advise_mr", "alloc_null_mr", "read_counters", "attach_counters_point_flow",
            "create_counters", "destroy_counters", "reg_dm_mr", "alloc_dm", "free_dm", "modify_flow_action_esp",
            "destroy_flow_action", "create_flow_action_esp", "modify_qp_rate_limit", "alloc_parent_domain",
            "dealloc_td", "alloc_td", "modify_cq", "post_srq_ops", "destroy_rwq_ind_table",
            "create_rwq_ind_table", "destroy_wq", "modify_wq", "create_wq", "query_rt_values", "create_cq_ex",
            "priv", "query_device_ex", "ibv_destroy_flow", "ABI_placeholder2", "ibv_create_flow",
            "ABI_placeholder1", "open_qp", "create_qp_ex", "get_srq_num", "create_srq_ex", "open_xrcd",
            "close_xrcd", "_ABI_placeholder3", "sz"};

    /**
     * {@code struct verbs_context}: the extended ops table that lies immediately before the
     * {@code ibv_context} a provider hands out. Read an op at {@code ctx + VC_X}, where the {@code VC_*}
     * offsets are relative to the embedded {@code ibv_context} (negative).
     */
    public static final StructLayout VERBS_CONTEXT;
    static {
        List<MemoryLayout> m = new ArrayList<>();
        for (String n : VERBS_CONTEXT_OPS) {
            m.add((n.equals("sz") ? U64 : PTR).withName(n));
        }
        m.add(IBV_CONTEXT.withName("context"));
        VERBS_CONTEXT = structLayout(m.toArray(MemoryLayout[]::new)).withName("verbs_context");
    }
    private static final long VC_BASE = off(VERBS_CONTEXT, "context");
    /** Size of {@code struct verbs_context} these headers know (what {@code sz} is compared against). */
    public static final long VERBS_CONTEXT_SIZE = VERBS_CONTEXT.byteSize();
    public static final long VC_ALLOC_PARENT_DOMAIN = vc("alloc_parent_domain");
    public static final long VC_DEALLOC_TD = vc("dealloc_td");
    public static final long VC_ALLOC_TD = vc("alloc_td");
    public static final long VC_MODIFY_CQ = vc("modify_cq");
    public static final long VC_CREATE_CQ_EX = vc("create_cq_ex");
    public static final long VC_QUERY_DEVICE_EX = vc("query_device_ex");
    public static final long VC_CREATE_QP_EX = vc("create_qp_ex");
    public static final long VC_CREATE_SRQ_EX = vc("create_srq_ex");
    public static final long VC_SZ = vc("sz");

    /** Offset of a {@code verbs_context} member relative to the embedded {@code ibv_context}. */
    public static long vc(String member) {
        return off(VERBS_CONTEXT, member) - VC_BASE;
    }

    /** Offset of a {@code verbs_context} member from the start of {@code verbs_context}. */
    public static long vcFromStart(String member) {
        return off(VERBS_CONTEXT, member);
    }

    private static final String[] QP_EX_OPS = {
            "wr_atomic_cmp_swp", "wr_atomic_fetch_add", "wr_bind_mw", "wr_local_inv", "wr_rdma_read",
            "wr_rdma_write", "wr_rdma_write_imm", "wr_send", "wr_send_imm", "wr_send_inv", "wr_send_tso",
            "wr_set_ud_addr", "wr_set_xrc_srqn", "wr_set_inline_data", "wr_set_inline_data_list", "wr_set_sge",
            "wr_set_sge_list", "wr_start", "wr_complete", "wr_abort", "wr_atomic_write"};

    /** {@code struct ibv_qp_ex}. */
    public static final StructLayout IBV_QP_EX;
    static {
        List<MemoryLayout> m = new ArrayList<>(List.of(IBV_QP.withName("qp_base"), U64.withName("comp_mask"),
                U64.withName("wr_id"), U32.withName("wr_flags"), paddingLayout(4)));
        for (String n : QP_EX_OPS) {
            m.add(PTR.withName(n));
        }
        IBV_QP_EX = structLayout(m.toArray(MemoryLayout[]::new)).withName("ibv_qp_ex");
    }
    public static final long QPX_WR_ID = off(IBV_QP_EX, "wr_id");
    public static final long QPX_WR_FLAGS = off(IBV_QP_EX, "wr_flags");
    public static final long QPX_RDMA_READ = off(IBV_QP_EX, "wr_rdma_read");
    public static final long QPX_RDMA_WRITE = off(IBV_QP_EX, "wr_rdma_write");
    public static final long QPX_RDMA_WRITE_IMM = off(IBV_QP_EX, "wr_rdma_write_imm");
    public static final long QPX_SEND = off(IBV_QP_EX, "wr_send");
    public static final long QPX_SEND_IMM = off(IBV_QP_EX, "wr_send_imm");
    public static final long QPX_SET_UD_ADDR = off(IBV_QP_EX, "wr_set_ud_addr");
    public static final long QPX_SET_INLINE_DATA = off(IBV_QP_EX, "wr_set_inline_data");
    public static final long QPX_SET_SGE_LIST = off(IBV_QP_EX, "wr_set_sge_list");
    public static final long QPX_START = off(IBV_QP_EX, "wr_start");
    public static final long QPX_COMPLETE = off(IBV_QP_EX, "wr_complete");
    public static final long QPX_ABORT = off(IBV_QP_EX, "wr_abort");

    private static final String[] CQ_EX_OPS = {
            "start_poll", "next_poll", "end_poll", "read_opcode", "read_vendor_err", "read_byte_len",
            "read_imm_data", "read_qp_num", "read_src_qp", "read_wc_flags", "read_slid", "read_sl",
            "read_dlid_path_bits", "read_completion_ts", "read_cvlan", "read_flow_tag", "read_tm_info",
            "read_completion_wallclock_ns"};

    /** {@code struct ibv_cq_ex}: an {@code ibv_cq} followed by the poll API. */
    public static final StructLayout IBV_CQ_EX;
    static {
        List<MemoryLayout> m = new ArrayList<>(List.of(
                PTR.withName("context"), PTR.withName("channel"), PTR.withName("cq_context"), U32.withName("handle"),
                U32.withName("cqe"), mutex("mutex"), cond("cond"), U32.withName("comp_events_completed"),
                U32.withName("async_events_completed"), U32.withName("comp_mask"), U32.withName("status"),
                U64.withName("wr_id")));
        for (String n : CQ_EX_OPS) {
            m.add(PTR.withName(n));
        }
        IBV_CQ_EX = structLayout(m.toArray(MemoryLayout[]::new)).withName("ibv_cq_ex");
    }
    public static final long CQX_STATUS = off(IBV_CQ_EX, "status");
    public static final long CQX_WR_ID = off(IBV_CQ_EX, "wr_id");
    public static final long CQX_START_POLL = off(IBV_CQ_EX, "start_poll");
    public static final long CQX_NEXT_POLL = off(IBV_CQ_EX, "next_poll");
    public static final long CQX_END_POLL = off(IBV_CQ_EX, "end_poll");
    public static final long CQX_READ_OPCODE = off(IBV_CQ_EX, "read_opcode");
    public static final long CQX_READ_VENDOR_ERR = off(IBV_CQ_EX, "read_vendor_err");
    public static final long CQX_READ_BYTE_LEN = off(IBV_CQ_EX, "read_byte_len");
    public static final long CQX_READ_IMM_DATA = off(IBV_CQ_EX, "read_imm_data");
    public static final long CQX_READ_QP_NUM = off(IBV_CQ_EX, "read_qp_num");
    public static final long CQX_READ_SRC_QP = off(IBV_CQ_EX, "read_src_qp");
    public static final long CQX_READ_WC_FLAGS = off(IBV_CQ_EX, "read_wc_flags");

    /** {@code struct ibv_poll_cq_attr}. */
    public static final StructLayout IBV_POLL_CQ_ATTR = structLayout(U32.withName("comp_mask"))
            .withName("ibv_poll_cq_attr");

    /** {@code struct ibv_modify_cq_attr}: {@code attr_mask} and {@code struct ibv_moderate_cq}. */
    public static final StructLayout IBV_MODIFY_CQ_ATTR = structLayout(
            U32.withName("attr_mask"), structLayout(U16.withName("cq_count"), U16.withName("cq_period"))
                    .withName("moderate")).withName("ibv_modify_cq_attr");
    public static final long MCQ_ATTR_MASK = off(IBV_MODIFY_CQ_ATTR, "attr_mask");
    public static final long MCQ_COUNT = IBV_MODIFY_CQ_ATTR.byteOffset(groupElement("moderate"), groupElement("cq_count"));
    public static final long MCQ_PERIOD = IBV_MODIFY_CQ_ATTR.byteOffset(groupElement("moderate"), groupElement("cq_period"));

    /** {@code struct efadv_qp_init_attr}. */
    public static final StructLayout EFADV_QP_INIT_ATTR = structLayout(
            U64.withName("comp_mask"), U32.withName("driver_qp_type"), sequenceLayout(4, U8).withName("reserved"))
            .withName("efadv_qp_init_attr");
    public static final long EFAQP_DRIVER_QP_TYPE = off(EFADV_QP_INIT_ATTR, "driver_qp_type");

    /** {@code struct efadv_device_attr}. */
    public static final StructLayout EFADV_DEVICE_ATTR = structLayout(
            U64.withName("comp_mask"), U32.withName("max_sq_wr"), U32.withName("max_rq_wr"),
            U16.withName("max_sq_sge"), U16.withName("max_rq_sge"), U16.withName("inline_buf_size"),
            sequenceLayout(2, U8).withName("reserved"), U32.withName("device_caps"),
            U32.withName("max_rdma_size")).withName("efadv_device_attr");
    public static final long EFADA_MAX_SQ_WR = off(EFADV_DEVICE_ATTR, "max_sq_wr");
    public static final long EFADA_MAX_RQ_WR = off(EFADV_DEVICE_ATTR, "max_rq_wr");
    public static final long EFADA_MAX_SQ_SGE = off(EFADV_DEVICE_ATTR, "max_sq_sge");
    public static final long EFADA_MAX_RQ_SGE = off(EFADV_DEVICE_ATTR, "max_rq_sge");
    public static final long EFADA_INLINE_BUF_SIZE = off(EFADV_DEVICE_ATTR, "inline_buf_size");
    public static final long EFADA_DEVICE_CAPS = off(EFADV_DEVICE_ATTR, "device_caps");
    public static final long EFADA_MAX_RDMA_SIZE = off(EFADV_DEVICE_ATTR, "max_rdma_size");

    /** {@code struct efadv_cq_init_attr}. */
    public static final StructLayout EFADV_CQ_INIT_ATTR = structLayout(
            U64.withName("comp_mask"), U64.withName("wc_flags")).withName("efadv_cq_init_attr");
    /** {@code struct efadv_ah_attr}. */
    public static final StructLayout EFADV_AH_ATTR = structLayout(
            U64.withName("comp_mask"), U16.withName("ahn"), sequenceLayout(6, U8).withName("reserved"))
            .withName("efadv_ah_attr");

    /** {@code struct mlx5dv_devx_uar}. */
    public static final StructLayout MLX5DV_DEVX_UAR = structLayout(
            PTR.withName("reg_addr"), PTR.withName("base_addr"), U32.withName("page_id"), paddingLayout(4),
            U64.withName("mmap_off"), U64.withName("comp_mask")).withName("mlx5dv_devx_uar");
    /** {@code struct mlx5dv_context_attr}. */
    public static final StructLayout MLX5DV_CONTEXT_ATTR = structLayout(
            U32.withName("flags"), paddingLayout(4), U64.withName("comp_mask")).withName("mlx5dv_context_attr");
    /** {@code struct mlx5dv_qp_init_attr} (the DC attributes are padding here). */
    public static final StructLayout MLX5DV_QP_INIT_ATTR = structLayout(
            U64.withName("comp_mask"), U32.withName("create_flags"), paddingLayout(4),
            structLayout(U32.withName("dc_type"), paddingLayout(4), U64.withName("dct_access_key"))
                    .withName("dc_init_attr"), U64.withName("send_ops_flags")).withName("mlx5dv_qp_init_attr");

    private static StructLayout pointers(String name, String[] members) {
        MemoryLayout[] m = new MemoryLayout[members.length];
        for (int i = 0; i < m.length; i++) {
            m[i] = PTR.withName(members[i]);
        }
        return structLayout(m).withName(name);
    }

    static long off(StructLayout layout, String field) {
        return layout.byteOffset(groupElement(field));
    }
}
