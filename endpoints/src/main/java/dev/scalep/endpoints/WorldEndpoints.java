package dev.scalep.endpoints;

import dev.scalep.policies.EndpointClass;
import dev.scalep.policies.OnUnsupported;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Access;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.VerbsException;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Collectors;

/**
 * Endpoints of one rank that reach every rank of a {@link World}, itself included: thread
 * {@code t} of this rank gets a {@link RankEndpoint} connected to thread {@code t}'s endpoint on
 * every other rank and to a loopback endpoint of its own (one-sided operations and atomics on this
 * rank's own window go through the device like any other, so they stay atomic against the other
 * ranks' atomics on the same word).
 * The QP addresses and the peer buffers (address, rkey, length) travel through the world's
 * all-gather; nothing else is exchanged.
 *
 * <p>What a sharing level implies per peer, with {@code T} threads, {@code P} ranks and QPs shared
 * {@code x} ways:
 * <ul>
 *   <li>RC (mlx5, rxe): a QP talks to one remote QP, so the rank builds one endpoint manager per
 *       other rank and the sharing level applies within each: {@code ceil(T/x)} QPs per peer,
 *       and one more manager whose QPs are connected to themselves (the loopback):
 *       {@code P·ceil(T/x)} QPs per rank, growing linearly with the ranks (and so do the level's
 *       contexts, CQs and buffers, which each manager builds for itself). The connection is
 *       eager, all-to-all: fine for the tens of ranks of one job on a few nodes, not for thousands.</li>
 *   <li>SRD and UD (EFA): one manager, one QP per endpoint (as the level shares them) whatever
 *       {@code P}; each QP holds one address handle per rank, its own included ({@code P} AHs),
 *       and each endpoint one set of peer buffers per rank. Only the AH table grows with the ranks.</li>
 * </ul>
 * A world of one rank gets the loopback alone, so windows work there too.
 * After every rank has connected, the world's barrier runs, so no rank sends before all receives
 * are posted. {@link #close()} takes a barrier first too, so no rank tears down what another still
 * writes to.
 *
 * <p><b>Windows</b> ({@link Window}): {@link #allocateWindow(long)} and {@link #exposeWindow(MemorySegment)}
 * make memory every rank reaches with {@link RankEndpoint}'s one-sided operations; several windows
 * may be open at once (up to {@value #MAX_WINDOWS}). Both are collective: every rank calls them in
 * the same order, and a rank's failure (memory the device cannot expose) fails the call on every
 * rank. {@link #allocate(long)} gives memory that {@link #exposeWindow} takes on every device.
 *
 * <p><b>Progress</b> ({@link ProgressMode}): by default a slot's traffic moves only in the calls of
 * the thread holding it (every data-path call of its {@link RankEndpoint}, {@link Messages},
 * {@link ActiveMessages} and endpoints that posts, polls or waits progresses it). A slot whose
 * thread computes without calling is inattentive: messages sent to it wait in its receive ring,
 * its credits do not come back (a peer past them is back-pressured), rendezvous sends to it are
 * not read, its active-message handlers do not run and emulated atomics on its rank's windows are
 * not served by it. Opened with {@link ProgressMode#THREAD}, the rank runs one progress thread
 * that progresses every acquired slot whose thread made no call for one of its passes, so all of
 * that moves while the thread computes; handlers then run in the progress thread (one slot's
 * handlers never run concurrently with that slot's calls or each other).
 */
public final class WorldEndpoints implements AutoCloseable {
    /** Windows open at once in one world. */
    public static final int MAX_WINDOWS = 256;
    /** Bytes of the runtime's window each thread slot's {@link RankEndpoint#collectives()} stages through. */
    public static final int COLLECTIVE_SCRATCH = 64 * 1024;
    /** The largest single request a window operation posts (longer puts and gets are split). */
    static final int MAX_CHUNK = 1 << 30;
    private static final byte WINDOW_OK = 1;
    private static final byte WINDOW_FAILED = 0;

    private final World world;
    private final QpType qpType;
    private final int threads;
    /** {@link MessageHub#width}: 1, or {@link #threads} with {@link SlotAddressing#ANY_SLOT}. */
    private final int width;
    private final Device device;
    private final Window[] windows = new Window[MAX_WINDOWS];
    private final RankEndpoint[] leased;
    private int windowSequence;
    /** The largest request of a put or get (tests lower it to split small transfers). */
    int maxChunk = MAX_CHUNK;
    /** Owner of {@link #allocate}'d memory: a PD of the first manager's first context. */
    private ProtectionDomain memoryPd;
    /** 64 bytes per thread for the results nobody reads (a non-fetching add), registered on every PD. */
    private MemorySegment scratch;
    private int[] scratchLkey = new int[0];
    private final List<MemoryRegion> scratchMrs = new ArrayList<>();
    /** RC: manager reaching rank r at index r (the loopback at this rank's index); connectionless: one shared manager. */
    private final EndpointManager[] byRank;
    private final List<EndpointManager> managers = new ArrayList<>();
    private final boolean[] taken;
    private boolean closed;
    /** The atomics emulation on a device without RDMA atomics (null where the device has them). */
    private AtomicEmulation emulation;
    /** What {@link AtomicEmulation#credits} the receive slots leave (computed on every device). */
    private int emulationCredits;
    private int recvSlotBytes;
    private int recvSlotsPerEndpoint;
    /** This rank's tagged messages (null when the receive slots leave no room). */
    private MessageHub hub;
    /**
     * The runtime's own window (id 0) behind {@link RankEndpoint#barrier()}: on every rank one
     * arrival word per thread slot of every rank, then one source word per local thread slot.
     */
    private Window barrierWindow;
    /** Where the slots' mailboxes start in {@link #barrierWindow} (where messages run). */
    private long boxesAt;
    private boolean messagesMapped;
    private boolean acquiredOnce;
    private volatile boolean mapWindows;
    /** Where the slots' collectives scratch starts in {@link #barrierWindow} (its length where messages cannot run). */
    private long collectivesAt;
    /** Per local thread slot: its {@link RankEndpoint#collectives()}, made at the first call. */
    private final Collectives[] collectives;
    /** Per local thread slot: the barriers it has entered (touched only by the thread holding the slot). */
    private final long[] barrierEpoch;
    /** With a progress thread: per slot its guard, and the endpoints of its holder (null while free). */
    private SlotGuard[] guards;
    private AtomicReferenceArray<RankEndpoint> attended;
    private ProgressAgent progressAgent;
    private AgentRunner progressRunner;

    /** Spins of a waiting thread slot before it starts yielding when the node is not oversubscribed. */
    private static final int SPINS_BEFORE_YIELD = 4096;
    private final boolean oversubscribed;

    private WorldEndpoints(World world, QpType qpType, int threads, int width, Device device) {
        this.world = world;
        this.qpType = qpType;
        this.threads = threads;
        this.width = width;
        this.device = device;
        this.leased = new RankEndpoint[threads];
        this.byRank = new EndpointManager[world.size()];
        this.taken = new boolean[threads];
        this.barrierEpoch = new long[threads];
        this.collectives = new Collectives[threads];
        int here = 0;
        for (int r = 0; r < world.size(); r++) {
            if (world.node(r) == world.node(world.rank())) {
                here++;
            }
        }
        this.oversubscribed = (long) here * threads > Runtime.getRuntime().availableProcessors();
    }

    /**
     * Whether this node runs more thread slots (its ranks times their threads) than it has
     * processors. Then a thread that waits ({@link Messages#waitFor}, a collective, a barrier,
     * a flush of emulated atomics) yields the processor at every look instead of spinning, as
     * MPI libraries do when oversubscribed: the rank it waits for may need this very core to run.
     */
    public boolean oversubscribed() {
        return oversubscribed;
    }

    /**
     * A new idle strategy for one thread's waits (the runtime's own, and an application's loop that
     * polls for its messages or completions): see {@link #oversubscribed()}. Call
     * {@code idle(work)} once per look, with the work the look did, so that it resets on work.
     */
    public IdleStrategy waitIdle() {
        return oversubscribed ? new YieldingIdleStrategy() : new BackoffIdleStrategy(SPINS_BEFORE_YIELD, Long.MAX_VALUE, 1, 1);
    }

    /**
     * Build this rank's endpoints from an effective policy class: its sharing level and every
     * feature as {@link EndpointOptions#from} maps them, among them {@code messages.eager-limit}
     * (the receive slots hold that many bytes plus the message header, so it is the eager limit
     * and the default rendezvous threshold of {@link RankEndpoint#messages()}). A class with
     * {@code on-unsupported: fail} that the device cannot run as written is refused: every rank
     * (all on the same kind of device, so all finding the same changes) closes what it opened and
     * throws {@link IllegalArgumentException} listing the changes.
     */
    public static WorldEndpoints open(World world, Device device, EndpointClass c, int threads) {
        WorldEndpoints w = open(world, device, c.sharing(), threads, EndpointOptions.from(c, device.capabilities()));
        if (c.onUnsupported() == OnUnsupported.FAIL) {
            String changes = w.managers.stream().flatMap(m -> m.substitutions().stream()).map(Substitution::toString)
                    .distinct().collect(Collectors.joining("; "));
            if (!changes.isEmpty()) {
                w.close();
                throw new IllegalArgumentException("class " + c.name() + " (on-unsupported: fail) cannot run as written on "
                        + device.name() + " with " + threads + " threads: " + changes);
            }
        }
        return w;
    }

    /**
     * Build this rank's endpoints for {@code threads} threads at sharing level {@code cfg} and connect
     * them to every other rank. Every rank calls it with the same device kind, level and thread count.
     */
    public static WorldEndpoints open(World world, Device device, SharingConfig cfg, int threads, EndpointOptions opts) {
        return open(world, device, cfg, threads, opts, ProgressMode.CALLER);
    }

    /**
     * As {@link #open(World, Device, SharingConfig, int, EndpointOptions)}, with {@code progress}
     * saying who progresses the slots: their threads only ({@link ProgressMode#CALLER}), or also
     * one progress thread of this rank ({@link ProgressMode#THREAD}, stopped by {@link #close()}).
     */
    public static WorldEndpoints open(World world, Device device, SharingConfig cfg, int threads, EndpointOptions opts,
                                      ProgressMode progress) {
        return open(world, device, cfg, threads, opts, progress, SlotAddressing.SAME_INDEX);
    }

    /**
     * As {@link #open(World, Device, SharingConfig, int, EndpointOptions, ProgressMode)}, with
     * {@code addressing} saying which slot of a rank a message may reach: the slot of the sender's
     * index ({@link SlotAddressing#SAME_INDEX}) or any slot the send names
     * ({@link SlotAddressing#ANY_SLOT}, with a stream, credits and an inbox ring per pair of slots).
     * Every rank opens with the same one.
     */
    public static WorldEndpoints open(World world, Device device, SharingConfig cfg, int threads, EndpointOptions opts,
                                      ProgressMode progress, SlotAddressing addressing) {
        if (progress == null) {
            throw new IllegalArgumentException("open: progress mode is null (ProgressMode.CALLER or THREAD)");
        }
        if (addressing == null) {
            throw new IllegalArgumentException("open: slot addressing is null (SlotAddressing.SAME_INDEX or ANY_SLOT)");
        }
        QpType type = device.capabilities().qpTypes().contains(QpType.RC) ? QpType.RC : QpType.SRD;
        WorldEndpoints w = new WorldEndpoints(world, type, threads, addressing == SlotAddressing.ANY_SLOT ? threads : 1,
                device);
        int p = world.size();
        int me = world.rank();
        // before anything is built: the mailboxes' layout, and so window 0's size, depends on it
        byte[][] modes = world.allgather(new byte[] {(byte) addressing.ordinal()});
        for (int r = 0; r < p; r++) {
            if (modes[r].length != 1 || modes[r][0] != addressing.ordinal()) {
                throw new IllegalArgumentException("open: rank " + r + " opened its world with another slot addressing than"
                        + " this rank's " + addressing + " (every rank opens with the same one; nothing was built)");
            }
        }
        try {
            if (type.connectionless()) {
                EndpointManager m = EndpointManager.open(device, cfg, threads, opts, p);
                w.managers.add(m);
                Arrays.fill(w.byRank, m);
                m.connect(world.allgather(m.address()));
            } else {
                byte[][] mine = new byte[p][];
                for (int r = 0; r < p; r++) {
                    EndpointManager m = EndpointManager.open(device, cfg, threads, opts, 1);
                    w.managers.add(m);
                    w.byRank[r] = m;
                    mine[r] = r == me ? null : m.address();
                }
                byte[][] all = world.allgather(pack(mine));
                for (int r = 0; r < p; r++) {
                    if (r != me) {
                        w.byRank[r].connect(unpack(all[r], p)[me]);
                    }
                }
                w.byRank[me].connect(w.byRank[me].address());
            }
            w.scratch = w.allocate(64L * threads);
            w.scratchLkey = new int[w.managers.size() * w.qpsPerPeer()];
            w.registerEverywhere(w.scratch, Access.LOCAL_WRITE, w.scratchMrs, w.scratchLkey, null);
            EndpointOptions o = opts == null ? EndpointOptions.DEFAULTS : opts;
            w.recvSlotsPerEndpoint = w.managers.get(0).endpoints[0].recvSlots();
            int senders = type.connectionless() ? p : 1;
            int messageCredits = w.messageCredits(o);
            // the receives a source QP may use for messages: a stream per slot it may name
            w.emulationCredits = AtomicEmulation.credits(w.recvSlotsPerEndpoint, senders, messageCredits * w.width);
            if (!w.atomics() && o.recvSlotBytes() >= AtomicEmulation.MESSAGE_BYTES && w.emulationCredits >= 1) {
                MemorySegment staging = w.allocate((long) threads * AtomicEmulation.SLOTS * AtomicEmulation.SLOT_BYTES);
                int[] lkeys = new int[w.managers.size() * w.qpsPerPeer()];
                w.registerEverywhere(staging, Access.LOCAL_WRITE, w.scratchMrs, lkeys, null);
                int owed = p * threads * AtomicEmulation.SLOTS;
                MemorySegment replies = w.allocate((long) owed * AtomicEmulation.SLOT_BYTES);
                int[] replyKeys = new int[w.managers.size() * w.qpsPerPeer()];
                w.registerEverywhere(replies, Access.LOCAL_WRITE, w.scratchMrs, replyKeys, null);
                w.emulation = new AtomicEmulation(type.connectionless(), p, threads, w.emulationCredits, staging, lkeys,
                        replies);
                for (int i = 0; i < w.managers.size(); i++) {
                    for (Endpoint e : w.managers.get(i).endpoints) {
                        e.emulation(w.emulation, replyKeys[i * w.qpsPerPeer() + e.qpIndex()], owed);
                    }
                }
            }
            w.recvSlotBytes = o.recvSlotBytes();
            // Window 0: per rank and slot an arrival word; per slot the word its barrier puts from and
            // the word Messages' liveness probe reads into (RankEndpoint.answers); then (where
            // messages run) each slot's collectives scratch, and from a page boundary each slot's
            // mailbox (MessageHub.boxBytes: its inbox ring, where mapMessages lets senders write).
            w.collectivesAt = 8L * ((long) p * threads + 2L * threads);
            long size = w.collectivesAt;
            if (messageCredits > 0) {
                w.boxesAt = (size + (long) threads * COLLECTIVE_SCRATCH + 4095) & ~4095L;
                size = w.boxesAt
                        + threads * MessageHub.boxBytes(p * w.width, messageCredits, MessageHub.slotBytes(o.recvSlotBytes()));
            }
            w.barrierWindow = w.allocateWindow(size);
            w.openMessages(type.connectionless(), o);
            if (progress == ProgressMode.THREAD) {
                w.startProgressThread();
            }
            world.barrier();
        } catch (RuntimeException | Error e) {
            w.stopProgressThread();
            if (w.barrierWindow != null) {
                w.barrierWindow.markClosed();
                w.freeWindow(w.barrierWindow);
            }
            release(w.scratchMrs, w.memoryPd);
            w.closeManagers();
            throw e;
        }
        return w;
    }

    /** Guard every slot's endpoints and start the progress thread (an Agrona agent with a backoff idle strategy). */
    private void startProgressThread() {
        guards = new SlotGuard[threads];
        for (int t = 0; t < threads; t++) {
            guards[t] = new SlotGuard();
        }
        for (EndpointManager m : managers) {
            for (Endpoint e : m.endpoints) {
                e.guard(guards[e.index()]);
            }
        }
        attended = new AtomicReferenceArray<>(threads);
        progressAgent = new ProgressAgent(guards, attended, world.rank());
        ProgressAgent a = progressAgent;
        progressRunner = new AgentRunner(new BackoffIdleStrategy(), t -> a.failure.compareAndSet(null, t), null, a);
        AgentRunner.startOnThread(progressRunner, r -> {
            Thread t = new Thread(r, a.roleName());
            t.setDaemon(true);
            for (SlotGuard g : guards) {
                g.attendant(t);
            }
            return t;
        });
    }

    private void stopProgressThread() {
        if (progressRunner != null) {
            progressRunner.close();
            progressRunner = null;
        }
    }

    /** Who progresses this rank's slots. */
    public ProgressMode progressMode() {
        return guards == null ? ProgressMode.CALLER : ProgressMode.THREAD;
    }

    /**
     * The tagged messages' state when the receive slots leave room: credits per pair of thread
     * slots are a quarter of an endpoint's receive slots per source QP (data, credits and
     * rendezvous completions in flight then never exceed the receives posted), staging registered
     * on every PD.
     */
    private void openMessages(boolean connectionless, EndpointOptions o) {
        int p = world.size();
        int credits = messageCredits(o);
        if (credits == 0) {
            return;
        }
        int keys = managers.size() * qpsPerPeer();
        int slotBytes = MessageHub.slotBytes(o.recvSlotBytes());
        MemorySegment staging = allocate((long) threads * p * width * credits * slotBytes);
        int[] stagingLkey = new int[keys];
        registerEverywhere(staging, Access.LOCAL_WRITE, scratchMrs, stagingLkey, null);
        MemorySegment control = allocate((long) threads * MessageHub.CONTROL * MessageHub.CONTROL_BYTES);
        int[] controlLkey = new int[keys];
        registerEverywhere(control, Access.LOCAL_WRITE, scratchMrs, controlLkey, null);
        long box = MessageHub.boxBytes(p * width, credits, slotBytes);
        int[] qpOfSlot = new int[threads];
        for (int t = 0; t < threads; t++) {
            qpOfSlot[t] = managers.get(0).endpoints[t].qpIndex();
        }
        hub = new MessageHub(this, p, threads, world.rank(), credits, width, qpOfSlot, slotBytes, connectionless,
                staging, stagingLkey, control, controlLkey, barrierWindow.localView.asSlice(boxesAt, threads * box));
        for (EndpointManager m : managers) {
            for (Endpoint e : m.endpoints) {
                e.messages(hub);
            }
        }
    }

    /**
     * Credits per stream: a quarter of an endpoint's receive slots per source QP, shared by the
     * streams one source QP may feed (one, or one per slot with {@link SlotAddressing#ANY_SLOT});
     * 0 when that leaves none or the slots are no larger than a header (no tagged messages).
     */
    private int messageCredits(EndpointOptions o) {
        int credits = recvSlotsPerEndpoint / (4 * (qpType.connectionless() ? world.size() : 1) * width);
        // a power of two: the ring slot of a sequence number is then a mask, not a 64-bit division
        // (two or three per message on the receiving side, a tenth of its time in tag_bw -s 8)
        return credits < 1 || MessageHub.slotBytes(o.recvSlotBytes()) <= MessageHub.HEADER ? 0 : Integer.highestOneBit(credits);
    }

    /** Why tagged messages cannot run here. */
    String messagesRefusal() {
        return "tagged messages need receive slots larger than their " + MessageHub.HEADER + "-byte header (these have "
                + recvSlotBytes + ") and at least 4 receive slots per endpoint for each stream a source QP feeds "
                + "(" + recvSlotsPerEndpoint + " per endpoint for " + (qpType.connectionless() ? world.size() : 1) * width
                + (width > 1 ? ": every rank's QP, times " + width + " slots it may name (SlotAddressing.ANY_SLOT)" : "")
                + "; EndpointOptions.withDepths / withBuffers)";
    }

    /** Open window {@code id}, or null. */
    synchronized Window window(int id) {
        return id >= 0 && id < MAX_WINDOWS ? windows[id] : null;
    }

    private static byte[] pack(byte[][] perRank) {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        try (DataOutputStream o = new DataOutputStream(bo)) {
            o.writeInt(perRank.length);
            for (byte[] b : perRank) {
                o.writeInt(b == null ? -1 : b.length);
                if (b != null) {
                    o.write(b);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bo.toByteArray();
    }

    private static byte[][] unpack(byte[] b, int ranks) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(b))) {
            int n = in.readInt();
            if (n != ranks) {
                throw new IllegalArgumentException("a rank sent addresses for " + n + " ranks; the world has " + ranks);
            }
            byte[][] out = new byte[n][];
            for (int r = 0; r < n; r++) {
                int len = in.readInt();
                if (len > in.available()) {
                    throw new IllegalArgumentException("truncated address list");
                }
                out[r] = len < 0 ? null : in.readNBytes(len);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalArgumentException("malformed address list: " + e.getMessage(), e);
        }
    }

    /** Bind a free set of endpoints (one per other rank, or one that reaches them all) to the calling thread. */
    public synchronized RankEndpoint acquire() {
        if (closed) {
            throw new IllegalStateException("world endpoints are closed");
        }
        int t = 0;
        while (t < threads && taken[t]) {
            t++;
        }
        if (t == threads) {
            throw new IllegalStateException("all " + threads + " endpoints are acquired; release one first");
        }
        taken[t] = true;
        acquiredOnce = true;
        Endpoint[] eps = new Endpoint[world.size()];
        for (EndpointManager m : managers) {
            Endpoint e = m.acquire();
            if (e.index() != t) {
                throw new IllegalStateException("endpoint " + e.index() + " acquired for thread slot " + t);
            }
            for (int r = 0; r < eps.length; r++) {
                if (byRank[r] == m) {
                    eps[r] = e;
                }
            }
        }
        int[] ordinal = new int[eps.length];
        for (int r = 0; r < eps.length; r++) {
            ordinal[r] = eps[r] == null ? 0 : managers.indexOf(eps[r].manager());
        }
        RankEndpoint re = new RankEndpoint(this, t, eps, qpType.connectionless(), world.rank(), ordinal, qpsPerPeer(),
                maxChunk, device.capabilities().writeWithImm(), scratch.address() + 64L * t, scratchLkey, emulation,
                guards == null ? null : guards[t]);
        re.hub = hub;
        leased[t] = re;
        if (attended != null) {
            attended.set(t, re);
        }
        return re;
    }

    /** Slot {@code re.index()}'s collectives over its part of window 0 (called by the thread holding the slot). */
    Collectives collectives(RankEndpoint re) {
        int t = re.index();
        Collectives c = collectives[t];
        if (c == null) {
            c = new Collectives(re, barrierWindow, collectivesAt + (long) t * COLLECTIVE_SCRATCH, COLLECTIVE_SCRATCH);
            collectives[t] = c;
            return c;
        }
        return c.bind(re);
    }

    Window barrierWindow() {
        return barrierWindow;
    }

    /** The next barrier epoch of thread slot {@code slot} (called by the thread holding it). */
    long nextBarrierEpoch(int slot) {
        return ++barrierEpoch[slot];
    }

    synchronized void release(RankEndpoint e) {
        if (attended != null) {
            attended.set(e.index(), null); // under the slot's guard: the progress thread's next pass skips it
        }
        for (Endpoint ep : e.distinct()) {
            ep.manager().release(ep);
        }
        taken[e.index()] = false;
        leased[e.index()] = null;
    }

    // ---- windows -------------------------------------------------------------------------------

    /**
     * Memory of {@code bytes} bytes (page aligned, zeroed) that {@link #exposeWindow} takes on every
     * device: on the simulator, shared memory that the simulated NIC of another process can map;
     * on real devices, native memory. Owned by these endpoints: freed by {@link #close()}.
     */
    public synchronized MemorySegment allocate(long bytes) {
        checkOpen();
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocate: " + bytes + " bytes; give a positive size");
        }
        if (memoryPd == null) {
            memoryPd = managers.get(0).contexts.get(0).allocPd();
        }
        return memoryPd.allocate(bytes, 4096);
    }

    /**
     * Collective: a window of {@code bytes} bytes on every rank (the same size everywhere; a rank
     * that asks for another size fails the call on every rank), allocated and zeroed by the runtime
     * and freed when the window closes.
     */
    public Window allocateWindow(long bytes) {
        checkOpen();
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocateWindow: " + bytes + " bytes; give a positive size");
        }
        ProtectionDomain pd = null;
        MemorySegment mem;
        synchronized (this) {
            pd = managers.get(0).contexts.get(0).allocPd();
            try {
                mem = pd.allocate(bytes, 4096);
            } catch (RuntimeException e) {
                pd.close();
                throw e;
            }
        }
        return createWindow(mem, pd, true);
    }

    /**
     * Collective: expose {@code segment} of every rank as a window (sizes may differ from rank to
     * rank). On a real device any native memory; on the simulator, which spans the processes of a
     * machine, only memory another process can map: from {@link #allocate(long)} (anything else is
     * refused on every rank, naming the rank and how to get such memory). The application keeps
     * the memory alive until the window is closed.
     */
    public Window exposeWindow(MemorySegment segment) {
        checkOpen();
        if (segment == null || !segment.isNative() || segment.byteSize() == 0) {
            throw new IllegalArgumentException("exposeWindow: a window needs a non-empty native segment, got " + segment);
        }
        return createWindow(segment, null, false);
    }

    private synchronized void checkOpen() {
        if (closed) {
            throw new IllegalStateException("world endpoints are closed");
        }
    }

    private Window createWindow(MemorySegment mem, ProtectionDomain memoryPd, boolean symmetric) {
        int p = world.size();
        int me = world.rank();
        int id;
        int seq;
        synchronized (this) {
            id = 0;
            while (id < MAX_WINDOWS && windows[id] != null) {
                id++;
            }
            seq = windowSequence++;
        }
        List<MemoryRegion> mrs = new ArrayList<>();
        int qps = qpsPerPeer();
        int[] lkey = new int[managers.size() * qps];
        byte[] mine;
        WindowHandle handle = null;
        try {
            if (id == MAX_WINDOWS) {
                throw new IllegalStateException("rank " + me + " has " + MAX_WINDOWS + " windows open (" + (MAX_WINDOWS - 1)
                        + " of the application's and the runtime's barrier window); close one first");
            }
            int sources = qpType.connectionless() ? 1 : p;
            int[] rkeys = new int[sources * qps];
            registerEverywhere(mem, Access.ALL_RDMA | (atomics() ? Access.REMOTE_ATOMIC : 0), mrs, lkey, rkeys);
            handle = new WindowHandle(id, seq, mem.address(), mem.byteSize(), sources, qps, rkeys);
            if (emulation != null) {
                emulation.window(id, mem);
            }
            byte[] h = handle.toBytes();
            mine = new byte[h.length + 1];
            mine[0] = WINDOW_OK;
            System.arraycopy(h, 0, mine, 1, h.length);
        } catch (RuntimeException e) {
            byte[] msg = ("rank " + me + ": " + e.getMessage()).getBytes(StandardCharsets.UTF_8);
            mine = new byte[msg.length + 1];
            mine[0] = WINDOW_FAILED;
            System.arraycopy(msg, 0, mine, 1, msg.length);
        }
        byte[][] all;
        try {
            all = world.allgather(mine);
        } catch (RuntimeException e) {
            forget(id);
            release(mrs, memoryPd);
            throw e;
        }
        StringBuilder failed = new StringBuilder();
        WindowHandle[] handles = new WindowHandle[p];
        for (int r = 0; r < p; r++) {
            if (all[r].length == 0 || all[r][0] != WINDOW_OK) {
                failed.append(failed.isEmpty() ? "" : "; ")
                        .append(new String(all[r], 1, Math.max(0, all[r].length - 1), StandardCharsets.UTF_8));
                continue;
            }
            try {
                handles[r] = WindowHandle.fromBytes(Arrays.copyOfRange(all[r], 1, all[r].length));
            } catch (IllegalArgumentException e) {
                failed.append(failed.isEmpty() ? "" : "; ").append("rank ").append(r).append(": ").append(e.getMessage());
                continue;
            }
            if (handles[r].window() != id || handles[r].sequence() != seq) {
                failed.append(failed.isEmpty() ? "" : "; ").append("rank ").append(r).append(" made window ")
                        .append(handles[r].window()).append(" (#").append(handles[r].sequence()).append("), rank ")
                        .append(me).append(" window ").append(id).append(" (#").append(seq)
                        .append("): every rank creates and closes its windows in the same order");
            } else if (symmetric && handles[r].length() != mem.byteSize()) {
                failed.append(failed.isEmpty() ? "" : "; ").append("rank ").append(r).append(" allocated ")
                        .append(handles[r].length()).append(" bytes, rank ").append(me).append(" ").append(mem.byteSize())
                        .append(": allocateWindow takes the same size on every rank");
            }
        }
        if (!failed.isEmpty()) {
            forget(id);
            release(mrs, memoryPd);
            throw new IllegalArgumentException("window not created on any rank: " + failed);
        }
        int[] rkey = new int[p * qps];
        int row = qpType.connectionless() ? 0 : me;
        for (int r = 0; r < p; r++) {
            for (int k = 0; k < qps; k++) {
                rkey[r * qps + k] = handles[r].rkey(row, k); // r == me: the keys of this rank's loopback
            }
        }
        MemorySegment[] mapped = new MemorySegment[p];
        if (mapWindows) {
            for (int r = 0; r < p; r++) {
                mapped[r] = r == me ? mem : mapPart(r, handles[r], rkey[r * qps]);
            }
        }
        Window w = new Window(this, id, seq, mem, handles, rkey, lkey, qps, mrs, memoryPd, mapped);
        synchronized (this) {
            windows[id] = w;
        }
        return w;
    }

    /**
     * Rank {@code r}'s part of a window mapped into this process through the QP 0 of the manager
     * that reaches it ({@link dev.scalep.verbs.QueuePair#mapPeer}), or null where the device cannot.
     */
    private MemorySegment mapPart(int r, WindowHandle h, int key) {
        EndpointManager m = byRank[r];
        int peer = qpType.connectionless() ? r : 0;
        return m.qps.get(0).mapPeer(m.peerQpn(peer, 0), h.address(), h.length(), key, Access.REMOTE_WRITE | Access.REMOTE_READ);
    }

    /**
     * Whether windows created from now on are reached, where the device can map a rank's part into
     * this process (the simulator: every rank of the machine), with the CPU's loads, stores and
     * atomic instructions on the mapping instead of through the endpoints' QPs: a shared-memory
     * transport, what UCX's {@code posix} transport and MPI's shared-memory BTLs do for peers on one
     * node. A put, get or atomic to a mapped part is then complete when the call returns (no work
     * request, no completion, nothing for a flush to wait for), unless the thread's endpoint to that
     * rank still has operations staged or in flight: those keep their order, and the call goes
     * through the endpoint like them. Atomics on the mapping are the CPU's atomic instructions,
     * atomic against the simulated NIC's atomics and the emulation's on the same word, which are
     * CPU atomic instructions on the same memory too. {@link RankEndpoint#putNotify} always goes
     * through the endpoint (its notification is a receive completion). Off by default: the
     * sharing level a world was opened with then shapes every one-sided operation, which is what
     * the sweep and the kernels measure. Ranks may differ. On a real device nothing is mapped (the
     * NIC reaches other processes' registered memory, the CPU does not) and this changes nothing.
     */
    public void mapWindows(boolean on) {
        mapWindows = on;
    }

    /**
     * Send this rank's tagged and active messages to every rank whose memory the device maps into
     * this process (the simulator: every rank of the machine) through shared memory: each message
     * is written straight into the destination slot's inbox ring (its mailbox, in window 0) and
     * marked ready there, its credits are read from that mailbox, and the rendezvous sends this
     * rank serves are completed by a store into the sender's mailbox, instead of a send, a receive
     * and a copy through the endpoints (UCX's posix transport and MPI's shared-memory paths work so
     * too). Order, matching, credits and every result stay as they were: a message's ring slot and
     * sequence number are the same, so messages a slot sent through the endpoints before are
     * received first, and ranks may differ in whether they map. A rendezvous message's bytes are
     * read with {@link RankEndpoint#get}: through the mapping where {@link #mapWindows} mapped the
     * window, else through the endpoints. A peer writing into the mailbox is trusted like a peer
     * sharing a window's memory: its messages are not checked as the endpoints' receive hook checks
     * them. Call before any thread slot is acquired. On a device that maps no other process's memory
     * (a real NIC) only this rank's own mailboxes are reached so, its messages to itself. Returns the
     * number of ranks now mapped, this one included.
     */
    public synchronized int mapMessages() {
        checkOpen();
        if (hub == null) {
            throw new IllegalStateException("mapMessages: " + messagesRefusal());
        }
        if (acquiredOnce) {
            throw new IllegalStateException("mapMessages: call it before any thread slot is acquired (one was)");
        }
        if (messagesMapped) {
            return mappedRanks();
        }
        long box = MessageHub.boxBytes(world.size() * width, hub.credits, hub.slotBytes);
        int qps = qpsPerPeer();
        for (int r = 0; r < world.size(); r++) {
            MemorySegment part = r == world.rank() ? barrierWindow.localView
                    : mapPart(r, barrierWindow.handle(r), barrierWindow.rkey[r * qps]);
            if (part == null) {
                continue;
            }
            MemorySegment view = r == world.rank() ? part : barrierWindow.view(part);
            for (int t = 0; t < threads; t++) {
                for (int u = 0; u < width; u++) { // the slot of the same index, or every slot
                    int to = width == 1 ? t : u;
                    hub.slots[t].map(r * width + u, view.asSlice(boxesAt + to * box, box));
                }
            }
        }
        messagesMapped = true;
        return mappedRanks();
    }

    private int mappedRanks() {
        int c = 0;
        for (int r = 0; r < world.size(); r++) {
            c += hub.slots[0].mapped(r) ? 1 : 0;
        }
        return c;
    }

    /** See {@link #mapWindows(boolean)}. */
    public boolean mapsWindows() {
        return mapWindows;
    }

    /** {@link ProgressAgent#pollOthers}, from the progress thread inside a handler of slot {@code busy}. */
    void pollOthers(int busy) {
        ProgressAgent a = progressAgent;
        if (a != null) {
            a.pollOthers(busy);
        }
    }

    /** The emulation no longer serves window {@code id} (it failed to be created, or it is freed). */
    private void forget(int id) {
        if (emulation != null && id < MAX_WINDOWS) {
            emulation.window(id, null);
        }
    }

    /**
     * Register {@code mem} on every PD of every manager: {@code lkey[o * qps + k]} is the key of
     * manager {@code o}'s QP {@code k}'s PD, {@code rkeys[row * qps + k]} (row: the rank the manager
     * reaches on RC, 0 on connectionless devices) its rkey; null {@code rkeys} for local use only.
     */
    private void registerEverywhere(MemorySegment mem, int access, List<MemoryRegion> mrs, int[] lkey, int[] rkeys) {
        int qps = qpsPerPeer();
        for (int o = 0; o < managers.size(); o++) {
            EndpointManager m = managers.get(o);
            MemoryRegion[] byPd = new MemoryRegion[m.pds.size()];
            for (int i = 0; i < byPd.length; i++) {
                byPd[i] = register(m.pds.get(i), mem, access);
                mrs.add(byPd[i]);
            }
            int row = qpType.connectionless() ? 0 : rankOf(m);
            for (int k = 0; k < qps; k++) {
                MemoryRegion mr = byPd[m.plan().place(m.plan().firstOfQp(k)).pd()];
                lkey[o * qps + k] = mr.lkey();
                if (rkeys != null) {
                    rkeys[row * qps + k] = mr.rkey();
                }
            }
        }
    }

    /** Whether the device executes RDMA atomics (remote atomic access is asked for only there). */
    boolean atomics() {
        return device.capabilities().atomicCap().supported();
    }

    /**
     * Why window atomics cannot run here, or null when they can (on the device, or emulated where
     * it has none and the receive slots hold an emulation message).
     */
    String atomicsRefusal() {
        if (atomics() || emulation != null) {
            return null;
        }
        if (recvSlotBytes < AtomicEmulation.MESSAGE_BYTES) {
            return "the device has no RDMA atomics (atomic_cap NONE) and its emulation needs receive slots of "
                    + AtomicEmulation.MESSAGE_BYTES + " bytes; these have " + recvSlotBytes
                    + " (EndpointOptions.withBuffers)";
        }
        int senders = qpType.connectionless() ? world.size() : 1;
        return "the device has no RDMA atomics (atomic_cap NONE) and its emulation needs, per rank that sends into a "
                + "QP, receive slots for one request and one reply beyond the tagged messages' share; "
                + recvSlotsPerEndpoint + " receive slots per endpoint for " + senders + " sending rank(s) leave none "
                + "(EndpointOptions.withDepths)";
    }

    /**
     * Emulated atomics one thread may have in flight to one target rank on a device without RDMA
     * atomics (the receive slots per source QP less the tagged messages' share, halved between
     * requests and replies); 0 or less where the emulation cannot run or is not needed.
     */
    public int emulationCredits() {
        return emulation == null ? 0 : emulation.credits;
    }

    /** The rank an RC manager reaches. */
    private int rankOf(EndpointManager m) {
        for (int r = 0; r < byRank.length; r++) {
            if (byRank[r] == m) {
                return r;
            }
        }
        throw new IllegalStateException("manager of no rank");
    }

    private MemoryRegion register(ProtectionDomain pd, MemorySegment mem, int access) {
        try {
            return pd.register(mem, access);
        } catch (VerbsException e) {
            if (device.name().startsWith("sim:")) {
                throw new IllegalArgumentException("exposeWindow: " + device.name() + " spans the processes of this "
                        + "machine and reaches only memory another process can map: take it from WorldEndpoints.allocate"
                        + "(bytes) or let allocateWindow(bytes) allocate the window (" + e.getMessage() + ")", e);
            }
            throw e;
        }
    }

    private static void release(List<MemoryRegion> mrs, ProtectionDomain memoryPd) {
        for (MemoryRegion mr : mrs) {
            mr.close();
        }
        if (memoryPd != null) {
            memoryPd.close();
        }
    }

    /** {@link Window#close(long)}: refuse new operations, wait for this rank's, agree, deregister. */
    void closeWindow(Window w, long timeoutNanos) {
        synchronized (this) {
            if (w.freed) {
                return;
            }
        }
        w.markClosed();
        w.closeViews(); // no mapped operation is inside the window's memory from here on
        long deadline = System.nanoTime() + timeoutNanos;
        String busy = null;
        for (int t = 0; t < threads; t++) {
            RankEndpoint re;
            synchronized (this) {
                re = leased[t];
            }
            if (re == null) {
                continue;
            }
            if (re.touched(w.id) && re.thread() == Thread.currentThread()) {
                re.flush(Math.max(0, deadline - System.nanoTime()));
            }
            while (re.touched(w.id) && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();
                Thread.yield();
            }
            if (re.touched(w.id)) {
                busy = (busy == null ? "" : busy + ", ") + "endpoint " + t + " (thread '" + re.thread().getName() + "')";
            }
        }
        byte[] mine = busy == null ? new byte[]{WINDOW_OK} : ("rank " + world.rank() + ": " + busy
                + " has operations on it in flight; flush() them").getBytes(StandardCharsets.UTF_8);
        if (busy != null) {
            byte[] m = new byte[mine.length + 1];
            System.arraycopy(mine, 0, m, 1, mine.length);
            m[0] = WINDOW_FAILED;
            mine = m;
        }
        byte[][] all = world.allgather(mine);
        StringBuilder failed = new StringBuilder();
        for (byte[] b : all) {
            if (b.length == 0 || b[0] != WINDOW_OK) {
                failed.append(failed.isEmpty() ? "" : "; ").append(new String(b, 1, Math.max(0, b.length - 1),
                        StandardCharsets.UTF_8));
            }
        }
        if (!failed.isEmpty()) {
            throw new IllegalStateException("window " + w.id + " not closed (still registered, refusing new operations; "
                    + "close it again): " + failed);
        }
        freeWindow(w);
    }

    private synchronized void freeWindow(Window w) {
        if (w.freed) {
            return;
        }
        w.freed = true;
        w.closeViews();
        windows[w.id] = null;
        forget(w.id);
        release(w.mrs, w.memoryPd);
    }

    public World world() {
        return world;
    }

    public QpType qpType() {
        return qpType;
    }

    public int threads() {
        return threads;
    }

    /**
     * The managers this rank built: on RC one per rank in rank order (the one at this rank's index
     * is the loopback, its QPs connected to themselves), one in all on connectionless devices.
     */
    public List<EndpointManager> managers() {
        return Collections.unmodifiableList(managers);
    }

    /** QPs this rank created to reach one rank (RC; the same for its loopback), or in all (connectionless). */
    public int qpsPerPeer() {
        return managers.get(0).qps.size();
    }

    /** Resources held by this rank's endpoints (sum over its managers). */
    public ResourceUsage resources() {
        ResourceUsage sum = ResourceUsage.ZERO;
        for (EndpointManager m : managers) {
            sum = sum.plus(m.resources());
        }
        return sum;
    }

    /**
     * The sums of this rank's counters by kind and name over every manager
     * ({@link EndpointManager#counterTotals()}): a snapshot; all zero when counting is off.
     */
    public Map<String, Long> counterTotals() {
        Map<String, Long> sum = new LinkedHashMap<>();
        for (EndpointManager m : managers) {
            m.counterTotals().forEach((k, v) -> sum.merge(k, v, Long::sum));
        }
        return sum;
    }

    /** Barrier (no rank still writes here), then every manager closed. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        stopProgressThread();
        try {
            world.barrier();
        } finally {
            try {
                for (Window w : windows) {
                    if (w != null) {
                        w.markClosed();
                        freeWindow(w);
                    }
                }
                release(scratchMrs, memoryPd);
            } finally {
                closeManagers(); // the mailboxes were part of window 0, freed above
            }
        }
        Throwable f = progressAgent == null ? null : progressAgent.failure.get();
        if (f != null) {
            throw new IllegalStateException("the progress thread of rank " + world.rank() + " failed in a pass (an "
                    + "active-message handler threw?): " + f, f);
        }
    }

    private void closeManagers() {
        RuntimeException first = null;
        for (EndpointManager m : managers) {
            try {
                m.close();
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
