package dev.scalep.verbs.sim;

import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.DeviceKind;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.VerbsException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A simulated RDMA device and its fabric. Every QP, MR and AH of every context opened on one
 * device object lives in the device's tables, so two contexts (two "processes") on the same
 * device reach each other by QPN and rkey. Thread-safe.
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

    private static final int QP_SLOT_BITS = 17;
    private static final int KEY_SLOT_BITS = 16;

    private static volatile SimDevice sharedMlx5;
    private static volatile SimDevice sharedEfa;

    private final String name;
    private final DeviceCapabilities caps;
    private final byte[] gid;
    final long efaSeed;
    final int efaWindow;
    final SlotTable<SimQp> qps = new SlotTable<>(QP_SLOT_BITS, 24);
    final SlotTable<SimMr> mrs = new SlotTable<>(KEY_SLOT_BITS, 31);
    final SlotTable<SimAh> ahs = new SlotTable<>(KEY_SLOT_BITS, 31);
    final Accounting accounting = new Accounting(null);
    /** QPs of an out-of-order device holding operations in their window (progress hint for pollers). */
    final AtomicInteger qpsHolding = new AtomicInteger();
    /** The 40-byte GRH placed in front of every UD receive (sgid at 8, dgid at 24). */
    final MemorySegment grh;

    private SimDevice(String name, DeviceCapabilities caps, int gidTail, long seed, int window) {
        this.name = name;
        this.caps = caps;
        this.gid = new byte[16];
        gid[0] = (byte) 0xfe;
        gid[1] = (byte) 0x80;
        gid[14] = (byte) 0x5c;
        gid[15] = (byte) gidTail;
        this.efaSeed = seed;
        this.efaWindow = window;
        this.grh = Arena.ofAuto().allocate(40, 8);
        grh.set(JAVA_BYTE, 0, (byte) 0x60);
        MemorySegment.copy(MemorySegment.ofArray(gid), 0, grh, 8, 16);
        MemorySegment.copy(MemorySegment.ofArray(gid), 0, grh, 24, 16);
    }

    /** The shared {@code sim:mlx5} device of this JVM. */
    public static SimDevice mlx5() {
        SimDevice d = sharedMlx5;
        if (d == null) {
            synchronized (SimDevice.class) {
                d = sharedMlx5;
                if (d == null) {
                    sharedMlx5 = d = newMlx5();
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
                            Boolean.parseBoolean(System.getProperty("scalep.sim.efa.unsignaled", "false")));
                }
            }
        }
        return d;
    }

    /** A private {@code sim:mlx5} device with its own fabric and accounting (not registered). */
    public static SimDevice newMlx5() {
        DeviceCapabilities c = new DeviceCapabilities(DeviceKind.MLX5, EnumSet.of(QpType.RC, QpType.UD),
                1 << QP_SLOT_BITS, 32768, 30, 30, 1 << 16, 4194303, 1 << KEY_SLOT_BITS, 1L << 40, 1 << 16,
                1 << 15, 32767, 60, true, true, true, true, true, true, true, true, false, 512);
        return new SimDevice("sim:mlx5", c, 1, 0, 0);
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
        if (window < 1 || window > 4096) {
            throw new IllegalArgumentException("EFA reordering window must be in 1..4096: " + window);
        }
        DeviceCapabilities c = new DeviceCapabilities(DeviceKind.EFA, EnumSet.of(QpType.SRD, QpType.UD),
                1 << QP_SLOT_BITS, 4096, 2, 3, 1 << 16, 65536, 1 << KEY_SLOT_BITS, 1L << 40, 1 << 16,
                0, 0, 32, false, false, true, rdmaWrite, rdmaWrite, unsignaled, false, false, true, 0);
        return new SimDevice("sim:efa", c, 2, seed, window);
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
    public java.util.List<dev.scalep.verbs.PortInfo> ports() {
        var gids = isEfa() ? java.util.List.of(new dev.scalep.verbs.GidEntry(0, gid, dev.scalep.verbs.GidType.IB))
                : java.util.List.of(new dev.scalep.verbs.GidEntry(0, gid, dev.scalep.verbs.GidType.ROCE_V1),
                        new dev.scalep.verbs.GidEntry(1, gid, dev.scalep.verbs.GidType.ROCE_V2));
        return java.util.List.of(new dev.scalep.verbs.PortInfo(1, "active", 4096, 4096,
                isEfa() ? "unspecified" : "ethernet", 0, gids));
    }

    @Override
    public Context open(ContextOptions options) {
        if (options == null) {
            throw new VerbsException("ibv_open_device", Errno.EINVAL, name, "options must not be null");
        }
        return new SimContext(this, options);
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
