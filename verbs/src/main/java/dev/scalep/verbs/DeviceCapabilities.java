package dev.scalep.verbs;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What a device can do, as queried from it (never assumed). Limits are per object unless named
 * otherwise.
 *
 * @param kind              device family
 * @param qpTypes           transport types the device creates
 * @param maxQp             QPs per device
 * @param maxQpWr           work requests per send or receive queue
 * @param maxSge            scatter/gather entries per send work request
 * @param maxRecvSge        scatter/gather entries per receive work request
 * @param maxCq             CQs per device
 * @param maxCqe            entries per CQ
 * @param maxMr             MRs per device
 * @param maxMrSize         bytes per MR
 * @param maxPd             PDs per device
 * @param maxSrq            SRQs per device (0: no SRQ)
 * @param maxSrqWr          work requests per SRQ
 * @param maxInline         inline payload bytes per send WQE
 * @param threadDomains     {@code ibv_alloc_td} and parent domains work
 * @param blueFlame         the device writes WQEs by programmed I/O together with the doorbell
 * @param rdmaRead          RDMA read is available
 * @param rdmaWrite         RDMA write is available
 * @param writeWithImm      RDMA write with immediate is available
 * @param unsignaled        work requests may be posted without {@code IBV_SEND_SIGNALED}
 * @param inOrder           completions and data arrive in post order (false on SRD)
 * @param singleThreadedCq  {@code IBV_CREATE_CQ_ATTR_SINGLE_THREADED} is honoured
 * @param extendedCqOnly    only {@code ibv_create_cq_ex} creates CQs (EFA)
 * @param maxDynamicUars    dynamically allocated UAR pages per context (thread domains), 0 if none
 * @param maxQpRdAtom       RDMA reads/atomics a QP accepts as responder ({@code max_qp_rd_atom})
 * @param maxQpInitRdAtom   RDMA reads/atomics a QP keeps in flight as initiator ({@code max_qp_init_rd_atom})
 * @param atomicCap         remote 64-bit atomics ({@code atomic_cap}): {@link AtomicCap#NONE} refuses them
 */
public record DeviceCapabilities(
        DeviceKind kind,
        Set<QpType> qpTypes,
        int maxQp,
        int maxQpWr,
        int maxSge,
        int maxRecvSge,
        int maxCq,
        int maxCqe,
        int maxMr,
        long maxMrSize,
        int maxPd,
        int maxSrq,
        int maxSrqWr,
        int maxInline,
        boolean threadDomains,
        boolean blueFlame,
        boolean rdmaRead,
        boolean rdmaWrite,
        boolean writeWithImm,
        boolean unsignaled,
        boolean inOrder,
        boolean singleThreadedCq,
        boolean extendedCqOnly,
        int maxDynamicUars,
        int maxQpRdAtom,
        int maxQpInitRdAtom,
        AtomicCap atomicCap) {

    public DeviceCapabilities {
        qpTypes = Set.copyOf(qpTypes);
        if (atomicCap == null) {
            atomicCap = AtomicCap.NONE;
        }
    }

    /** As the canonical constructor, with the atomics of the kind: none on EFA, HCA-level elsewhere. */
    public DeviceCapabilities(DeviceKind kind, Set<QpType> qpTypes, int maxQp, int maxQpWr, int maxSge,
                              int maxRecvSge, int maxCq, int maxCqe, int maxMr, long maxMrSize, int maxPd, int maxSrq,
                              int maxSrqWr, int maxInline, boolean threadDomains, boolean blueFlame, boolean rdmaRead,
                              boolean rdmaWrite, boolean writeWithImm, boolean unsignaled, boolean inOrder,
                              boolean singleThreadedCq, boolean extendedCqOnly, int maxDynamicUars, int maxQpRdAtom,
                              int maxQpInitRdAtom) {
        this(kind, qpTypes, maxQp, maxQpWr, maxSge, maxRecvSge, maxCq, maxCqe, maxMr, maxMrSize, maxPd, maxSrq,
                maxSrqWr, maxInline, threadDomains, blueFlame, rdmaRead, rdmaWrite, writeWithImm, unsignaled, inOrder,
                singleThreadedCq, extendedCqOnly, maxDynamicUars, maxQpRdAtom, maxQpInitRdAtom,
                kind == DeviceKind.EFA ? AtomicCap.NONE : AtomicCap.HCA);
    }

    /** Capabilities with the read/atomic depths of a ConnectX device (16 each) and the atomics of the kind. */
    public DeviceCapabilities(DeviceKind kind, Set<QpType> qpTypes, int maxQp, int maxQpWr, int maxSge,
                              int maxRecvSge, int maxCq, int maxCqe, int maxMr, long maxMrSize, int maxPd, int maxSrq,
                              int maxSrqWr, int maxInline, boolean threadDomains, boolean blueFlame, boolean rdmaRead,
                              boolean rdmaWrite, boolean writeWithImm, boolean unsignaled, boolean inOrder,
                              boolean singleThreadedCq, boolean extendedCqOnly, int maxDynamicUars) {
        this(kind, qpTypes, maxQp, maxQpWr, maxSge, maxRecvSge, maxCq, maxCqe, maxMr, maxMrSize, maxPd, maxSrq,
                maxSrqWr, maxInline, threadDomains, blueFlame, rdmaRead, rdmaWrite, writeWithImm, unsignaled, inOrder,
                singleThreadedCq, extendedCqOnly, maxDynamicUars, 16, 16,
                kind == DeviceKind.EFA ? AtomicCap.NONE : AtomicCap.HCA);
    }

    /** The same capabilities with BlueFlame {@code on}. */
    public DeviceCapabilities withBlueFlame(boolean on) {
        return new DeviceCapabilities(kind, qpTypes, maxQp, maxQpWr, maxSge, maxRecvSge, maxCq, maxCqe, maxMr,
                maxMrSize, maxPd, maxSrq, maxSrqWr, maxInline, threadDomains, on, rdmaRead, rdmaWrite, writeWithImm,
                unsignaled, inOrder, singleThreadedCq, extendedCqOnly, maxDynamicUars, maxQpRdAtom, maxQpInitRdAtom,
                atomicCap);
    }

    /** Whether the device can execute this opcode. */
    public boolean supports(Opcode op) {
        return switch (op) {
            case SEND, SEND_WITH_IMM -> true;
            case RDMA_WRITE -> rdmaWrite;
            case RDMA_WRITE_WITH_IMM -> writeWithImm;
            case RDMA_READ -> rdmaRead;
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> atomicCap.supported();
        };
    }

    /** The capabilities as an ordered name → value map (for tables and JSON). */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("kind", kind.name().toLowerCase());
        m.put("qpTypes", qpTypes.stream().map(Enum::name).sorted().toList());
        m.put("maxQp", maxQp);
        m.put("maxQpWr", maxQpWr);
        m.put("maxSge", maxSge);
        m.put("maxRecvSge", maxRecvSge);
        m.put("maxCq", maxCq);
        m.put("maxCqe", maxCqe);
        m.put("maxMr", maxMr);
        m.put("maxMrSize", maxMrSize);
        m.put("maxPd", maxPd);
        m.put("maxSrq", maxSrq);
        m.put("maxSrqWr", maxSrqWr);
        m.put("maxInline", maxInline);
        m.put("threadDomains", threadDomains);
        m.put("blueFlame", blueFlame);
        m.put("rdmaRead", rdmaRead);
        m.put("rdmaWrite", rdmaWrite);
        m.put("writeWithImm", writeWithImm);
        m.put("unsignaled", unsignaled);
        m.put("inOrder", inOrder);
        m.put("singleThreadedCq", singleThreadedCq);
        m.put("extendedCqOnly", extendedCqOnly);
        m.put("maxDynamicUars", maxDynamicUars);
        m.put("maxQpRdAtom", maxQpRdAtom);
        m.put("maxQpInitRdAtom", maxQpInitRdAtom);
        m.put("atomicCap", atomicCap.name().toLowerCase());
        return m;
    }
}
