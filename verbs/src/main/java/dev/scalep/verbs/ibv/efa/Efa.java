package dev.scalep.verbs.ibv.efa;

import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.UnsupportedFeatureException;
import dev.scalep.verbs.ffm.IbvConst;
import dev.scalep.verbs.ffm.IbvStructs;
import dev.scalep.verbs.ffm.LibEfa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * EFA specifics through {@code libefa} ({@code efadv.h}, rdma-core v44): device limits from
 * {@code efadv_query_device} and SRD QPs from {@code efadv_create_qp_ex}. Stateless, thread-safe.
 */
public final class Efa {
    private Efa() {
    }

    /** {@code EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE}: defined from rdma-core v46 on; v44 devices never report it. */
    public static final int CAPS_RDMA_WRITE = 8;

    /** What {@code efadv_query_device} reports. */
    public record Attributes(int maxSqWr, int maxRqWr, int maxSqSge, int maxRqSge, int inlineBufSize,
                             int deviceCaps, int maxRdmaSize) {
    }

    /** {@code efadv_query_device} on an open context. */
    public static Attributes query(MemorySegment ctx, String device) {
        LibEfa efa = LibEfa.get();
        if (efa == null) {
            throw new UnsupportedFeatureException("efadv_query_device", device,
                    "EFA direct verbs (" + LibEfa.loadFailure() + ")");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IbvStructs.EFADV_DEVICE_ATTR);
            int rc = efa.queryDevice(ctx, attr);
            if (rc != 0) {
                throw new VerbsException("efadv_query_device", rc, device, null);
            }
            return new Attributes(attr.get(JAVA_INT, IbvStructs.EFADA_MAX_SQ_WR),
                    attr.get(JAVA_INT, IbvStructs.EFADA_MAX_RQ_WR),
                    Short.toUnsignedInt(attr.get(JAVA_SHORT, IbvStructs.EFADA_MAX_SQ_SGE)),
                    Short.toUnsignedInt(attr.get(JAVA_SHORT, IbvStructs.EFADA_MAX_RQ_SGE)),
                    Short.toUnsignedInt(attr.get(JAVA_SHORT, IbvStructs.EFADA_INLINE_BUF_SIZE)),
                    attr.get(JAVA_INT, IbvStructs.EFADA_DEVICE_CAPS),
                    attr.get(JAVA_INT, IbvStructs.EFADA_MAX_RDMA_SIZE));
        }
    }

    /**
     * {@code efadv_create_qp_ex} for an SRD QP ({@code IBV_QPT_DRIVER}) with the extended post API
     * ({@code ibv_wr_*}) enabled for send, send-with-imm and, where the device has it, RDMA read.
     * {@code attrEx} is a filled {@code ibv_qp_init_attr_ex} (CQs, caps, PD); returns the QP or NULL
     * with errno in {@code st}.
     */
    public static MemorySegment createSrdQp(Arena a, MemorySegment st, MemorySegment ctx, MemorySegment pd,
                                            MemorySegment attrEx, Attributes caps) {
        LibEfa efa = LibEfa.get();
        long ops = IbvConst.IBV_QP_EX_WITH_SEND | IbvConst.IBV_QP_EX_WITH_SEND_WITH_IMM;
        if ((caps.deviceCaps() & IbvConst.EFADV_DEVICE_ATTR_CAPS_RDMA_READ) != 0) {
            ops |= IbvConst.IBV_QP_EX_WITH_RDMA_READ;
        }
        if ((caps.deviceCaps() & CAPS_RDMA_WRITE) != 0) {
            ops |= IbvConst.IBV_QP_EX_WITH_RDMA_WRITE;
        }
        attrEx.set(JAVA_INT, IbvStructs.QPIAX_QP_TYPE, dev.scalep.verbs.QpType.SRD.code);
        attrEx.set(JAVA_INT, IbvStructs.QPIAX_COMP_MASK,
                IbvConst.IBV_QP_INIT_ATTR_PD | IbvConst.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
        attrEx.set(ADDRESS, IbvStructs.QPIAX_PD, pd);
        attrEx.set(JAVA_LONG, IbvStructs.QPIAX_SEND_OPS_FLAGS, ops);
        MemorySegment efaAttr = a.allocate(IbvStructs.EFADV_QP_INIT_ATTR);
        efaAttr.set(JAVA_INT, IbvStructs.EFAQP_DRIVER_QP_TYPE, IbvConst.EFADV_QP_DRIVER_TYPE_SRD);
        return efa.createQpEx(st, ctx, attrEx, efaAttr);
    }
}
