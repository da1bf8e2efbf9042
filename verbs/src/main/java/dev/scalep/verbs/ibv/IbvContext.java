package dev.scalep.verbs.ibv;

import dev.scalep.verbs.AsyncEvent;
import dev.scalep.verbs.ClosedException;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.DeviceKind;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.PortInfo;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.TdSharing;
import dev.scalep.verbs.ThreadDomain;
import dev.scalep.verbs.UnsupportedFeatureException;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.ffm.IbvStructs;
import dev.scalep.verbs.ffm.LibIbverbs;
import dev.scalep.verbs.ffm.Native;
import dev.scalep.verbs.ibv.mlx5.Mlx5Env;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * An open {@code ibv_context}. Owns every object created through it and destroys them in reverse
 * dependency order on {@link #close()}. The ports (state, MTU, link layer, GID table) are read when
 * it opens; each QP picks its port and GID from its {@link dev.scalep.verbs.ConnectionOptions}.
 * Creation methods are thread-safe.
 */
final class IbvContext implements Context {

    final IbvDevice device;
    final LibIbverbs lib;
    final MemorySegment ctx;
    final String name;
    private final ContextOptions options;
    private final String env;
    final Usage usage;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The context's {@code async_fd} (set non-blocking at open) and the lock held from get to ack. */
    private final int asyncFd;
    private final Object asyncLock = new Object();
    /** The ports as read at open. */
    final List<PortInfo> ports;
    /** Function pointers of {@code ibv_context.ops}, read once. */
    final MemorySegment postSendFn, postRecvFn, postSrqRecvFn, pollCqFn, reqNotifyFn;

    /** mlx5 only: the UAR pages the driver's model implies (guarded by {@code this}); null elsewhere. */
    private final Mlx5UarModel uars;

    /** Live children by kind, in creation order (guarded by {@code this}). */
    final List<IbvQp> qps = new ArrayList<>();
    final List<IbvAh> ahs = new ArrayList<>();
    final List<IbvMr> mrs = new ArrayList<>();
    final List<IbvSrq> srqs = new ArrayList<>();
    final List<IbvCq> cqs = new ArrayList<>();
    final List<IbvPd> parentDomains = new ArrayList<>();
    final List<IbvTd> tds = new ArrayList<>();
    final List<IbvPd> pds = new ArrayList<>();

    private IbvContext(IbvDevice device, MemorySegment ctx, ContextOptions options, String env,
                       List<PortInfo> ports) {
        this.device = device;
        this.lib = device.lib;
        this.ctx = ctx;
        this.name = device.name();
        this.options = options;
        this.env = env;
        this.ports = ports;
        this.usage = new Usage(device.usage);
        this.uars = device.kind() == DeviceKind.MLX5 ? new Mlx5UarModel(options) : null;
        this.postSendFn = ctx.get(ADDRESS, IbvStructs.CTX_POST_SEND);
        this.postRecvFn = ctx.get(ADDRESS, IbvStructs.CTX_POST_RECV);
        this.postSrqRecvFn = ctx.get(ADDRESS, IbvStructs.CTX_POST_SRQ_RECV);
        this.pollCqFn = ctx.get(ADDRESS, IbvStructs.CTX_POLL_CQ);
        this.reqNotifyFn = ctx.get(ADDRESS, IbvStructs.CTX_REQ_NOTIFY_CQ);
        this.asyncFd = ctx.get(JAVA_INT, IbvStructs.CTX_ASYNC_FD);
    }

    static IbvContext open(IbvDevice device, ContextOptions options) {
        LibIbverbs lib = device.lib;
        String name = device.name();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = Native.callState(a);
            MemorySegment ctx;
            String env = "";
            if (device.kind() == DeviceKind.MLX5) {
                synchronized (Mlx5Env.LOCK) {
                    env = Mlx5Env.apply(options, name);
                    ctx = lib.openDevice(st, device.device);
                }
            } else {
                ctx = lib.openDevice(st, device.device);
            }
            if (ctx.equals(MemorySegment.NULL)) {
                throw Check.fail("ibv_open_device", Native.errno(st), name, null);
            }
            ctx = ctx.reinterpret(IbvStructs.IBV_CONTEXT.byteSize());
            List<PortInfo> ports;
            try {
                ports = Ports.all(lib, ctx, name, device.portCount);
            } catch (VerbsException e) {
                lib.closeDevice(st, ctx);
                throw e;
            }
            IbvContext c = new IbvContext(device, ctx, options, env, ports);
            int nb = Native.setNonBlocking(c.asyncFd);
            if (nb != 0) {
                lib.closeDevice(st, ctx);
                throw Check.fail("fcntl(async_fd, O_NONBLOCK)", nb, name, null);
            }
            c.usage.add(Usage.Kind.CONTEXT, 1, Usage.CTX_BYTES);
            return c;
        }
    }

    void checkOpen() {
        if (closed.get()) {
            throw new ClosedException("context " + name);
        }
    }

    @Override
    public IbvDevice device() {
        return device;
    }

    @Override
    public DeviceCapabilities capabilities() {
        return device.capabilities();
    }

    @Override
    public ContextOptions options() {
        return options;
    }

    /** The provider environment knobs that were in force when this context was opened ({@code NAME=value ...}). */
    String environment() {
        return env;
    }

    @Override
    public ProtectionDomain allocPd() {
        checkOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = Native.callState(a);
            MemorySegment pd = lib.allocPd(st, ctx);
            if (pd.equals(MemorySegment.NULL)) {
                throw Check.fail("ibv_alloc_pd", Native.errno(st), name, null);
            }
            IbvPd p = new IbvPd(this, pd, null, null);
            synchronized (this) {
                pds.add(p);
            }
            usage.add(Usage.Kind.PD, 1, Usage.PD_BYTES);
            return p;
        }
    }

    @Override
    public CompletionQueue createCq(CqOptions options) {
        checkOpen();
        DeviceCapabilities caps = capabilities();
        if (options.depth() > caps.maxCqe()) {
            throw new VerbsException("ibv_create_cq", Errno.EINVAL, name,
                    "depth " + options.depth() + " exceeds max_cqe " + caps.maxCqe());
        }
        IbvCq cq = IbvCq.create(this, options);
        synchronized (this) {
            cqs.add(cq);
            if (uars != null) {
                uars.cqCreated();
            }
        }
        usage.add(Usage.Kind.CQ, 1, Usage.cqBytes(cq.depth()));
        return cq;
    }

    @Override
    public ThreadDomain allocTd(TdSharing sharing) {
        checkOpen();
        MemorySegment alloc = ExtOps.op(ctx, "alloc_td");
        MemorySegment dealloc = ExtOps.op(ctx, "dealloc_td");
        if (alloc == null || dealloc == null) {
            throw new UnsupportedFeatureException("ibv_alloc_td", name, "thread domains");
        }
        MemorySegment td = allocTdRaw(alloc);
        MemorySegment partner = MemorySegment.NULL;
        if (sharing == TdSharing.INDEPENDENT) {
            // v44 has no flag for a page per TD: allocate the partner that would share it and leave it unused.
            try {
                partner = allocTdRaw(alloc);
            } catch (VerbsException e) {
                dev.scalep.verbs.ffm.Ops.destroy(dealloc, td);
                throw e;
            }
        }
        IbvTd t;
        synchronized (this) {
            t = new IbvTd(this, td, partner, dealloc, sharing,
                    uars == null ? -1 : uars.allocTd(sharing == TdSharing.INDEPENDENT));
            tds.add(t);
        }
        usage.add(Usage.Kind.TD, 1, 0);
        return t;
    }

    private MemorySegment allocTdRaw(MemorySegment alloc) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = Native.callState(a);
            MemorySegment td = dev.scalep.verbs.ffm.Ops.createWithAttr(st, alloc, ctx,
                    a.allocate(IbvStructs.IBV_TD_INIT_ATTR));
            if (td.equals(MemorySegment.NULL)) {
                throw Check.fail("ibv_alloc_td", Native.errno(st), name, "thread domains", null);
            }
            return td;
        }
    }

    @Override
    public ResourceUsage resources() {
        ResourceUsage r = usage.snapshot();
        synchronized (this) {
            return uars == null ? r : r.plus(new ResourceUsage(0, 0, 0, 0, 0, 0, 0, uars.pages(), uars.uuars(),
                    uars.pagesInUse(), uars.uuarsInUse(), 0));
        }
    }

    /** The register the driver's model gives a new QP (its TD's, or the static/dynamic assignment); -1 off mlx5. */
    synchronized int assignUuar(IbvTd td) {
        return uars == null ? -1 : uars.assignQp(td == null ? -1 : td.uuar());
    }

    /** A QP on {@code reg} is gone. */
    synchronized void releaseUuar(int reg) {
        if (uars != null && reg >= 0) {
            uars.releaseQp(reg);
        }
    }

    /** A thread domain on {@code reg} is gone. */
    synchronized void releaseTd(int reg) {
        if (uars != null && reg >= 0) {
            uars.freeTd(reg);
        }
    }

    @Override
    public String uarDescription() {
        return switch (device.kind()) {
            case MLX5 -> "mlx5: " + env + " (" + options.uarMode().name().toLowerCase() + " requested); "
                    + describeUars();
            case EFA -> "efa: per-QP doorbells, no UARs to share";
            case RXE -> "rxe: software device, no UARs";
            case OTHER -> device.name() + ": no UAR accounting";
        };
    }

    private synchronized String describeUars() {
        return uars.describe();
    }

    /**
     * {@code poll(2)} on the non-blocking {@code async_fd} in slices of at most 100 ms (so a close
     * is noticed), then {@code ibv_get_async_event} and {@code ibv_ack_async_event} under one lock
     * that {@link #close()} also takes: no event is ever held unacknowledged across a destroy.
     */
    @Override
    public AsyncEvent pollAsyncEvent(long timeoutNanos) {
        long deadline = System.nanoTime() + Math.max(0, timeoutNanos);
        while (true) {
            AsyncEvent e = readAsyncEvent();
            if (e != null) {
                return e;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            int ms = (int) Math.min(100, Math.max(1, (left + 999_999) / 1_000_000));
            int r = Native.pollIn(asyncFd, ms);
            if (r < 0 && -r != Errno.EINTR) {
                throw Check.fail("poll(async_fd)", -r, name, null);
            }
        }
    }

    private AsyncEvent readAsyncEvent() {
        synchronized (asyncLock) {
            checkOpen();
            try (Arena a = Arena.ofConfined()) {
                MemorySegment ev = a.allocate(IbvStructs.IBV_ASYNC_EVENT);
                MemorySegment st = Native.callState(a);
                if (lib.getAsyncEvent(st, ctx, ev) != 0) {
                    int errno = Native.errno(st);
                    if (errno == Errno.EAGAIN || errno == Errno.EINTR) {
                        return null;
                    }
                    throw Check.fail("ibv_get_async_event", errno, name, null);
                }
                try {
                    return toEvent(ev);
                } finally {
                    lib.ackAsyncEvent(ev);
                }
            }
        }
    }

    /** The Java view of a fetched, not yet acknowledged event (its element pointer is still valid). */
    private AsyncEvent toEvent(MemorySegment ev) {
        int type = ev.get(JAVA_INT, IbvStructs.AE_EVENT_TYPE);
        if (AsyncEvent.isPortEvent(type)) {
            return new AsyncEvent(type, null, -1, null, null, ev.get(JAVA_INT, IbvStructs.AE_PORT_NUM));
        }
        MemorySegment el = ev.get(ADDRESS, IbvStructs.AE_ELEMENT);
        long addr = el.address();
        synchronized (this) {
            if (AsyncEvent.isQpEvent(type)) {
                int qpNum = addr == 0 ? -1
                        : el.reinterpret(IbvStructs.IBV_QP.byteSize()).get(JAVA_INT, IbvStructs.QP_NUM);
                for (IbvQp q : qps) {
                    if (q.qp.address() == addr) {
                        return new AsyncEvent(type, q, qpNum, null, null, 0);
                    }
                }
                return new AsyncEvent(type, null, qpNum, null, null, 0);
            }
            if (AsyncEvent.isCqEvent(type)) {
                for (IbvCq c : cqs) {
                    if (c.cq.address() == addr) {
                        return AsyncEvent.ofCq(type, c);
                    }
                }
            } else if (AsyncEvent.isSrqEvent(type)) {
                for (IbvSrq q : srqs) {
                    if (q.srq.address() == addr) {
                        return AsyncEvent.ofSrq(type, q);
                    }
                }
            }
        }
        return new AsyncEvent(type, null, -1, null, null, 0);
    }

    @Override
    public boolean isClosed() {
        return closed.get();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        synchronized (asyncLock) {
            // a reader between ibv_get_async_event and its ack has finished; later readers see closed
        }
        RuntimeException first = null;
        List<List<? extends IbvResource>> order;
        synchronized (this) {
            order = List.of(new ArrayList<>(qps), new ArrayList<>(ahs), new ArrayList<>(mrs), new ArrayList<>(srqs),
                    new ArrayList<>(cqs), new ArrayList<>(parentDomains), new ArrayList<>(tds), new ArrayList<>(pds));
        }
        for (List<? extends IbvResource> kind : order) {
            for (IbvResource r : kind.reversed()) {
                try {
                    r.destroy();
                } catch (RuntimeException e) {
                    first = first == null ? e : first;
                }
            }
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = Native.callState(a);
            if (lib.closeDevice(st, ctx) != 0) {
                first = first == null ? Check.fail("ibv_close_device", Native.errno(st), name, null) : first;
            }
        }
        usage.add(Usage.Kind.CONTEXT, -1, Usage.CTX_BYTES);
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "context " + name;
    }
}
