package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.Context;
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

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A simulated protection domain, or a parent domain ({@link #threadDomain()} non-null) over a base
 * PD. Creation methods are thread-safe (context lock).
 */
final class SimPd extends SimResource implements ProtectionDomain {
    /**
     * System property that lets {@link #createQp} attach QPs whose combined queue depth exceeds a
     * CQ's depth (to provoke a CQ overrun on purpose). Read at every create.
     */
    public static final String ALLOW_CQ_OVERCOMMIT = "scalep.sim.allowCqOvercommit";
    private static final int REMOTE = Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC;

    private final SimPd base;
    final SimTd td;
    final Set<SimMr> mrs = new LinkedHashSet<>();
    final Set<SimQp> qps = new LinkedHashSet<>();
    final Set<SimSrq> srqs = new LinkedHashSet<>();
    final Set<SimAh> ahs = new LinkedHashSet<>();
    final Set<SimPd> parentDomains = new LinkedHashSet<>();
    /** This PD's id on the fabric (the directory's PD check); shared with its parent domains. */
    final int id;
    private final List<SharedMemory.Allocation> allocations = new ArrayList<>();
    private Arena memory;

    SimPd(SimContext ctx, SimPd base, SimTd td) {
        super(ctx);
        this.base = base;
        this.td = td;
        this.id = base == null ? ctx.device.nextPdId() : base.id;
    }

    /**
     * On a device joined to a fabric: a shared-memory file mapped here, which other processes can
     * map when they reach an MR over it; otherwise plain native memory. Owned by this PD (its base
     * PD for a parent domain): freed when the PD is destroyed.
     */
    @Override
    public MemorySegment allocate(long byteSize, long alignment) {
        synchronized (ctx.ctl) {
            checkOpen();
            SimPd b = base();
            if (b.memory == null) {
                b.memory = Arena.ofShared();
            }
            SharedMemory sm = ctx.device.sharedMemory();
            if (sm == null) {
                if (byteSize <= 0 || alignment <= 0 || Long.bitCount(alignment) != 1) {
                    throw new VerbsException("ibv_alloc_pd_memory", Errno.EINVAL, dev(),
                            "size=" + byteSize + " must be positive and alignment=" + alignment + " a power of two");
                }
                return b.memory.allocate(byteSize, alignment);
            }
            SharedMemory.Allocation a = sm.allocate(byteSize, alignment, b.memory);
            b.allocations.add(a);
            return a.segment();
        }
    }

    /** The ordinary PD (itself, or the PD under a parent domain). */
    SimPd base() {
        return base == null ? this : base;
    }

    private String dev() {
        return ctx.device.name();
    }

    /** Closed when this PD or its context is. */
    @Override
    void checkOpen() {
        super.checkOpen();
        ctx.checkOpen();
    }

    @Override
    public Context context() {
        return ctx;
    }

    @Override
    public ThreadDomain threadDomain() {
        return td;
    }

    @Override
    public MemoryRegion register(MemorySegment segment, int access) {
        synchronized (ctx.ctl) {
            checkOpen();
            if (segment == null || !segment.isNative() || segment.byteSize() == 0) {
                throw new VerbsException("ibv_reg_mr", Errno.EINVAL, dev(),
                        "memory must be a non-empty native segment: " + segment);
            }
            if (segment.byteSize() > ctx.caps.maxMrSize()) {
                throw new VerbsException("ibv_reg_mr", Errno.EINVAL, dev(),
                        "length=" + segment.byteSize() + " exceeds max_mr_size=" + ctx.caps.maxMrSize());
            }
            if ((access & (Access.REMOTE_WRITE | Access.REMOTE_ATOMIC)) != 0 && (access & Access.LOCAL_WRITE) == 0) {
                throw new VerbsException("ibv_reg_mr", Errno.EINVAL, dev(),
                        "REMOTE_WRITE/REMOTE_ATOMIC access requires LOCAL_WRITE (access=" + access + ")");
            }
            if ((access & Access.REMOTE_ATOMIC) != 0 && !ctx.caps.atomicCap().supported()) {
                // EFA's kernel driver refuses access flags it does not support (EOPNOTSUPP)
                throw new UnsupportedFeatureException("ibv_reg_mr", dev(), "REMOTE_ATOMIC access (atomic_cap is NONE: "
                        + dev() + " has no RDMA atomics)");
            }
            SharedMemory sm = ctx.device.sharedMemory();
            SharedMemory.Allocation shared = sm == null ? null : sm.find(segment.address(), segment.byteSize());
            if (sm != null && shared == null && (access & REMOTE) != 0) {
                throw new VerbsException("ibv_reg_mr", Errno.EINVAL, dev(), "remote access (access=" + access
                        + ") to memory that no other process can map: " + dev() + " spans processes, so memory "
                        + "a peer may reach must come from ProtectionDomain.allocate (shared memory)");
            }
            int key = ctx.device.mrs.reserve();
            if (key < 0) {
                throw new VerbsException("ibv_reg_mr", Errno.ENOMEM, dev(), "max_mr=" + ctx.caps.maxMr());
            }
            SimMr mr = new SimMr(this, segment, access, key);
            ctx.device.mrs.publish(mr);
            if (shared != null) {
                ctx.device.directory().publishMr(key, access, base().id, shared.fileNo(),
                        segment.address() - shared.segment().address(), segment.byteSize(), segment.address());
            }
            mrs.add(mr);
            ctx.mrs.add(mr);
            ctx.accounting.add(Accounting.MRS, 1);
            ctx.accounting.add(Accounting.MEMORY, Accounting.MR_BYTES);
            return mr;
        }
    }

    @Override
    public QueuePair createQp(QpInitAttr attr) {
        synchronized (ctx.ctl) {
            checkOpen();
            String verb = ctx.device.isEfa() ? "efadv_create_qp_ex" : "ibv_create_qp";
            if (attr == null || attr.type() == null) {
                throw new VerbsException(verb, Errno.EINVAL, dev(), "attributes and QP type are required");
            }
            var c = ctx.caps;
            if (!c.qpTypes().contains(attr.type())) {
                throw new UnsupportedFeatureException(verb, dev(), "QP type " + attr.type());
            }
            SimCq scq = cqOf(attr.sendCq(), verb, "send CQ");
            SimCq rcq = cqOf(attr.recvCq(), verb, "receive CQ");
            SimSrq srq = null;
            if (attr.srq() != null) {
                if (!(attr.srq() instanceof SimSrq s) || s.pd.ctx != ctx || s.isClosed()) {
                    throw new VerbsException(verb, Errno.EINVAL, dev(), "SRQ is not a live SRQ of this context");
                }
                srq = s;
            }
            limit(verb, "max_send_wr", attr.maxSendWr(), 1, c.maxQpWr(), "max_qp_wr");
            if (srq == null) {
                limit(verb, "max_recv_wr", attr.maxRecvWr(), 0, c.maxQpWr(), "max_qp_wr");
            }
            limit(verb, "max_send_sge", attr.maxSendSge(), 0, c.maxSge(), "max_sge");
            limit(verb, "max_recv_sge", attr.maxRecvSge(), 0, c.maxRecvSge(), "max_recv_sge");
            limit(verb, "max_inline_data", attr.maxInline(), 0, c.maxInline(), "max_inline");
            if (ctx.qps.size() >= c.maxQp()) {
                throw new VerbsException(verb, Errno.ENOMEM, dev(), "max_qp=" + c.maxQp());
            }
            int sendWr = attr.maxSendWr();
            int recvWr = srq == null ? attr.maxRecvWr() : 0;
            if (ctx.mlx5()) {
                sendWr = roundUpPow2(sendWr);
                recvWr = recvWr == 0 ? 0 : roundUpPow2(recvWr);
            }
            attr.connection().check(verb, dev(), c, ctx.device.ports());
            QpInitAttr rounded = new QpInitAttr(attr.type(), scq, rcq, srq, sendWr, recvWr, attr.maxSendSge(),
                    attr.maxRecvSge(), attr.maxInline(), attr.sigAll(), attr.connection());
            int sendDemand = sendWr;
            int recvDemand = srq == null ? recvWr : 0;
            if (!Boolean.getBoolean(ALLOW_CQ_OVERCOMMIT)) {
                checkCommit(verb, scq, scq == rcq ? sendDemand + recvDemand : sendDemand);
                if (rcq != scq) {
                    checkCommit(verb, rcq, recvDemand);
                }
            }
            int qpn = ctx.device.qps.reserve();
            if (qpn < 0) {
                throw new VerbsException(verb, Errno.ENOMEM, dev(), "max_qp=" + c.maxQp() + " on the device");
            }
            SimUuar u = ctx.assignUuar(td);
            SimQp qp = new SimQp(this, rounded, qpn, scq, rcq, srq, u, td != null);
            scq.attach(qp, sendDemand);
            rcq.attach(qp, recvDemand);
            if (srq != null) {
                srq.qps.add(qp);
            }
            qps.add(qp);
            ctx.qps.add(qp);
            ctx.device.qps.publish(qp);
            FabricDirectory d = ctx.device.directory();
            if (d != null) {
                d.publishQp(qp);
            }
            ctx.accounting.add(Accounting.QPS, 1);
            ctx.accounting.add(Accounting.MEMORY, qp.memoryBytes());
            return qp;
        }
    }

    private void checkCommit(String verb, SimCq cq, int demand) {
        if (cq.committed() + demand > cq.depth()) {
            throw new VerbsException(verb, Errno.EINVAL, dev(), "CQ depth " + cq.depth()
                    + " is below the combined depth " + (cq.committed() + demand)
                    + " of the QPs attached to it (a CQ overrun would kill them; set -D" + ALLOW_CQ_OVERCOMMIT
                    + "=true to force)");
        }
    }

    private SimCq cqOf(Object o, String verb, String what) {
        if (!(o instanceof SimCq cq) || cq.ctx != ctx || cq.isClosed()) {
            throw new VerbsException(verb, Errno.EINVAL, dev(), what + " is not a live CQ of this context");
        }
        return cq;
    }

    private void limit(String verb, String name, int v, int min, int max, String limitName) {
        if (v < min || v > max) {
            throw new VerbsException(verb, Errno.EINVAL, dev(), name + "=" + v + (v < min ? " is below " + min
                    : " exceeds " + limitName + "=" + max));
        }
    }

    static int roundUpPow2(int v) {
        return v <= 1 ? 1 : Integer.highestOneBit(v - 1) << 1;
    }

    @Override
    public SharedReceiveQueue createSrq(int maxWr, int maxSge) {
        synchronized (ctx.ctl) {
            checkOpen();
            var c = ctx.caps;
            if (c.maxSrq() == 0) {
                throw new UnsupportedFeatureException("ibv_create_srq", dev(), "shared receive queues");
            }
            limit("ibv_create_srq", "max_wr", maxWr, 1, c.maxSrqWr(), "max_srq_wr");
            limit("ibv_create_srq", "max_sge", maxSge, 1, c.maxRecvSge(), "max_recv_sge");
            if (ctx.srqs.size() >= c.maxSrq()) {
                throw new VerbsException("ibv_create_srq", Errno.ENOMEM, dev(), "max_srq=" + c.maxSrq());
            }
            SimSrq s = new SimSrq(this, maxWr, maxSge);
            srqs.add(s);
            ctx.srqs.add(s);
            ctx.accounting.add(Accounting.SRQS, 1);
            ctx.accounting.add(Accounting.MEMORY, Accounting.SRQ_BYTES_PER_WR * maxWr);
            return s;
        }
    }

    @Override
    public AddressHandle createAh(QpAddress destination) {
        synchronized (ctx.ctl) {
            checkOpen();
            if (destination == null || !ctx.device.reaches(destination)) {
                throw new VerbsException("ibv_create_ah", Errno.EINVAL, dev(),
                        "destination " + destination + " is not reachable from " + dev());
            }
            int id = ctx.device.ahs.reserve();
            if (id < 0) {
                throw new VerbsException("ibv_create_ah", Errno.ENOMEM, dev(), "address handle table full");
            }
            SimAh ah = new SimAh(this, destination, id);
            ctx.device.ahs.publish(ah);
            ahs.add(ah);
            ctx.ahs.add(ah);
            return ah;
        }
    }

    @Override
    public ProtectionDomain parentDomain(ThreadDomain threadDomain) {
        synchronized (ctx.ctl) {
            checkOpen();
            if (!ctx.caps.threadDomains()) {
                throw new UnsupportedFeatureException("ibv_alloc_parent_domain", dev(), "parent domains");
            }
            if (td != null) {
                throw new VerbsException("ibv_alloc_parent_domain", Errno.EINVAL, dev(),
                        "a parent domain cannot be the base of another parent domain");
            }
            if (!(threadDomain instanceof SimTd t) || t.ctx != ctx || t.isClosed()) {
                throw new VerbsException("ibv_alloc_parent_domain", Errno.EINVAL, dev(),
                        "thread domain is not a live TD of this context");
            }
            SimPd p = new SimPd(ctx, this, t);
            parentDomains.add(p);
            t.parentDomains.add(p);
            ctx.parents.add(p);
            return p;
        }
    }

    private List<Object> liveChildren() {
        List<Object> l = new ArrayList<>();
        l.addAll(qps);
        l.addAll(mrs);
        l.addAll(srqs);
        l.addAll(ahs);
        l.addAll(parentDomains);
        return l;
    }

    @Override
    void checkNoChildren() {
        List<Object> live = liveChildren();
        if (!live.isEmpty()) {
            throw new VerbsException(td == null ? "ibv_dealloc_pd" : "ibv_dealloc_pd (parent domain)",
                    Errno.EBUSY, dev(), "still in use by " + live);
        }
    }

    @Override
    void release() {
        if (td != null) {
            td.parentDomains.remove(this);
            base.parentDomains.remove(this);
            ctx.parents.remove(this);
        } else {
            SharedMemory sm = ctx.device.sharedMemory();
            for (SharedMemory.Allocation a : allocations) {
                if (sm != null) {
                    sm.free(a);
                }
            }
            allocations.clear();
            if (memory != null) {
                memory.close();
                memory = null;
            }
            ctx.pds.remove(this);
            ctx.accounting.add(Accounting.PDS, -1);
            ctx.accounting.add(Accounting.MEMORY, -Accounting.PD_BYTES);
        }
    }

    @Override
    public String toString() {
        return td == null ? "PD" : "parent domain (" + td + ")";
    }
}
