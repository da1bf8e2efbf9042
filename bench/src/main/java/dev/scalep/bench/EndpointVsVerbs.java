package dev.scalep.bench;

import dev.scalep.endpoints.Completion;
import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointManager;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The endpoint layer against the verbs it drives, side by side in one JVM and one thread, so that
 * a loaded machine slows both alike: rounds alternate between the raw loop ({@link FabricRate}'s:
 * pre-built 8-byte RDMA writes, postlist p, one signaled every q, polled straight from the CQ) and
 * the sweep's loop ({@code SweepRunner.sendAll}: {@link Endpoint#write} of the same messages at
 * {@code mpi-everywhere} with the sweep's options, then a drain). Each round reports its wall rate
 * and the sending thread's CPU time per message; the summary gives the medians and the ratio
 * endpoint / raw (of rates, i.e. raw CPU per message over the endpoint's). One rank: both sides in
 * this process. Under {@code mpirun -np 2}: rank 0 sends, rank 1 holds the targets and waits.
 * Usage: {@code java -cp scalep.jar dev.scalep.bench.EndpointVsVerbs [ROUNDS] [MESSAGES] [POSTLIST] [Q] [SIZE]}.
 * One JVM's median ratio moves by about ±0.03 from one start to the next (the compiled code and the
 * placement of its data differ), even with short rounds ({@code 41 4000000}): compare two builds
 * over eight or more JVMs of each, alternated, by the median of their medians.
 */
public final class EndpointVsVerbs {
    private static final int DEPTH = 256;
    private static final int MEM = 1 << 20;

    private EndpointVsVerbs() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        long messages = args.length > 1 ? Long.parseLong(args[1]) : 4_000_000L;
        int postlist = args.length > 2 ? Integer.parseInt(args[2]) : 32;
        int q = args.length > 3 ? Integer.parseInt(args[3]) : 64;
        int size = args.length > 4 ? Integer.parseInt(args[4]) : 8;
        if (q % postlist != 0 || DEPTH % q != 0) {
            throw new IllegalArgumentException("q must be a multiple of the postlist and divide " + DEPTH);
        }
        messages -= messages % q; // the raw loop's last list is a signaled one
        Device dev = Devices.byName("sim:mlx5");
        try (World world = World.open()) {
            if (world.size() > 2) {
                throw new IllegalArgumentException("one or two ranks");
            }
            SweepPoint p = new SweepPoint(dev.name(), "mpi-everywhere", "", 1, postlist, q, DEPTH, messages, true, true,
                    null, 1, "all");
            Workload w = new Workload(Workload.Op.WRITE, size);
            EndpointOptions opts = SweepRunner.options(p, dev.capabilities(), w);
            SharingConfig cfg = Levels.parse(List.of("mpi-everywhere")).get("mpi-everywhere");
            try (Context mine = dev.open(); Context peer = world.size() == 1 ? dev.open() : null;
                 EndpointManager sender = EndpointManager.open(dev, cfg, 1, opts);
                 EndpointManager receiver = world.size() == 1 ? EndpointManager.open(dev, cfg, 1, opts) : null) {
                Raw raw = new Raw(mine);
                Raw other = peer != null ? new Raw(peer) : null;
                if (other != null) {
                    raw.connect(other.qp.address(), other.mr.address(), other.mr.rkey());
                    other.connect(raw.qp.address(), raw.mr.address(), raw.mr.rkey());
                    sender.connect(receiver);
                } else {
                    byte[][] all = world.allgather(raw.describe());
                    ByteBuffer b = ByteBuffer.wrap(all[1 - world.rank()]);
                    byte[] qa = new byte[b.getInt()];
                    b.get(qa);
                    raw.connect(QpAddress.fromBytes(qa), b.getLong(), b.getInt());
                    all = world.allgather(sender.address());
                    sender.connect(all[1 - world.rank()]);
                    world.barrier();
                    if (world.rank() == 1) {
                        world.barrier();
                        return;
                    }
                }
                double[][] res = measure(raw, sender, rounds, messages, postlist, q, size, w);
                if (world.size() == 2) {
                    world.barrier();
                }
                report(world.size(), res, postlist, q, size);
            }
        }
    }

    /** One QP, CQ and buffer, as {@link FabricRate}'s sides. */
    private static final class Raw {
        final ProtectionDomain pd;
        final MemorySegment mem;
        final MemoryRegion mr;
        final CompletionQueue cq;
        final QueuePair qp;
        long raddr;
        int rkey;

        Raw(Context ctx) {
            pd = ctx.allocPd();
            mem = pd.allocate(MEM, 4096);
            mr = pd.register(mem, Access.ALL_RDMA);
            cq = ctx.createCq(CqOptions.of(2 * DEPTH));
            qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq, null, DEPTH, 1, 1, 1, 32, false));
        }

        byte[] describe() {
            byte[] a = qp.address().toBytes();
            return ByteBuffer.allocate(4 + a.length + 12).putInt(a.length).put(a).putLong(mr.address()).putInt(mr.rkey())
                    .array();
        }

        void connect(QpAddress peer, long addr, int key) {
            qp.connect(peer, Access.ALL_RDMA, 7);
            raddr = addr;
            rkey = key;
        }
    }

    /** Alternating rounds; returns per round {raw rate, raw ns/msg CPU, endpoint rate, endpoint ns/msg CPU}. */
    private static double[][] measure(Raw raw, EndpointManager sender, int rounds, long messages, int postlist, int q,
                                      int size, Workload w) throws InterruptedException {
        double[][] out = new double[rounds][4];
        Thread t = Thread.ofPlatform().name("sender-0").start(() -> {
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            try (Endpoint ep = sender.acquire();
                 SendWorkRequests plain = new SendWorkRequests(postlist, 1);
                 SendWorkRequests signaled = new SendWorkRequests(postlist, 1);
                 WorkCompletions wc = new WorkCompletions(16)) {
                for (int k = 0; k < postlist; k++) {
                    int i = plain.add(k, Opcode.RDMA_WRITE, SendFlags.INLINE);
                    plain.sge(i, raw.mr, 0, size).rdma(i, raw.raddr, raw.rkey);
                    i = signaled.add(k, Opcode.RDMA_WRITE, SendFlags.INLINE | (k == postlist - 1 ? SendFlags.SIGNALED : 0));
                    signaled.sge(i, raw.mr, 0, size).rdma(i, raw.raddr, raw.rkey);
                }
                Completion c = new Completion();
                for (int warm = 0; warm < 3; warm++) {
                    rawLoop(raw, plain, signaled, wc, messages, postlist, q);
                    endpointLoop(ep, c, messages, w);
                }
                for (int r = 0; r < rounds; r++) {
                    long c0 = mx.getCurrentThreadCpuTime();
                    long t0 = System.nanoTime();
                    long n = rawLoop(raw, plain, signaled, wc, messages, postlist, q);
                    long t1 = System.nanoTime();
                    long c1 = mx.getCurrentThreadCpuTime();
                    endpointLoop(ep, c, messages, w);
                    long t2 = System.nanoTime();
                    long c2 = mx.getCurrentThreadCpuTime();
                    out[r][0] = n / ((t1 - t0) / 1e3);
                    out[r][1] = (double) (c1 - c0) / n;
                    out[r][2] = messages / ((t2 - t1) / 1e3);
                    out[r][3] = (double) (c2 - c1) / messages;
                }
            }
        });
        t.join();
        return out;
    }

    /** The raw loop: at least {@code messages} writes, lists posted while the queue has room, the CQ polled; returns the count. */
    private static long rawLoop(Raw raw, SendWorkRequests plain, SendWorkRequests signaled, WorkCompletions wc,
                                long messages, int postlist, int q) {
        QueuePair qp = raw.qp;
        CompletionQueue cq = raw.cq;
        int listsPerSignal = q / postlist;
        long posted = 0;
        long done = 0;
        int inList = 0; // lists posted since the last signaled one
        while (done < messages) {
            while (posted < messages && posted - done + postlist <= DEPTH) {
                SendWorkRequests l = inList == listsPerSignal - 1 ? signaled : plain;
                int rc = qp.postSend(l);
                if (rc != 0) {
                    throw new IllegalStateException("post failed: " + Errno.name(rc));
                }
                inList = inList == listsPerSignal - 1 ? 0 : inList + 1;
                posted += postlist;
            }
            int n = cq.poll(wc, 16);
            if (n < 0) {
                throw new IllegalStateException("poll failed: " + n);
            }
            for (int i = 0; i < n; i++) {
                if (wc.status(i) != WcStatus.SUCCESS) {
                    throw new IllegalStateException("completion " + WcStatus.name(wc.status(i)));
                }
            }
            done += (long) n * q;
        }
        return posted;
    }

    /**
     * The sweep's own loop ({@link SweepRunner#sendAll}: the same method, so the JIT sees the loop
     * the sweep runs; a copy with constant offsets compiled differently), for sender thread 0.
     */
    private static void endpointLoop(Endpoint ep, Completion c, long n, Workload w) {
        SweepRunner.sendAll(ep, c, n, 0, w);
    }

    private static void report(int ranks, double[][] res, int postlist, int q, int size) {
        System.out.printf(Locale.ROOT, "%d rank(s), %d B writes, p=%d, q=%d, one thread%n", ranks, size, postlist, q);
        System.out.printf(Locale.ROOT, "%5s %12s %12s %12s %12s %8s %8s%n", "round", "raw Mmsg/s", "raw ns/msg",
                "ep Mmsg/s", "ep ns/msg", "rate", "cpu");
        double[] rate = new double[res.length];
        double[] cpu = new double[res.length];
        for (int r = 0; r < res.length; r++) {
            rate[r] = res[r][2] / res[r][0];
            cpu[r] = res[r][1] / res[r][3];
            System.out.printf(Locale.ROOT, "%5d %12.2f %12.2f %12.2f %12.2f %8.2f %8.2f%n", r + 1, res[r][0], res[r][1],
                    res[r][2], res[r][3], rate[r], cpu[r]);
        }
        System.out.printf(Locale.ROOT, "median ratio endpoint/raw: rate %.2f, cpu per message %.2f (raw %.2f ns, endpoint %.2f ns)%n",
                median(rate), median(cpu), median(col(res, 1)), median(col(res, 3)));
        double rawBest = Arrays.stream(col(res, 1)).min().orElse(0);
        double epBest = Arrays.stream(col(res, 3)).min().orElse(0);
        System.out.printf(Locale.ROOT, "best (least disturbed) cpu per message: raw %.2f ns, endpoint %.2f ns, ratio %.2f%n",
                rawBest, epBest, rawBest / epBest);
    }

    private static double[] col(double[][] a, int c) {
        double[] o = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            o[i] = a[i][c];
        }
        return o;
    }

    private static double median(double[] a) {
        double[] s = a.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
