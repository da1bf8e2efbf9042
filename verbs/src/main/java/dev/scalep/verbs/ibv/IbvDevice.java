package dev.scalep.verbs.ibv;

import dev.scalep.verbs.counters.Events;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.AtomicCap;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.DeviceKind;
import dev.scalep.verbs.PortInfo;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.ffm.IbvConst;
import dev.scalep.verbs.ffm.IbvStructs;
import dev.scalep.verbs.ffm.LibIbverbs;
import dev.scalep.verbs.ffm.Native;
import dev.scalep.verbs.ffm.Ops;
import dev.scalep.verbs.ibv.efa.Efa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A device found by {@code ibv_get_device_list}. Its capabilities were queried when it was found
 * ({@code ibv_query_device}, {@code efadv_query_device}) or probed by creating and destroying the
 * object in question (inline size, thread domains, single-threaded and extended-only CQs). Thread-safe.
 */
public final class IbvDevice implements Device {
    final LibIbverbs lib;
    final MemorySegment device;
    private final String name;
    private final DeviceKind kind;
    private final DeviceCapabilities caps;
    final int maxQpRdAtom;
    final int maxQpInitRdAtom;
    final Efa.Attributes efa;
    final int portCount;
    private final List<PortInfo> ports;
    final Usage usage = new Usage(null);

    private IbvDevice(LibIbverbs lib, MemorySegment device, String name, DeviceKind kind, DeviceCapabilities caps,
                      int maxQpRdAtom, int maxQpInitRdAtom, Efa.Attributes efa, List<PortInfo> ports) {
        this.lib = lib;
        this.device = device;
        this.name = name;
        this.kind = kind;
        this.caps = caps;
        this.maxQpRdAtom = maxQpRdAtom;
        this.maxQpInitRdAtom = maxQpInitRdAtom;
        this.efa = efa;
        this.ports = ports;
        this.portCount = ports.size();
    }

    /** The family a provider serves, from the device name it gives ({@code mlx5_0}, {@code efa_0}, {@code rxe0}). */
    static DeviceKind kindOf(String name) {
        if (name.startsWith("mlx5")) {
            return DeviceKind.MLX5;
        }
        if (name.startsWith("efa")) {
            return DeviceKind.EFA;
        }
        if (name.startsWith("rxe")) {
            return DeviceKind.RXE;
        }
        return DeviceKind.OTHER;
    }

    static IbvDevice probe(LibIbverbs lib, MemorySegment dev, String name) {
        DeviceKind kind = kindOf(name);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = Native.callState(a);
            MemorySegment ctx = lib.openDevice(st, dev);
            if (ctx.equals(MemorySegment.NULL)) {
                throw Check.fail("ibv_open_device", Native.errno(st), name, null);
            }
            ctx = ctx.reinterpret(IbvStructs.IBV_CONTEXT.byteSize());
            try {
                MemorySegment da = a.allocate(IbvStructs.IBV_DEVICE_ATTR);
                int rc = lib.queryDevice(ctx, da);
                if (rc != 0) {
                    throw Check.fail("ibv_query_device", rc, name, null);
                }
                Efa.Attributes efa = kind == DeviceKind.EFA ? Efa.query(ctx, name) : null;
                int maxSge = da.get(JAVA_INT, IbvStructs.DA_MAX_SGE);
                int maxRecvSge = maxSge;
                int maxQpWr = da.get(JAVA_INT, IbvStructs.DA_MAX_QP_WR);
                Set<QpType> types = EnumSet.of(QpType.RC, QpType.UD);
                boolean rdmaRead = true, rdmaWrite = true, unsignaled = true, inOrder = true;
                int maxInline;
                if (efa != null) {
                    types = EnumSet.of(QpType.UD, QpType.SRD);
                    maxSge = efa.maxSqSge();
                    maxRecvSge = efa.maxRqSge();
                    maxQpWr = Math.min(efa.maxSqWr(), efa.maxRqWr());
                    rdmaRead = (efa.deviceCaps() & IbvConst.EFADV_DEVICE_ATTR_CAPS_RDMA_READ) != 0;
                    rdmaWrite = (efa.deviceCaps() & Efa.CAPS_RDMA_WRITE) != 0;
                    unsignaled = false;
                    inOrder = false;
                    maxInline = efa.inlineBufSize();
                } else {
                    maxInline = probeInline(lib, a, ctx, name);
                }
                boolean tds = probeTd(a, ctx);
                boolean stCq = probeCqEx(a, ctx, IbvConst.IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
                boolean legacyCq = probeLegacyCq(lib, a, ctx);
                boolean extendedOnly = !legacyCq && probeCqEx(a, ctx, 0);
                DeviceCapabilities caps = new DeviceCapabilities(kind, types,
                        da.get(JAVA_INT, IbvStructs.DA_MAX_QP), maxQpWr, maxSge, maxRecvSge,
                        da.get(JAVA_INT, IbvStructs.DA_MAX_CQ), da.get(JAVA_INT, IbvStructs.DA_MAX_CQE),
                        da.get(JAVA_INT, IbvStructs.DA_MAX_MR), da.get(JAVA_LONG, IbvStructs.DA_MAX_MR_SIZE),
                        da.get(JAVA_INT, IbvStructs.DA_MAX_PD), da.get(JAVA_INT, IbvStructs.DA_MAX_SRQ),
                        da.get(JAVA_INT, IbvStructs.DA_MAX_SRQ_WR), maxInline, tds,
                        kind == DeviceKind.MLX5, rdmaRead, rdmaWrite, rdmaWrite, unsignaled, inOrder, stCq,
                        extendedOnly, 0, da.get(JAVA_INT, IbvStructs.DA_MAX_QP_RD_ATOM),
                        da.get(JAVA_INT, IbvStructs.DA_MAX_QP_INIT_RD_ATOM),
                        AtomicCap.of(da.get(JAVA_INT, IbvStructs.DA_ATOMIC_CAP)));
                int portCount = Byte.toUnsignedInt(da.get(ValueLayout.JAVA_BYTE,
                        IbvStructs.DA_PHYS_PORT_CNT));
                return new IbvDevice(lib, dev, name, kind, caps, caps.maxQpRdAtom(), caps.maxQpInitRdAtom(), efa,
                        Ports.all(lib, ctx, name, portCount));
            } finally {
                lib.closeDevice(st, ctx);
            }
        }
    }

    /** The largest {@code max_inline_data} an RC QP accepts, as the driver reports it back. */
    private static int probeInline(LibIbverbs lib, Arena a, MemorySegment ctx, String name) {
        MemorySegment st = Native.callState(a);
        MemorySegment pd = lib.allocPd(st, ctx);
        if (pd.equals(MemorySegment.NULL)) {
            return 0;
        }
        MemorySegment cq = lib.createCq(st, ctx, 2, MemorySegment.NULL, 0);
        int best = 0;
        if (!cq.equals(MemorySegment.NULL)) {
            for (int want : new int[]{1024, 512, 256, 128, 64, 32}) {
                MemorySegment ia = a.allocate(IbvStructs.IBV_QP_INIT_ATTR);
                ia.set(ADDRESS, IbvStructs.QPIA_SEND_CQ, cq);
                ia.set(ADDRESS, IbvStructs.QPIA_RECV_CQ, cq);
                ia.set(JAVA_INT, IbvStructs.QPIA_CAP + IbvStructs.CAP_MAX_SEND_WR, 1);
                ia.set(JAVA_INT, IbvStructs.QPIA_CAP + IbvStructs.CAP_MAX_RECV_WR, 1);
                ia.set(JAVA_INT, IbvStructs.QPIA_CAP + IbvStructs.CAP_MAX_SEND_SGE, 1);
                ia.set(JAVA_INT, IbvStructs.QPIA_CAP + IbvStructs.CAP_MAX_RECV_SGE, 1);
                ia.set(JAVA_INT, IbvStructs.QPIA_CAP + IbvStructs.CAP_MAX_INLINE, want);
                ia.set(JAVA_INT, IbvStructs.QPIA_QP_TYPE, QpType.RC.code);
                MemorySegment qp = lib.createQp(st, pd, ia);
                if (!qp.equals(MemorySegment.NULL)) {
                    best = ia.get(JAVA_INT, IbvStructs.QPIA_CAP + IbvStructs.CAP_MAX_INLINE);
                    lib.destroyQp(qp);
                    break;
                }
            }
            lib.destroyCq(cq);
        }
        lib.deallocPd(pd);
        return best;
    }

    /** Whether {@code ibv_alloc_td} works (allocates one and frees it). */
    private static boolean probeTd(Arena a, MemorySegment ctx) {
        MemorySegment alloc = ExtOps.op(ctx, "alloc_td");
        MemorySegment dealloc = ExtOps.op(ctx, "dealloc_td");
        if (alloc == null || dealloc == null) {
            return false;
        }
        MemorySegment st = Native.callState(a);
        MemorySegment td = Ops.createWithAttr(st, alloc, ctx, a.allocate(IbvStructs.IBV_TD_INIT_ATTR));
        if (td.equals(MemorySegment.NULL)) {
            return false;
        }
        Ops.destroy(dealloc, td);
        return true;
    }

    private static boolean probeCqEx(Arena a, MemorySegment ctx, int flags) {
        MemorySegment create = ExtOps.op(ctx, "create_cq_ex");
        if (create == null) {
            return false;
        }
        MemorySegment attr = a.allocate(IbvStructs.IBV_CQ_INIT_ATTR_EX);
        attr.set(JAVA_INT, IbvStructs.CQIA_CQE, 2);
        attr.set(JAVA_LONG, IbvStructs.CQIA_WC_FLAGS, IbvCq.WC_FLAGS);
        if (flags != 0) {
            attr.set(JAVA_INT, IbvStructs.CQIA_COMP_MASK, IbvConst.IBV_CQ_INIT_ATTR_MASK_FLAGS);
            attr.set(JAVA_INT, IbvStructs.CQIA_FLAGS, flags);
        }
        MemorySegment st = Native.callState(a);
        MemorySegment cq = Ops.createWithAttr(st, create, ctx, attr);
        if (cq.equals(MemorySegment.NULL)) {
            return false;
        }
        LibIbverbs.get().destroyCq(cq);
        return true;
    }

    private static boolean probeLegacyCq(LibIbverbs lib, Arena a, MemorySegment ctx) {
        MemorySegment cq = lib.createCq(Native.callState(a), ctx, 2, MemorySegment.NULL, 0);
        if (cq.equals(MemorySegment.NULL)) {
            return false;
        }
        lib.destroyCq(cq);
        return true;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String provider() {
        return "ibv";
    }

    @Override
    public DeviceKind kind() {
        return kind;
    }

    @Override
    public DeviceCapabilities capabilities() {
        return caps;
    }

    /** The ports as queried when the device was found; a context re-reads them when it opens. */
    @Override
    public List<PortInfo> ports() {
        return ports;
    }

    @Override
    public Context open(ContextOptions options) {
        Object opening = Events.deviceOpening();
        Context c = IbvContext.open(this, options == null ? ContextOptions.DEFAULTS : options);
        Events.deviceOpened(opening, name, "ibv");
        return c;
    }

    @Override
    public ResourceUsage resources() {
        return usage.snapshot();
    }

    @Override
    public ResourceUsage peakResources() {
        return usage.peak();
    }

    @Override
    public String toString() {
        return "ibv:" + name;
    }
}
