package dev.scalep.verbs.sim;

import dev.scalep.verbs.AtomicCap;
import dev.scalep.verbs.counters.Events;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.DeviceKind;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.GidEntry;
import dev.scalep.verbs.GidType;
import dev.scalep.verbs.PortInfo;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.VerbsException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A simulated RDMA device. Every QP, MR and AH of every context opened on one device object lives
 * in the device's tables, so two contexts on the same device object reach each other by QPN and
 * rkey in process. A device with a job ({@link #mlx5(String)}, the registered ones) also joins the
 * job's fabric segment while it has open contexts ({@link Fabric}): QPs and MRs of other processes
 * of the same user are then reached through it. Thread-safe.
 *
 * <p>Two personalities: {@link #mlx5()} (ConnectX: RC/UD, in order, UARs/uUARs, thread domains,
 * BlueFlame) and {@link #efa()} (SRD/UD, out-of-order delivery within a seeded window, extended
 * CQs only, no thread domains). The registered devices {@code sim:mlx5} and {@code sim:efa} are one
 * shared instance each per JVM; the factories with arguments create private devices with their own
 * fabric and accounting (for tests that need a known seed or a clean baseline).
 */
public final class SimDevice implements Device {
    /** Default EFA reordering window (operations held per QP before one is released). */
    public static final int DEFAULT_EFA_WINDOW = 8;

    private static final int QP_SLOT_BITS = FabricLayout.QP_SLOT_BITS;
    private static final int KEY_SLOT_BITS = FabricLayout.MR_SLOT_BITS;
    private static final int AH_SLOT_BITS = 16;

    private static volatile SimDevice sharedMlx5;
    private static volatile SimDevice sharedEfa;

    private final String name;
    private final DeviceCapabilities caps;
    private final byte[] gid;
    final long efaSeed;
    final int efaWindow;
    final SlotTable<SimQp> qps = new SlotTable<>(QP_SLOT_BITS, FabricLayout.QP_ID_BITS, FabricLayout.PROC_BITS);
    final SlotTable<SimMr> mrs = new SlotTable<>(KEY_SLOT_BITS, FabricLayout.MR_ID_BITS, FabricLayout.PROC_BITS);
    final SlotTable<SimAh> ahs = new SlotTable<>(AH_SLOT_BITS, 31);
    /** The fabric job this device joins while it has open contexts; null = this process only. */
    private final String job;
    private final AtomicInteger pdIds = new AtomicInteger();
    private final AtomicInteger remoteWaiters = new AtomicInteger();
    private volatile long retryTimeoutNanos;
    private int openContexts;
    private volatile Fabric fabric;
    private volatile FabricDirectory directory;
    private volatile SharedMemory sharedMemory;
    private volatile FabricAgent agent;
    final Accounting accounting = new Accounting(null);
    /** QPs of an out-of-order device holding operations in their window (progress hint for pollers). */
    final AtomicInteger qpsHolding = new AtomicInteger();
    /** The 40-byte GRH placed in front of every UD receive (sgid at 8, dgid at 24). */
    final MemorySegment grh;

    private SimDevice(String name, DeviceCapabilities caps, int gidTail, long seed, int window, String job) {
        this.name = name;
        this.job = job;
        this.retryTimeoutNanos = Long.getLong("scalep.sim.retryTimeoutMillis", 4000L) * 1_000_000L;
        this.caps = caps;
        this.gid = new byte[16];
        gid[0] = (byte) 0xfe;
        gid[1] = (byte) 0x80;
        gid[14] = (byte) 0x5c;
        gid[15] = (byte) gidTail;
        if (job != null) { // the fabric is the subnet: its job names the GID's interface id
            int h = Fabric.sanitize(job).hashCode();
            gid[8] = (byte) (h >>> 24);
            gid[9] = (byte) (h >>> 16);
            gid[10] = (byte) (h >>> 8);
            gid[11] = (byte) h;
        }
        this.efaSeed = seed;
        this.efaWindow = window;
        this.grh = Arena.ofAuto().allocate(40, 8);
        grh.set(JAVA_BYTE, 0, (byte) 0x60);
        MemorySegment.copy(gid, 0, grh, JAVA_BYTE, 8, 16);
        MemorySegment.copy(gid, 0, grh, JAVA_BYTE, 24, 16);
    }

    /** The shared {@code sim:mlx5} device of this JVM. */
    public static SimDevice mlx5() {
        SimDevice d = sharedMlx5;
        if (d == null) {
            synchronized (SimDevice.class) {
                d = sharedMlx5;
                if (d == null) {
                    sharedMlx5 = d = mlx5(fabricJob());
                }
            }
        }
        return d;
    }

    /**
     * The shared {@code sim:efa} device of this JVM. System properties read once:
     * {@code scalep.sim.efa.seed} (default 1), {@code scalep.sim.efa.window} (default 8),
     * {@code scalep.sim.efa.rdmaWrite} (default true), {@code scalep.sim.efa.unsignaled} (default false).
     */
    public static SimDevice efa() {
        SimDevice d = sharedEfa;
        if (d == null) {
            synchronized (SimDevice.class) {
                d = sharedEfa;
                if (d == null) {
                    sharedEfa = d = efa(Long.getLong("scalep.sim.efa.seed", 1L),
                            Integer.getInteger("scalep.sim.efa.window", DEFAULT_EFA_WINDOW),
                            Boolean.parseBoolean(System.getProperty("scalep.sim.efa.rdmaWrite", "true")),
                            Boolean.parseBoolean(System.getProperty("scalep.sim.efa.unsignaled", "false")),
                            fabricJob());
                }
            }
        }
        return d;
    }

    /**
     * The job the registered devices join: {@code scalep.job}, {@code SCALEP_JOB}, the PMIx
     * namespace, else {@code default}; null (this process only) when {@code scalep.sim.fabric=false}.
     */
    private static String fabricJob() {
        return Boolean.parseBoolean(System.getProperty("scalep.sim.fabric", "true")) ? Fabric.defaultJob() : null;
    }

    /** A private {@code sim:mlx5} device with its own fabric and accounting (not registered). */
    public static SimDevice newMlx5() {
        return mlx5(null);
    }

    /**
     * A {@code sim:mlx5} device object that, while it has open contexts, joins the fabric of
     * {@code job} (every process of this user that does the same reaches the same NIC); null keeps
     * it to this process. Accounting is this object's.
     */
    public static SimDevice mlx5(String job) {
        DeviceCapabilities c = new DeviceCapabilities(DeviceKind.MLX5, EnumSet.of(QpType.RC, QpType.UD),
                1 << QP_SLOT_BITS, 32768, 30, 30, 1 << 16, 4194303, 1 << KEY_SLOT_BITS, 1L << 40, 1 << 16,
                1 << 15, 32767, 60, true, true, true, true, true, true, true, true, false, 512, 16, 16, AtomicCap.HCA);
        return new SimDevice("sim:mlx5", c, 1, 0, 0, job);
    }

    /** A private {@code sim:efa} device: RDMA write on, every WR signaled (v44 rule). */
    public static SimDevice efa(long seed, int window) {
        return efa(seed, window, true, false);
    }

    /**
     * A private {@code sim:efa} device.
     *
     * @param seed       seed of the reordering permutation
     * @param window     operations held per QP before one is released (1 = in order)
     * @param rdmaWrite  RDMA write and write-with-immediate available (device_caps RDMA_WRITE, v46+)
     * @param unsignaled unsignaled WRs accepted (false models rdma-core v44: every WR signaled)
     */
    public static SimDevice efa(long seed, int window, boolean rdmaWrite, boolean unsignaled) {
        return efa(seed, window, rdmaWrite, unsignaled, null);
    }

    /** A {@code sim:efa} device that joins the fabric of {@code job} while it has open contexts (null: none). */
    public static SimDevice efa(long seed, int window, boolean rdmaWrite, boolean unsignaled, String job) {
        if (window < 1 || window > 4096) {
            throw new IllegalArgumentException("EFA reordering window must be in 1..4096: " + window);
        }
        DeviceCapabilities c = new DeviceCapabilities(DeviceKind.EFA, EnumSet.of(QpType.SRD, QpType.UD),
                1 << QP_SLOT_BITS, 4096, 2, 3, 1 << 16, 65536, 1 << KEY_SLOT_BITS, 1L << 40, 1 << 16,
                0, 0, 32, false, false, true, rdmaWrite, rdmaWrite, unsignaled, false, false, true, 0, 16, 16,
                AtomicCap.NONE); // EFA has no RDMA atomics: atomic_cap is IBV_ATOMIC_NONE
        return new SimDevice("sim:efa", c, 2, seed, window, job);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String provider() {
        return "sim";
    }

    @Override
    public DeviceKind kind() {
        return caps.kind();
    }

    @Override
    public DeviceCapabilities capabilities() {
        return caps;
    }

    boolean isEfa() {
        return caps.kind() == DeviceKind.EFA;
    }

    byte[] gid() {
        return gid.clone();
    }

    /**
     * One active port with a 4096-byte MTU. {@code sim:mlx5} is a RoCE port whose link-local GID
     * appears as RoCE v1 (index 0) and v2 (index 1), as on a ConnectX port without IP addresses;
     * {@code sim:efa} has one GID of type IB and no link layer, as EFA reports.
     */
    @Override
    public List<PortInfo> ports() {
        var gids = isEfa() ? List.of(new GidEntry(0, gid, GidType.IB))
                : List.of(new GidEntry(0, gid, GidType.ROCE_V1),
                        new GidEntry(1, gid, GidType.ROCE_V2));
        return List.of(new PortInfo(1, "active", 4096, 4096,
                isEfa() ? "unspecified" : "ethernet", 0, gids));
    }

    /** Whether a peer's address is on this device's fabric (same device name and GID). */
    boolean reaches(QpAddress a) {
        return a.device().equals(name) && Arrays.equals(a.gid(), gid);
    }

    @Override
    public Context open(ContextOptions options) {
        if (options == null) {
            throw new VerbsException("ibv_open_device", Errno.EINVAL, name, "options must not be null");
        }
        Object opening = Events.deviceOpening();
        attach();
        try {
            Context c = new SimContext(this, options);
            Events.deviceOpened(opening, name, "sim");
            return c;
        } catch (RuntimeException e) {
            detach();
            throw e;
        }
    }

    /** A context opens: the first one joins the fabric (when this device has a job). */
    synchronized void attach() {
        if (openContexts == 0 && job != null) {
            Fabric f = Fabric.join(name, isEfa() ? "efa" : "mlx5", job);
            qps.prefix(f.slot);
            mrs.prefix(f.slot);
            directory = new FabricDirectory(f);
            sharedMemory = new SharedMemory(f);
            fabric = f;
            FabricAgent a = new FabricAgent(this, f);
            agent = a;
            a.start();
        }
        openContexts++;
    }

    /** A context closed: the last one leaves the fabric (segments removed). */
    synchronized void detach() {
        if (--openContexts == 0 && fabric != null) {
            agent.stop();
            Fabric f = fabric;
            fabric = null;
            agent = null;
            sharedMemory.close();
            f.leave();
            qps.prefix(0);
            mrs.prefix(0);
        }
    }

    Fabric fabric() {
        return fabric;
    }

    FabricDirectory directory() {
        return directory;
    }

    SharedMemory sharedMemory() {
        return sharedMemory;
    }

    int nextPdId() {
        return pdIds.incrementAndGet();
    }

    long retryTimeoutNanos() {
        return retryTimeoutNanos;
    }

    /**
     * How long another process's NIC may run without taking a two-sided WQE's request from its ring
     * (or room in it) before the WQE completes with RETRY_EXC_ERR (default
     * {@code scalep.sim.retryTimeoutMillis}, 4000): counted in the time that NIC's agent runs, so
     * a process the host does not schedule is slow, not lost. Returns this device.
     */
    public SimDevice retryTimeoutMillis(long millis) {
        if (millis < 1 || millis > 3_600_000) {
            throw new IllegalArgumentException("retry timeout must be 1..3600000 ms: " + millis);
        }
        this.retryTimeoutNanos = millis * 1_000_000L;
        return this;
    }

    /** The job this device joins, or null. */
    public String job() {
        return job;
    }

    /** This process's entry in the fabric (1..63), or 0 when not joined. */
    public int fabricSlot() {
        Fabric f = fabric;
        return f == null ? 0 : f.slot;
    }

    /**
     * The path prefix of this process's shared-memory files in this incarnation (allocation n is the
     * prefix followed by n), or null when not joined.
     */
    String sharedFilePrefix() {
        Fabric f = fabric;
        return f == null ? null : f.dir.resolve(f.base) + "@p" + f.slot + "e" + f.epoch + "m";
    }

    /** Why the inbound ring could not be read (a corrupt segment), or null. */
    RuntimeException fabricFailure() {
        FabricAgent a = agent;
        return a == null ? null : a.failure();
    }

    /** A QP waits for an answer from another process: run its engine again at the next progress. */
    void remoteWaiting(SimQp q) {
        if (q.awaitingRemote.compareAndSet(false, true)) {
            remoteWaiters.incrementAndGet();
        }
    }

    void nudgeRemoteWaiting() {
        if (remoteWaiters.get() == 0) {
            return;
        }
        int hw = qps.highWater();
        for (int i = 0; i < hw; i++) {
            SimQp q = qps.at(i);
            if (q != null && q.awaitingRemote.compareAndSet(true, false)) {
                remoteWaiters.decrementAndGet();
                q.nudge();
            }
        }
    }

    @Override
    public ResourceUsage resources() {
        return accounting.live();
    }

    @Override
    public ResourceUsage peakResources() {
        return accounting.peak();
    }

    /**
     * Release operations held in out-of-order windows of every QP of this device (the "NIC" makes
     * progress when a CQ is polled empty). Never blocks: a QP busy in another thread is left to it.
     */
    void progressAll() {
        FabricAgent a = agent;
        if (a != null) {
            a.drain();
            nudgeRemoteWaiting();
        }
        if (qpsHolding.get() == 0) {
            return;
        }
        int hw = qps.highWater();
        for (int i = 0; i < hw; i++) {
            SimQp q = qps.at(i);
            if (q != null && q.holding()) {
                q.requestTick();
            }
        }
    }

    @Override
    public String toString() {
        return name;
    }

    static Set<QpType> types(DeviceCapabilities c) {
        return c.qpTypes();
    }
}
