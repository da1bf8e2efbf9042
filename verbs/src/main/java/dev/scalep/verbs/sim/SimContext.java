package dev.scalep.verbs.sim;

import dev.scalep.verbs.ClosedException;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.TdSharing;
import dev.scalep.verbs.ThreadDomain;
import dev.scalep.verbs.UnsupportedFeatureException;
import dev.scalep.verbs.VerbsException;

import dev.scalep.verbs.AsyncEvent;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A simulated device context. Control-path methods are serialised by one context lock; the data
 * path never takes it.
 *
 * <p><b>mlx5 UAR model.</b> CLASSIC ({@code ContextOptions.UarMode.CLASSIC}): {@code totalUuars/2}
 * UAR pages and {@code totalUuars} data-path uUARs at open; uUAR i lives on page i/2. uUAR 0 is high
 * latency (no lock, no BlueFlame), the last {@code lowLatencyUuars} are low latency (one QP each,
 * no lock), the rest medium (shared, locked). A QP without a TD takes a free low-latency uUAR
 * first, then the least-used medium uUAR (ties to the lowest index), and uUAR 0 only when no medium
 * uUAR exists. DYNAMIC: nothing at open; a QP without a TD gets a dedicated lock-free register while
 * fewer than 4 are in use (2 per page, freed with the QP), then a new shared locked register while
 * fewer than 12 exist (2 per page, kept until close), then the least-used shared register; the first
 * CQ maps one page for CQ doorbells. Thread domains (both modes): a DEFAULT TD takes the free second
 * register of the lowest page opened by an earlier DEFAULT TD, else opens a page (so even TDs open a
 * page and odd TDs share it); an INDEPENDENT TD always opens its own page. Dynamic pages (TD and
 * dynamic-mode QP pages) are limited to {@code maxDynamicUars} (512) per context and take the lowest
 * free page index after the static pages. A page is unmapped when its last register is freed.
 * Accounting counts as the research does: every mapped page with both of its data-path uUARs, used or
 * idle (the dynamic mode's CQ page has none), and separately the pages and uUARs a QP rings.
 *
 * <p><b>Asynchronous events</b> (as mlx5 raises them; an error that a completion reports raises no
 * event on the side that gets that completion): a CQ overrun raises {@code CQ_ERR} for the CQ and
 * {@code QP_FATAL} for every QP attached to it (IBA: CQ overflow is a local work queue catastrophic
 * error); an RC responder that finds an RDMA write/read's rkey, range or access invalid moves to ERR
 * and raises {@code QP_ACCESS_ERR} (IBA local access violation; no receive WQE exists to report it);
 * a QP attached to an SRQ that enters ERR raises {@code QP_LAST_WQE_REACHED}. The requester's
 * {@code REM_ACCESS_ERR}, {@code RETRY_EXC_ERR}, {@code RNR_RETRY_EXC_ERR} are completions only. The
 * queue holds {@value #ASYNC_QUEUE} events; further events are dropped and counted
 * ({@link #asyncEventsLost()}), like a full kernel event file.
 */
final class SimContext implements Context {
    static final int DYN_DEDICATED_MAX = 4;
    static final int DYN_SHARED_MAX = 12;

    final SimDevice device;
    final ContextOptions options;
    final DeviceCapabilities caps;
    final Accounting accounting;
    final Object ctl = new Object();
    private final AtomicBoolean closed = new AtomicBoolean();

    static final int ASYNC_QUEUE = 256;
    private final ReentrantLock asyncLock = new ReentrantLock();
    private final Condition asyncReady = asyncLock.newCondition();
    private final ArrayDeque<AsyncEvent> asyncEvents = new ArrayDeque<>();
    private long asyncLost;

    final Set<SimPd> pds = new LinkedHashSet<>();
    final Set<SimPd> parents = new LinkedHashSet<>();
    final Set<SimMr> mrs = new LinkedHashSet<>();
    final Set<SimQp> qps = new LinkedHashSet<>();
    final Set<SimAh> ahs = new LinkedHashSet<>();
    final Set<SimSrq> srqs = new LinkedHashSet<>();
    final Set<SimCq> cqs = new LinkedHashSet<>();
    final Set<SimTd> tds = new LinkedHashSet<>();

    private final boolean mlx5;
    private final List<SimUuar> staticUuars = new ArrayList<>();
    private final int staticPages;
    private final BitSet dynPagesUsed = new BitSet();
    private final TreeMap<Integer, Page> dynPages = new TreeMap<>();
    private final List<SimUuar> sharedRegs = new ArrayList<>();
    private int dedicatedInUse;
    private int cqPage = -1;

    /** A dynamically mapped UAR page and its two data-path registers. */
    private static final class Page {
        final int index;
        final SimUuar.Kind purpose;
        final boolean exclusive;
        final SimUuar[] regs = new SimUuar[2];
        final SimUarPage uar;

        Page(int index, SimUuar.Kind purpose, boolean exclusive) {
            this.index = index;
            this.uar = new SimUarPage(index);
            this.purpose = purpose;
            this.exclusive = exclusive;
        }
    }

    SimContext(SimDevice device, ContextOptions options) {
        this.device = device;
        this.options = options;
        this.mlx5 = device.kind() == dev.scalep.verbs.DeviceKind.MLX5;
        DeviceCapabilities c = device.capabilities();
        if (mlx5 && c.blueFlame() != options.blueFlame()) {
            c = c.withBlueFlame(options.blueFlame());
        }
        this.caps = c;
        this.accounting = new Accounting(device.accounting);
        accounting.add(Accounting.CONTEXTS, 1);
        accounting.add(Accounting.MEMORY, Accounting.CTX_BYTES);
        if (mlx5 && options.uarMode() == ContextOptions.UarMode.CLASSIC) {
            int total = options.totalUuars();
            int low = options.lowLatencyUuars();
            SimUarPage page = null;
            for (int i = 0; i < total; i++) {
                SimUuar.Kind k = i == 0 ? SimUuar.Kind.HIGH_LATENCY
                        : i >= total - low ? SimUuar.Kind.LOW_LATENCY : SimUuar.Kind.MEDIUM;
                if ((i & 1) == 0) {
                    page = new SimUarPage(i / 2);
                }
                staticUuars.add(new SimUuar(i, page, k));
            }
            staticPages = total / 2;
            accounting.add(Accounting.UAR_PAGES, staticPages);
            accounting.add(Accounting.UUARS, total);
        } else {
            staticPages = 0;
        }
    }

    void checkOpen() {
        if (closed.get()) {
            throw new ClosedException("context on " + device.name());
        }
    }

    boolean mlx5() {
        return mlx5;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public DeviceCapabilities capabilities() {
        return caps;
    }

    @Override
    public ContextOptions options() {
        return options;
    }

    @Override
    public ProtectionDomain allocPd() {
        synchronized (ctl) {
            checkOpen();
            SimPd pd = new SimPd(this, null, null);
            pds.add(pd);
            accounting.add(Accounting.PDS, 1);
            accounting.add(Accounting.MEMORY, Accounting.PD_BYTES);
            return pd;
        }
    }

    @Override
    public CompletionQueue createCq(CqOptions o) {
        synchronized (ctl) {
            checkOpen();
            if (caps.extendedCqOnly() && !o.extended()) {
                throw new UnsupportedFeatureException("ibv_create_cq", device.name(),
                        "legacy CQs (create it extended: CqOptions.withExtended(true))");
            }
            if (o.depth() > caps.maxCqe()) {
                throw new VerbsException(o.extended() ? "ibv_create_cq_ex" : "ibv_create_cq", Errno.EINVAL,
                        device.name(), "cqe=" + o.depth() + " exceeds max_cqe=" + caps.maxCqe());
            }
            if (cqs.size() >= caps.maxCq()) {
                throw new VerbsException("ibv_create_cq", Errno.ENOMEM, device.name(), "max_cq=" + caps.maxCq());
            }
            // mlx5 rounds cqe+1 up to a power of two and reports one less.
            int depth = mlx5 ? Math.min(Integer.highestOneBit(o.depth()) << 1, 1 << 22) - 1 : o.depth();
            if (mlx5 && depth < o.depth()) {
                depth = o.depth();
            }
            if (mlx5 && options.uarMode() == ContextOptions.UarMode.DYNAMIC && cqPage < 0) {
                cqPage = allocDynPage(SimUuar.Kind.DYNAMIC_SHARED, "ibv_create_cq");
                dynPages.remove(cqPage);
                accounting.add(Accounting.UAR_PAGES, 1);
            }
            SimCq cq = new SimCq(this, depth, o);
            cqs.add(cq);
            accounting.add(Accounting.CQS, 1);
            accounting.add(Accounting.MEMORY, Accounting.CQ_BYTES_PER_CQE * depth);
            return cq;
        }
    }

    @Override
    public ThreadDomain allocTd(TdSharing sharing) {
        synchronized (ctl) {
            checkOpen();
            if (!caps.threadDomains()) {
                throw new UnsupportedFeatureException("ibv_alloc_td", device.name(), "thread domains");
            }
            if (sharing == null) {
                throw new VerbsException("ibv_alloc_td", Errno.EINVAL, device.name(), "sharing must not be null");
            }
            SimUuar u = null;
            if (sharing == TdSharing.DEFAULT) {
                for (Page p : dynPages.values()) {
                    if (p.purpose == SimUuar.Kind.THREAD_DOMAIN && !p.exclusive && (p.regs[0] == null || p.regs[1] == null)) {
                        int slot = p.regs[0] == null ? 0 : 1;
                        u = p.regs[slot] = new SimUuar(p.index * 2 + slot, p.uar, SimUuar.Kind.THREAD_DOMAIN);
                        break; // the page and both its uUARs were counted when it opened
                    }
                }
            }
            if (u == null) {
                int idx = allocDynPage(SimUuar.Kind.THREAD_DOMAIN, "ibv_alloc_td");
                Page p = new Page(idx, SimUuar.Kind.THREAD_DOMAIN, sharing == TdSharing.INDEPENDENT);
                dynPages.put(idx, p);
                accounting.add(Accounting.UAR_PAGES, 1);
                accounting.add(Accounting.UUARS, 2);
                u = p.regs[0] = new SimUuar(idx * 2, p.uar, SimUuar.Kind.THREAD_DOMAIN);
            }
            accounting.add(Accounting.TDS, 1);
            SimTd td = new SimTd(this, sharing, u);
            tds.add(td);
            return td;
        }
    }

    /** Reserve the lowest free dynamic page index; caller holds {@link #ctl}. */
    private int allocDynPage(SimUuar.Kind purpose, String verb) {
        int used = dynPagesUsed.cardinality();
        if (used >= caps.maxDynamicUars()) {
            throw new VerbsException(verb, Errno.ENOMEM, device.name(), "max_dynamic_uars=" + caps.maxDynamicUars()
                    + " UAR pages already mapped in this context");
        }
        int bit = dynPagesUsed.nextClearBit(0);
        dynPagesUsed.set(bit);
        return staticPages + bit;
    }

    /** Free register {@code u} of a dynamic page; unmaps the page when both registers are free. */
    private void freeDynRegister(SimUuar u) {
        Page p = dynPages.get(u.page);
        if (p == null) {
            return;
        }
        p.regs[u.index & 1] = null;
        if (p.regs[0] == null && p.regs[1] == null) {
            dynPages.remove(p.index);
            dynPagesUsed.clear(p.index - staticPages);
            accounting.add(Accounting.UAR_PAGES, -1);
            accounting.add(Accounting.UUARS, -2);
        }
    }

    void freeTd(SimTd td) {
        freeDynRegister(td.reg);
        accounting.add(Accounting.TDS, -1);
        tds.remove(td);
    }

    /** The register a new QP rings (caller holds {@link #ctl}); null on devices without UARs. */
    SimUuar assignUuar(SimTd td) {
        if (!mlx5) {
            return null;
        }
        SimUuar u;
        if (td != null) {
            u = td.reg;
        } else if (options.uarMode() == ContextOptions.UarMode.CLASSIC) {
            u = null;
            for (SimUuar s : staticUuars) {
                if (s.kind == SimUuar.Kind.LOW_LATENCY && s.qps == 0) {
                    u = s;
                    break;
                }
            }
            if (u == null) {
                for (SimUuar s : staticUuars) {
                    if (s.kind == SimUuar.Kind.MEDIUM && (u == null || s.qps < u.qps)) {
                        u = s;
                    }
                }
            }
            if (u == null) {
                u = staticUuars.get(0);
            }
        } else if (dedicatedInUse < DYN_DEDICATED_MAX) {
            u = dynRegister(SimUuar.Kind.DYNAMIC_DEDICATED, "ibv_create_qp");
            dedicatedInUse++;
        } else if (sharedRegs.size() < DYN_SHARED_MAX) {
            u = dynRegister(SimUuar.Kind.DYNAMIC_SHARED, "ibv_create_qp");
            sharedRegs.add(u);
        } else {
            u = null;
            for (SimUuar s : sharedRegs) {
                if (u == null || s.qps < u.qps) {
                    u = s;
                }
            }
        }
        if (u.qps++ == 0) {
            accounting.add(Accounting.UUARS_IN_USE, 1);
            if (!inUse(partnerOf(u))) {
                accounting.add(Accounting.UAR_PAGES_IN_USE, 1);
            }
        }
        return u;
    }

    private SimUuar dynRegister(SimUuar.Kind kind, String verb) {
        for (Page p : dynPages.values()) {
            if (p.purpose == kind && (p.regs[0] == null || p.regs[1] == null)) {
                int slot = p.regs[0] == null ? 0 : 1;
                return p.regs[slot] = new SimUuar(p.index * 2 + slot, p.uar, kind);
            }
        }
        int idx = allocDynPage(kind, verb);
        Page p = new Page(idx, kind, false);
        dynPages.put(idx, p);
        accounting.add(Accounting.UAR_PAGES, 1);
        accounting.add(Accounting.UUARS, 2);
        return p.regs[0] = new SimUuar(idx * 2, p.uar, kind);
    }

    /** A QP stops using {@code u} (caller holds {@link #ctl}). */
    void releaseUuar(SimUuar u) {
        if (u == null) {
            return;
        }
        if (--u.qps == 0) {
            accounting.add(Accounting.UUARS_IN_USE, -1);
            if (!inUse(partnerOf(u))) {
                accounting.add(Accounting.UAR_PAGES_IN_USE, -1);
            }
            if (u.kind == SimUuar.Kind.DYNAMIC_DEDICATED) {
                dedicatedInUse--;
                freeDynRegister(u);
            }
        }
    }

    /** The other data-path register of {@code u}'s page (null when that slot is not allocated). */
    private SimUuar partnerOf(SimUuar u) {
        if (u.page < staticPages) {
            return staticUuars.get(u.index ^ 1);
        }
        Page p = dynPages.get(u.page);
        return p == null ? null : p.regs[(u.index & 1) ^ 1];
    }

    private static boolean inUse(SimUuar u) {
        return u != null && u.qps > 0;
    }

    /** Static uUARs (classic mode), for tests and reports. */
    List<SimUuar> staticUuars() {
        return staticUuars;
    }

    @Override
    public ResourceUsage resources() {
        return accounting.live();
    }

    @Override
    public String uarDescription() {
        synchronized (ctl) {
            if (!mlx5) {
                return "none: " + device.name() + " rings a per-QP doorbell; no UARs";
            }
            String bf = options.blueFlame() ? "BlueFlame on" : "BlueFlame off (MLX5_SHUT_UP_BF=1)";
            int tdPages = 0;
            int qpPages = 0;
            for (Page p : dynPages.values()) {
                if (p.purpose == SimUuar.Kind.THREAD_DOMAIN) {
                    tdPages++;
                } else {
                    qpPages++;
                }
            }
            if (options.uarMode() == ContextOptions.UarMode.CLASSIC) {
                int low = options.lowLatencyUuars();
                int total = options.totalUuars();
                return "classic: " + staticPages + " pages, " + total + " uUARs (" + low + " low-latency, "
                        + Math.max(0, total - 1 - low) + " medium, uUAR 0 high-latency), " + tdPages
                        + " thread-domain pages, " + bf;
            }
            return "dynamic: " + qpPages + " QP pages (" + dedicatedInUse + " dedicated, " + sharedRegs.size()
                    + " shared registers), " + (cqPage >= 0 ? 1 : 0) + " CQ page, " + tdPages
                    + " thread-domain pages, " + bf;
        }
    }

    /** Queue an asynchronous event (simulated NIC, any thread; never blocks on the data path's locks). */
    void raise(AsyncEvent e) {
        asyncLock.lock();
        try {
            if (closed.get()) {
                return;
            }
            if (asyncEvents.size() >= ASYNC_QUEUE) {
                asyncLost++;
                return;
            }
            asyncEvents.add(e);
            asyncReady.signal();
        } finally {
            asyncLock.unlock();
        }
    }

    /** Events dropped because the queue was full. */
    long asyncEventsLost() {
        asyncLock.lock();
        try {
            return asyncLost;
        } finally {
            asyncLock.unlock();
        }
    }

    @Override
    public AsyncEvent pollAsyncEvent(long timeoutNanos) {
        long left = Math.max(0, timeoutNanos);
        asyncLock.lock();
        try {
            while (true) {
                checkOpen();
                AsyncEvent e = asyncEvents.poll();
                if (e != null) {
                    return e;
                }
                if (left <= 0) {
                    return null;
                }
                try {
                    left = asyncReady.awaitNanos(left);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
        } finally {
            asyncLock.unlock();
        }
    }

    @Override
    public boolean isClosed() {
        return closed.get();
    }

    @Override
    public void close() {
        synchronized (ctl) {
            if (!closed.compareAndSet(false, true)) {
                return;
            }
            for (SimQp q : new ArrayList<>(qps)) {
                q.destroy();
            }
            for (SimAh a : new ArrayList<>(ahs)) {
                a.destroy();
            }
            for (SimMr m : new ArrayList<>(mrs)) {
                m.destroy();
            }
            for (SimSrq s : new ArrayList<>(srqs)) {
                s.destroy();
            }
            for (SimCq c : new ArrayList<>(cqs)) {
                c.destroy();
            }
            for (SimPd p : new ArrayList<>(parents)) {
                p.destroy();
            }
            for (SimTd t : new ArrayList<>(tds)) {
                t.destroy();
            }
            for (SimPd p : new ArrayList<>(pds)) {
                p.destroy();
            }
            for (SimUuar u : staticUuars) {
                u.qps = 0;
            }
            if (!staticUuars.isEmpty()) {
                accounting.add(Accounting.UAR_PAGES, -staticPages);
                accounting.add(Accounting.UUARS, -staticUuars.size());
            }
            for (SimUuar u : sharedRegs) {
                freeDynRegister(u);
            }
            sharedRegs.clear();
            if (cqPage >= 0) {
                dynPagesUsed.clear(cqPage - staticPages);
                accounting.add(Accounting.UAR_PAGES, -1);
                cqPage = -1;
            }
            accounting.add(Accounting.MEMORY, -Accounting.CTX_BYTES);
            accounting.add(Accounting.CONTEXTS, -1);
            device.detach();
        }
        asyncLock.lock();
        try {
            asyncEvents.clear();
            asyncReady.signalAll(); // waiters see the context closed
        } finally {
            asyncLock.unlock();
        }
    }

    @Override
    public String toString() {
        return "context on " + device.name();
    }
}
