package dev.scalep.endpoints;

import dev.scalep.policies.EndpointClass;
import dev.scalep.policies.SharingConfig;
import dev.scalep.policies.TdMode;
import dev.scalep.threading.ChainedPoster;
import dev.scalep.threading.CombiningPoster;
import dev.scalep.threading.CompletionRouter;
import dev.scalep.threading.ExclusivePoster;
import dev.scalep.threading.LockedPoster;
import dev.scalep.threading.SendPath;
import dev.scalep.verbs.Access;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.SharedReceiveQueue;
import dev.scalep.verbs.ThreadDomain;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.counters.CounterGroup;
import dev.scalep.verbs.counters.Counters;
import dev.scalep.verbs.counters.Events;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * The resource-sharing manager: builds exactly the verbs resources a {@link SharingConfig} implies
 * for {@code threads} threads on one device (contexts, PDs, MRs, TDs with parent domains, QPs, CQs,
 * SRQs, no more) and hands each application thread a thread-bound {@link Endpoint}.
 *
 * <p>Placement: {@link EndpointPlan#place(int)} names each thread's instances (resource axis
 * {@code a} with {@code k} threads per instance gives thread {@code t} instance {@code t / k}; nesting
 * (PD in CTX, MR/QP/SRQ in PD, CQ in CTX) is guaranteed by {@link SharingConfig}), and building is
 * one loop per axis over the plan. TDs are allocated per QP, in QP order,
 * {@link TdMode#tdsPerThread()} each: {@code dedicated-2x} allocates two maximally independent TDs
 * per QP (a UAR page each) and binds the QP to the first (even) one, so each thread's page is its
 * own and the odd TDs' pages stay idle; the odd TD also gets a QP that no thread uses. Initiation
 * ({@link EndpointPlan#sendPath(int)}): a per-thread QP gets an {@link ExclusivePoster} or, with a
 * WR pool or two-SGE posts, a {@link ChainedPoster}; a shared QP a {@link LockedPoster} or
 * {@link CombiningPoster}.
 * Completion: every CQ is drained by a {@link CompletionRouter} into per-owner rings.
 *
 * <p>On a device that lacks a feature the manager substitutes the nearest setting and lists it in
 * {@link #substitutions()}: no thread domains (EFA, rxe) → {@code td=none} (QPs on the driver's
 * static doorbells, contexts as configured); out-of-order completions or no unsignaled support →
 * every request signaled; inline above the device limit → the limit; no SRQ → per-QP receive queues;
 * BlueFlame asked for on a device without it → off; a WR pool or two-SGE posts on a shared QP (whose
 * poster builds its own lists) or two-SGE posts on a device with one send SGE → off; a CQ depth
 * below what its queues can complete → raised; CQ moderation the device refuses → none; an SRQ depth
 * above the device limit → the limit.
 *
 * <p>Policy features on the data path ({@link #open(Device, EndpointClass, int)} maps a class with
 * {@link EndpointOptions#from}): postlist and unsignaled interval on every send path; inline below
 * the threshold; per-thread QPs with a WR pool post chains of pre-initialised records
 * ({@link ChainedPoster}); CQs are created at the policy's depth and moderated; endpoints on an SRQ
 * take their share of its depth and repost consumed receives in batches. {@link #applied()} lists
 * what is in force.
 *
 * <p>Control-path methods are thread-safe; {@link #close()} must not race with endpoint use.
 */
public final class EndpointManager implements AutoCloseable {
    private static final AtomicInteger SERIAL = new AtomicInteger();
    /** This manager's number in the process: its endpoints' counters are {@code m<serial>.ep<i>}. */
    private final int serial = SERIAL.incrementAndGet();
    private final Device device;
    private final SharingConfig requested;
    private final int threads;
    private final EndpointOptions options;
    /** Settings and substitutions, resolved before anything is built. */
    private final EndpointPlan plan;
    /** The plan's substitutions, plus what the device refuses while building (CQ moderation). */
    private final List<Substitution> substitutions;
    private final TdMode td;
    private final boolean useSrq;
    final QpType qpType;
    private final Map<String, String> applied = new LinkedHashMap<>();

    final List<Context> contexts = new ArrayList<>();
    final List<ProtectionDomain> pds = new ArrayList<>();
    final List<MemoryRegion> mrs = new ArrayList<>();
    final List<MemorySegment> mrMemory = new ArrayList<>();
    final List<QueuePair> qps = new ArrayList<>();
    /** The unused partner QPs of {@code dedicated-2x} (on the odd TDs). */
    final List<QueuePair> partnerQps = new ArrayList<>();
    final List<CompletionQueue> cqs = new ArrayList<>();
    final List<SharedReceiveQueue> srqs = new ArrayList<>();
    final List<SendPath> paths = new ArrayList<>();
    final List<CompletionRouter> routers = new ArrayList<>();
    final List<AddressHandle> ahs = new ArrayList<>();
    final Endpoint[] endpoints;
    private final boolean[] taken;
    private EndpointManager peer;
    /** Per peer, the QPNs of its QPs this manager's QP {@code k} sends to (set by connect). */
    private int[][] peerQpns;
    /** Destinations each QP reaches: 1 for a pair, the other ranks for a connectionless QP of a world. */
    final int peers;
    boolean connected;
    private boolean closed;

    private EndpointManager(Device device, EndpointPlan plan) {
        this.device = device;
        this.plan = plan;
        this.requested = plan.requested();
        this.threads = plan.threads();
        this.options = plan.options();
        this.substitutions = new ArrayList<>(plan.substitutions());
        this.td = plan.td();
        this.useSrq = plan.useSrq();
        this.qpType = plan.qpType();
        this.peers = plan.peers();
        this.endpoints = new Endpoint[threads];
        this.taken = new boolean[threads];
    }

    /**
     * Build the endpoints of {@code threads} threads at sharing level {@code cfg} on {@code device}.
     * Throws {@link IllegalArgumentException} for a bad argument before any verbs call, and the
     * verbs exception of a failed create after destroying what was built.
     */
    public static EndpointManager open(Device device, SharingConfig cfg, int threads, EndpointOptions opts) {
        return open(device, cfg, threads, opts, 1);
    }

    /** As {@link #open(Device, SharingConfig, int, EndpointOptions)}, with QPs that reach {@code peers} destinations. */
    static EndpointManager open(Device device, SharingConfig cfg, int threads, EndpointOptions opts, int peers) {
        if (threads < 1 || threads > dev.scalep.threading.WrIds.MAX_OWNERS) {
            throw new IllegalArgumentException("threads must be in 1.." + dev.scalep.threading.WrIds.MAX_OWNERS + ": " + threads);
        }
        cfg.checkThreads(threads);
        EndpointOptions o = opts == null ? EndpointOptions.DEFAULTS : opts;
        // Port, GID, MTU and read/atomic depths against the device, before anything is allocated.
        o.connection().check("ibv_create_qp", device.name(), device.capabilities(), device.ports());
        EndpointPlan plan = EndpointPlan.resolve(device.name(), device.capabilities(), cfg, threads, o, peers);
        EndpointManager m = new EndpointManager(device, plan);
        try {
            m.build();
            m.describe();
        } catch (RuntimeException | Error e) {
            m.close();
            throw e;
        }
        return m;
    }

    /**
     * Build the endpoints of an effective policy class ({@link dev.scalep.policies.EffectivePolicy}):
     * its sharing level and every feature, mapped by {@link EndpointOptions#from}. What the device
     * cannot honour is in {@link #substitutions()}.
     */
    public static EndpointManager open(Device device, EndpointClass c, int threads) {
        return asWritten(open(device, c.sharing(), threads, EndpointOptions.from(c, device.capabilities())), c);
    }

    /**
     * A class with {@code on-unsupported: fail} runs as written or not at all: when the endpoint
     * layer had to change anything for {@code m} (a CQ raised for its queues, signaling on an
     * out-of-order device, ...), {@code m} is closed before any traffic and this throws
     * {@link IllegalArgumentException} listing the changes. Other classes pass through (their
     * changes stay in {@link #substitutions()}).
     */
    public static EndpointManager asWritten(EndpointManager m, EndpointClass c) {
        if (c.onUnsupported() != dev.scalep.policies.OnUnsupported.FAIL || m.substitutions().isEmpty()) {
            return m;
        }
        String changes = m.substitutions().stream().map(Substitution::toString).collect(Collectors.joining("; "));
        m.close();
        throw new IllegalArgumentException("class " + c.name() + " (on-unsupported: fail) cannot run as written on "
                + m.device.name() + " with " + m.threads + " threads: " + changes);
    }

    private void build() {
        EndpointPlan p = plan;
        EndpointOptions o = options;
        int regionBytes = 3 * o.bufferBytes() + o.recvDepth() * o.recvSlotBytes();
        int stride = p.bufShared() ? regionBytes : align(regionBytes, 64);

        for (int i = 0; i < p.contexts(); i++) {
            contexts.add(device.open(o.context()));
        }
        for (int i = 0; i < p.pds(); i++) {
            pds.add(contexts.get(p.place(p.firstOfPd(i)).context()).allocPd());
        }
        for (int i = 0; i < p.mrs(); i++) {
            // PD memory: on the simulator it is shared memory a peer process's NIC can map
            ProtectionDomain pd = pds.get(p.place(p.firstOfMr(i)).pd());
            MemorySegment mem = pd.allocate((long) stride * p.mrMembers(i), 4096);
            mrMemory.add(mem);
            mrs.add(pd.register(mem, Access.ALL_RDMA));
        }
        boolean moderate = true;
        for (int i = 0; i < p.cqs(); i++) {
            CqOptions co = CqOptions.of(p.cqDepths()[i]).withExtended(device.capabilities().extendedCqOnly());
            CompletionQueue cq = contexts.get(p.place(p.firstOfCq(i)).context()).createCq(co);
            cqs.add(cq);
            if (moderate && (o.cqModerationCount() > 0 || o.cqModerationPeriodUs() > 0)) {
                try {
                    cq.moderate(o.cqModerationCount(), o.cqModerationPeriodUs());
                } catch (VerbsException e) {
                    moderate = false;
                    substitutions.add(new Substitution("cq.moderation", o.cqModerationCount() + "/" + o.cqModerationPeriodUs() + "us",
                            "none", device.name() + " refused ibv_modify_cq: " + e.getMessage()));
                }
            }
            routers.add(new CompletionRouter(cq, p.cqMembers(i), o.sendDepth() + o.recvDepth(), o.pollBatch()));
        }
        for (int i = 0; i < p.srqs(); i++) {
            srqs.add(pds.get(p.place(p.firstOfSrq(i)).pd()).createSrq(p.srqDepths()[i], 1));
        }
        Object[] recvLocks = new Object[p.qps()];
        for (int i = 0; i < p.qps(); i++) {
            EndpointPlan.Placement first = p.place(p.firstOfQp(i));
            ProtectionDomain via = parentDomain(first);
            CompletionQueue cq = cqs.get(first.cq());
            SharedReceiveQueue srq = first.srq() < 0 ? null : srqs.get(first.srq());
            QpInitAttr attr = new QpInitAttr(qpType, cq, cq, srq, o.sendDepth(), srq == null ? p.qpMembers(i) * o.recvDepth() : 0,
                    p.sgeHeaderPayload() ? 2 : 1, 1, p.inlineThreshold(), false);
            QueuePair qp = via.createQp(attr.withConnection(o.connection()));
            qps.add(qp);
            int owners = p.cqMembers(first.cq());
            // connectionless: per peer its QP of this index, then every QP of every peer (PeerWiring.wire)
            int dests = qpType.connectionless() ? peers * (1 + p.qps()) : peers;
            SendPath path = switch (p.sendPath(i)) {
                case LOCKED -> new LockedPoster(qp, o.sendDepth(), owners, dests, null);
                case COMBINING -> new CombiningPoster(qp, o.sendDepth(), owners, dests, null);
                case CHAINED -> new ChainedPoster(qp, p.chained() ? o.chainPool() : o.postlist(),
                        p.chained() ? o.chainMaxLength() : o.postlist(), owners, dests, null);
                case EXCLUSIVE -> new ExclusivePoster(qp, o.postlist(), owners, dests, null);
            };
            paths.add(path);
            routers.get(first.cq()).route(qp.qpNum(), p.qpMembers(i) > 1 ? -1 : first.owner(), path);
            recvLocks[i] = new Object();
        }
        for (int t = 0; t < threads; t++) {
            EndpointPlan.Placement at = p.place(t);
            int slot = t - p.firstOfMr(at.mr());
            endpoints[t] = new Endpoint(this, new Endpoint.Wiring(at, paths.get(at.qp()), routers.get(at.cq()),
                    qps.get(at.qp()), at.srq() < 0 ? null : srqs.get(at.srq()), mrs.get(at.mr()),
                    mrMemory.get(at.mr()).asSlice((long) slot * stride, regionBytes), recvLocks[at.qp()]));
            if (peers > 1) {
                endpoints[t].peers(peers);
            }
        }
    }

    /**
     * The PD a QP is created through: with thread domains, a parent domain over the QP's first TD.
     * {@code dedicated-2x} allocates a second TD per QP and, as the research did, gives it a QP (with
     * its own CQ) that no thread uses; those partner QPs stay in RESET and are in the resource report
     * because the category really allocates them. The TDs, parent domains and partner CQs are owned
     * and closed by their context.
     */
    private ProtectionDomain parentDomain(EndpointPlan.Placement first) {
        ProtectionDomain pd = pds.get(first.pd());
        ProtectionDomain via = pd;
        Context ctx = contexts.get(first.context());
        EndpointOptions o = options;
        for (int k = 0; k < td.tdsPerThread(); k++) {
            ThreadDomain d = ctx.allocTd(td.tdSharing());
            if (k == 0) {
                via = pd.parentDomain(d);
            } else {
                ProtectionDomain partner = pd.parentDomain(d);
                CompletionQueue pcq = ctx.createCq(CqOptions.of(o.sendDepth() + o.recvDepth())
                        .withExtended(device.capabilities().extendedCqOnly()));
                partnerQps.add(partner.createQp(new QpInitAttr(qpType, pcq, pcq, null, o.sendDepth(), o.recvDepth(),
                        1, 1, 0, false)));
            }
        }
        return via;
    }

    private void describe() {
        EndpointOptions o = options;
        applied.put("queue-depth", Integer.toString(o.sendDepth()));
        EndpointPlan p = plan;
        applied.put("postlist", Integer.toString(p.chained() ? Math.min(o.postlist(), o.chainMaxLength()) : o.postlist()));
        applied.put("unsignaled", Integer.toString(p.signalEvery()));
        applied.put("inline", Integer.toString(p.inlineThreshold()));
        applied.put("blueflame", p.blueFlame() ? "on" : "off");
        applied.put("chained", p.chained() ? "pool " + o.chainPool() + ", max-length " + o.chainMaxLength() : "off");
        applied.put("sge-header-payload", Boolean.toString(p.sgeHeaderPayload()));
        applied.put("srq", useSrq ? "depth " + (srqs.isEmpty() ? 0 : srqs.get(0).maxWr()) + ", " + p.recvSlotsPerEndpoint()
                + " per endpoint, refill-threshold " + p.srqRefillThreshold() + ", refill-batch "
                + Math.min(p.srqRefillBatch(), p.recvSlotsPerEndpoint()) : "none");
        applied.put("cq", "depth " + (cqs.isEmpty() ? 0 : cqs.get(0).depth()) + ", moderation "
                + (o.cqModerationCount() > 0 || o.cqModerationPeriodUs() > 0
                && substitutions.stream().noneMatch(x -> x.setting().equals("cq.moderation"))
                ? o.cqModerationCount() + "/" + o.cqModerationPeriodUs() + "us" : "none"));
        applied.put("srd", "ordering " + o.ordering() + ", atomics-emulation " + o.atomicsEmulation()
                + (qpType == QpType.SRD ? "" : " (in-order device: no effect)"));
    }

    /**
     * The features in force on this manager's data path, after substitutions, keyed like the policy
     * file: queue-depth, postlist (WRs per doorbell), unsignaled, inline, blueflame, chained,
     * sge-header-payload, srq, cq, srd.
     */
    public Map<String, String> applied() {
        return Collections.unmodifiableMap(applied);
    }

    private static int align(int v, int a) {
        return (v + a - 1) / a * a;
    }

    /**
     * Pair endpoint {@code i} of this manager with endpoint {@code i} of {@code other} (another
     * manager in this process with the same thread count and QP layout): QP {@code k} connects to
     * the other's QP {@code k}, receives are posted, each endpoint learns its peer's buffers.
     */
    public synchronized void connect(EndpointManager other) {
        if (other == this) {
            throw new IllegalArgumentException("connect a manager to another one, not to itself");
        }
        if (other.threads != threads || other.qps.size() != qps.size() || other.qpType != qpType) {
            throw new IllegalArgumentException("cannot pair: " + threads + " threads/" + qps.size() + " QPs ("
                    + qpType + ") with " + other.threads + " threads/" + other.qps.size() + " QPs (" + other.qpType + ")");
        }
        if (peer != null || connected) {
            throw new IllegalStateException("already connected");
        }
        synchronized (other) {
            if (other.peer != null || other.connected) {
                throw new IllegalStateException("the other manager is already connected");
            }
            this.peer = other;
            other.peer = this;
            connected = true;
            other.connected = true;
            ManagerAddress mine = ManagerAddress.of(this);
            ManagerAddress theirs = ManagerAddress.of(other);
            peerQpns = new int[][]{qpns(theirs)};
            other.peerQpns = new int[][]{qpns(mine)};
            PeerWiring.wire(this, 0, theirs);
            PeerWiring.wire(other, 0, mine);
            PeerWiring.bringUp(this, theirs);
            PeerWiring.bringUp(other, mine);
            for (int t = 0; t < threads; t++) {
                endpoints[t].postInitialReceives();
                other.endpoints[t].postInitialReceives();
            }
            PeerWiring.finishBringUp(this);
            PeerWiring.finishBringUp(other);
        }
        Events.connected(device.name(), requested.toString(), threads, qps.size(), 1);
    }

    private static int[] qpns(ManagerAddress a) {
        int[] q = new int[a.qps().size()];
        for (int k = 0; k < q.length; k++) {
            q[k] = a.qps().get(k).qpn();
        }
        return q;
    }

    /** The QPN of peer {@code peer}'s QP that this manager's QP {@code k} sends to (once connected). */
    synchronized int peerQpn(int peer, int k) {
        if (peerQpns == null) {
            throw new IllegalStateException("not connected");
        }
        return peerQpns[peer][k];
    }

    /** What another process needs to reach this manager, as bytes (QP addresses and endpoint buffers). */
    public synchronized byte[] address() {
        return ManagerAddress.of(this).toBytes();
    }

    /**
     * Connect to managers in other processes from the bytes their {@link #address()} gave: peer
     * {@code i} is {@code remotes[i]}. RC: exactly one remote, QP {@code k} to its QP {@code k};
     * connectionless: one address handle per remote and QP. Receives are posted before return; the
     * remotes must not send before this returns on their peer (a barrier does that).
     */
    public synchronized void connect(byte[]... remotes) {
        if (connected) {
            throw new IllegalStateException("already connected");
        }
        if (remotes.length != peers) {
            throw new IllegalArgumentException("this manager's QPs reach " + peers + " peers; got " + remotes.length + " addresses");
        }
        ManagerAddress[] a = new ManagerAddress[remotes.length];
        for (int i = 0; i < remotes.length; i++) {
            a[i] = ManagerAddress.parse(remotes[i]);
            if (a[i].threads() != threads || a[i].qps().size() != qps.size() || a[i].qpType() != qpType) {
                throw new IllegalArgumentException("cannot connect: " + threads + " threads/" + qps.size() + " QPs (" + qpType
                        + ") with peer " + i + "'s " + a[i].threads() + " threads/" + a[i].qps().size() + " QPs (" + a[i].qpType() + ")");
            }
        }
        if (!qpType.connectionless() && peers != 1) {
            throw new IllegalArgumentException("an RC QP reaches one peer; use one manager per peer");
        }
        connected = true;
        int[][] q = new int[a.length][];
        for (int i = 0; i < a.length; i++) {
            q[i] = qpns(a[i]);
        }
        peerQpns = q;
        for (int i = 0; i < a.length; i++) {
            PeerWiring.wire(this, i, a[i]);
        }
        PeerWiring.bringUp(this, a[0]);
        for (int t = 0; t < threads; t++) {
            endpoints[t].postInitialReceives();
        }
        PeerWiring.finishBringUp(this);
        Events.connected(device.name(), requested.toString(), threads, qps.size(), remotes.length);
    }

    /** This manager's number in the process (its endpoints' counters are labelled {@code m<serial>.ep<i>}). */
    int serial() {
        return serial;
    }

    /**
     * The sums of this manager's counters ({@link Counters}) by kind and name: {@code ep.<name>} over
     * its endpoints, {@code qp.<name>} over its QPs' send paths, {@code cq.<name>} over its CQs (see
     * docs/ARCHITECTURE.md, Counters). A snapshot; all zero when counting is off ({@code -Dscalep.counters=false}).
     */
    public synchronized Map<String, Long> counterTotals() {
        Map<String, Long> out = new LinkedHashMap<>();
        for (Endpoint e : endpoints) {
            if (e != null) {
                add(out, "ep.", e.counters().group);
            }
        }
        for (SendPath p : paths) {
            add(out, "qp.", p.counters().group());
        }
        for (CompletionRouter r : routers) {
            add(out, "cq.", r.counters().group());
        }
        return out;
    }

    private static void add(Map<String, Long> out, String kind, CounterGroup g) {
        for (int i = 0; i < g.size(); i++) {
            out.merge(kind + g.name(i), g.value(i), Long::sum);
        }
    }

    /**
     * Bind a free endpoint to the calling thread (pinning it first when the options ask) and lease it
     * to the caller until {@link Endpoint#close()}. Throws {@link IllegalStateException} when every
     * endpoint is taken.
     */
    public synchronized Endpoint acquire() {
        if (closed) {
            throw new IllegalStateException("endpoint manager is closed");
        }
        for (int t = 0; t < threads; t++) {
            if (!taken[t]) {
                taken[t] = true;
                endpoints[t].bind(Thread.currentThread(), options.pin());
                return endpoints[t];
            }
        }
        throw new IllegalStateException("all " + threads + " endpoints are acquired; release one first");
    }

    /** Unbind an endpoint ({@link Endpoint#close()}: called by its owner thread, with nothing outstanding). */
    synchronized void release(Endpoint e) {
        e.unbind();
        taken[e.index()] = false;
    }

    public Device device() {
        return device;
    }

    public int threads() {
        return threads;
    }

    /** The configuration as requested. */
    public SharingConfig requested() {
        return requested;
    }

    public EndpointOptions options() {
        return options;
    }

    /** The unsignaled interval in force after substitutions. */
    public int signalEvery() {
        return plan.signalEvery();
    }

    /** The resolved plan this manager was built from (settings after substitutions, sharing, depths). */
    public EndpointPlan plan() {
        return plan;
    }

    /** What could not be honoured on this device, and what was built instead. */
    public List<Substitution> substitutions() {
        return Collections.unmodifiableList(substitutions);
    }

    /** Endpoint {@code i} (for inspection; use {@link #acquire()} to obtain one). */
    public Endpoint endpoint(int i) {
        return endpoints[i];
    }

    /** The transport the QPs use (RC, or SRD on EFA). */
    public QpType qpType() {
        return qpType;
    }

    /** Resources held by this manager, from the device's own accounting (sum over its contexts). */
    public ResourceUsage resources() {
        ResourceUsage sum = ResourceUsage.ZERO;
        for (Context c : contexts) {
            if (!c.isClosed()) {
                sum = sum.plus(c.resources());
            }
        }
        // In use: what the endpoints' QPs ring (uUAR i lives on page i/2); the idle partner QPs of
        // dedicated-2x hold their page but are not in use. Devices that expose no register keep their count.
        Map<Context, Set<Integer>> regs = new IdentityHashMap<>();
        for (QueuePair q : qps) {
            if (q.uuar() < 0) {
                return sum;
            }
            regs.computeIfAbsent(q.pd().context(), k -> new HashSet<>()).add(q.uuar());
        }
        long uuarsUsed = 0;
        long pagesUsed = 0;
        for (Set<Integer> r : regs.values()) {
            uuarsUsed += r.size();
            pagesUsed += r.stream().map(u -> u / 2).distinct().count();
        }
        return sum.withInUse(pagesUsed, uuarsUsed);
    }

    /** The UAR allocation mode in force, as the first context describes it. */
    public String uarDescription() {
        return contexts.isEmpty() ? "" : contexts.get(0).uarDescription();
    }

    /** Destroy everything: posters and routers, then each context with all it owns, then the buffers. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        for (Endpoint e : endpoints) {
            if (e != null) {
                e.closeLocal();
            }
        }
        for (SendPath p : paths) {
            p.close();
        }
        for (CompletionRouter r : routers) {
            r.close();
        }
        for (List<QueuePair> list : List.of(qps, partnerQps)) {
            for (QueuePair qp : list) {
                try {
                    qp.close();
                } catch (RuntimeException e) {
                    if (first == null) {
                        first = e;
                    }
                }
            }
        }
        for (Context c : contexts) {
            try {
                c.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
