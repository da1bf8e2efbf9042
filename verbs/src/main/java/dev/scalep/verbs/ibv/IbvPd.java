package dev.scalep.verbs.ibv;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.MemoryModel;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SharedReceiveQueue;
import dev.scalep.verbs.ThreadDomain;
import dev.scalep.verbs.UnsupportedFeatureException;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.ffm.IbvStructs;
import dev.scalep.verbs.ffm.Native;
import dev.scalep.verbs.ffm.Ops;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/** An {@code ibv_pd}, or a parent domain ({@code td != null}) over a PD and a TD. Thread-safe. */
final class IbvPd extends IbvResource implements ProtectionDomain {
    final MemorySegment pd;
    /** The ordinary PD a parent domain was made from; {@code null} for an ordinary PD. */
    final IbvPd base;
    final IbvTd td;
    /** Live MRs, QPs, SRQs, AHs and parent domains (guarded by {@code this}). */
    private final List<IbvResource> children = new ArrayList<>();

    IbvPd(IbvContext context, MemorySegment pd, IbvPd base, IbvTd td) {
        super(context);
        this.pd = pd;
        this.base = base;
        this.td = td;
    }

    private Arena memory;

    /** Plain aligned native memory owned by this PD (its base PD for a parent domain), freed with it. */
    @Override
    public MemorySegment allocate(long byteSize, long alignment) {
        checkOpen();
        if (byteSize <= 0 || alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new dev.scalep.verbs.VerbsException("ibv_alloc_pd_memory", dev.scalep.verbs.Errno.EINVAL,
                    context.name, "size=" + byteSize + " must be positive and alignment=" + alignment
                    + " a power of two");
        }
        IbvPd owner = base == null ? this : base;
        synchronized (owner) {
            if (owner.memory == null) {
                owner.memory = Arena.ofShared();
            }
            return owner.memory.allocate(byteSize, alignment);
        }
    }

    synchronized void addChild(IbvResource r) {
        children.add(r);
    }

    synchronized void removeChild(IbvResource r) {
        children.remove(r);
    }

    @Override
    public IbvContext context() {
        return context;
    }

    @Override
    public ThreadDomain threadDomain() {
        return td;
    }

    @Override
    public MemoryRegion register(MemorySegment segment, int access) {
        checkOpen();
        if (!segment.isNative()) {
            throw new IllegalArgumentException("only native memory segments can be registered");
        }
        if ((access & Access.REMOTE_ATOMIC) != 0 && !context.capabilities().atomicCap().supported()) {
            // EFA's kernel refuses the flag itself (EOPNOTSUPP); on any device without atomics it buys nothing
            throw new UnsupportedFeatureException("ibv_reg_mr", context.name, "REMOTE_ATOMIC access (atomic_cap is NONE: "
                    + context.name + " has no RDMA atomics)");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = Native.callState(a);
            MemorySegment mr = context.lib.regMr(st, pd, segment.address(), segment.byteSize(), access);
            if (mr.equals(MemorySegment.NULL)) {
                throw Check.fail("ibv_reg_mr", Native.errno(st), context.name,
                        "length=" + segment.byteSize() + ", access=0x" + Integer.toHexString(access));
            }
            mr = mr.reinterpret(IbvStructs.IBV_MR.byteSize());
            IbvMr m = new IbvMr(this, mr, segment, access);
            addChild(m);
            synchronized (context) {
                context.mrs.add(m);
            }
            context.usage.add(Usage.Kind.MR, 1, Usage.MR_BYTES);
            return m;
        }
    }

    @Override
    public QueuePair createQp(QpInitAttr attr) {
        checkOpen();
        IbvQp qp = IbvQp.create(this, attr);
        qp.uuar = context.assignUuar(td);
        addChild(qp);
        synchronized (context) {
            context.qps.add(qp);
        }
        context.usage.add(Usage.Kind.QP, 1, Usage.qpBytes(qp.attributes().maxSendWr(), qp.attributes().maxRecvWr()));
        return qp;
    }

    @Override
    public SharedReceiveQueue createSrq(int maxWr, int maxSge) {
        checkOpen();
        var caps = context.capabilities();
        if (caps.maxSrq() == 0) {
            throw new UnsupportedFeatureException("ibv_create_srq", context.name, "shared receive queues");
        }
        if (maxWr < 1 || maxWr > caps.maxSrqWr() || maxSge < 1) {
            throw new VerbsException("ibv_create_srq", Errno.EINVAL, context.name,
                    "max_wr=" + maxWr + " (limit " + caps.maxSrqWr() + "), max_sge=" + maxSge);
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ia = a.allocate(IbvStructs.IBV_SRQ_INIT_ATTR);
            ia.set(JAVA_INT, IbvStructs.SRQIA_MAX_WR, maxWr);
            ia.set(JAVA_INT, IbvStructs.SRQIA_MAX_SGE, maxSge);
            MemorySegment st = Native.callState(a);
            MemorySegment srq = context.lib.createSrq(st, pd, ia);
            if (srq.equals(MemorySegment.NULL)) {
                throw Check.fail("ibv_create_srq", Native.errno(st), context.name, "shared receive queues",
                        "max_wr=" + maxWr + ", max_sge=" + maxSge);
            }
            IbvSrq s = new IbvSrq(this, srq.reinterpret(IbvStructs.IBV_SRQ.byteSize()),
                    ia.get(JAVA_INT, IbvStructs.SRQIA_MAX_WR), ia.get(JAVA_INT, IbvStructs.SRQIA_MAX_SGE));
            addChild(s);
            synchronized (context) {
                context.srqs.add(s);
            }
            context.usage.add(Usage.Kind.SRQ, 1, MemoryModel.srqBytes(s.maxWr()));
            return s;
        }
    }

    @Override
    public AddressHandle createAh(QpAddress destination) {
        checkOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IbvStructs.IBV_AH_ATTR);
            Path.resolve(context, dev.scalep.verbs.ConnectionOptions.DEFAULTS, "ibv_create_ah").fillAh(attr, destination);
            MemorySegment st = Native.callState(a);
            MemorySegment ah = context.lib.createAh(st, pd, attr);
            if (ah.equals(MemorySegment.NULL)) {
                throw Check.fail("ibv_create_ah", Native.errno(st), context.name, "to " + destination);
            }
            IbvAh h = new IbvAh(this, ah, destination);
            addChild(h);
            synchronized (context) {
                context.ahs.add(h);
            }
            return h;
        }
    }

    @Override
    public ProtectionDomain parentDomain(ThreadDomain threadDomain) {
        checkOpen();
        if (!(threadDomain instanceof IbvTd t) || t.context != context) {
            throw new IllegalArgumentException("thread domain " + threadDomain + " is not of " + context);
        }
        t.checkOpen();
        if (td != null) {
            throw new IllegalArgumentException("a parent domain cannot be made from a parent domain");
        }
        MemorySegment alloc = ExtOps.op(context.ctx, "alloc_parent_domain");
        if (alloc == null) {
            throw new UnsupportedFeatureException("ibv_alloc_parent_domain", context.name, "parent domains");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IbvStructs.IBV_PARENT_DOMAIN_INIT_ATTR);
            attr.set(ADDRESS, IbvStructs.PDIA_PD, pd);
            attr.set(ADDRESS, IbvStructs.PDIA_TD, t.td);
            MemorySegment st = Native.callState(a);
            MemorySegment p = Ops.createWithAttr(st, alloc, context.ctx, attr);
            if (p.equals(MemorySegment.NULL)) {
                throw Check.fail("ibv_alloc_parent_domain", Native.errno(st), context.name, "parent domains", null);
            }
            IbvPd parent = new IbvPd(context, p, this, t);
            addChild(parent);
            t.addChild(parent);
            synchronized (context) {
                context.parentDomains.add(parent);
            }
            return parent;
        }
    }

    @Override
    synchronized void checkNoChildren() {
        if (!children.isEmpty()) {
            throw Check.busy(td == null ? "ibv_dealloc_pd" : "ibv_dealloc_pd (parent domain)", context.name,
                    toString(), children);
        }
    }

    @Override
    void destroyNative() {
        int rc = context.lib.deallocPd(pd);
        if (rc != 0) {
            throw Check.fail("ibv_dealloc_pd", rc, context.name, toString());
        }
    }

    @Override
    void unlink() {
        synchronized (context) {
            (td == null ? context.pds : context.parentDomains).remove(this);
        }
        if (td == null) {
            synchronized (this) {
                if (memory != null) {
                    memory.close();
                    memory = null;
                }
            }
            context.usage.add(Usage.Kind.PD, -1, Usage.PD_BYTES);
        } else {
            base.removeChild(this);
            td.removeChild(this);
        }
    }

    @Override
    public void close() {
        destroy();
    }

    @Override
    public String toString() {
        return (td == null ? "PD" : "parent domain") + " 0x" + Long.toHexString(pd.address()) + " on " + context.name;
    }

}
