package dev.scalep.bench;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
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
import dev.scalep.verbs.sim.SimDevice;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import com.sun.management.ThreadMXBean;

/**
 * Message rate of 8-byte RDMA writes on {@code sim:mlx5}, one RC QP per thread, postlist p and one
 * signaled WR every q (default q = p, one per list; q a multiple of p dividing the depth 256, as the
 * sweep's {@code --unsignaled}): between two processes ({@code cross}: this JVM and a child JVM it starts on
 * the same fabric job) or inside one ({@code local}: the in-process path). Prints one line:
 * {@code mode threads rate-Mmsg/s allocated-bytes-per-message}. Usage:
 * {@code java -cp scalep.jar dev.scalep.bench.FabricRate cross|local THREADS [SECONDS] [POSTLIST] [Q]}.
 */
public final class FabricRate {
    static final int DEPTH = 256;
    static final int MEM = 1 << 20;
    /** Bytes the sender threads allocated per message in the last run (the data path should be 0). */
    static volatile double lastBytesPerMessage;

    private FabricRate() {
    }

    /** One side's QPs and memory. */
    static final class Side implements AutoCloseable {
        final Context ctx;
        final ProtectionDomain pd;
        final MemorySegment mem;
        final MemoryRegion mr;
        final List<CompletionQueue> cqs = new ArrayList<>();
        final List<QueuePair> qps = new ArrayList<>();

        Side(SimDevice d, int threads) {
            ctx = d.open();
            pd = ctx.allocPd();
            mem = pd.allocate(MEM, 4096);
            mr = pd.register(mem, Access.ALL_RDMA);
            for (int t = 0; t < threads; t++) {
                CompletionQueue cq = ctx.createCq(CqOptions.of(2 * DEPTH));
                cqs.add(cq);
                qps.add(pd.createQp(QpInitAttr.of(QpType.RC, cq, DEPTH).withDepths(DEPTH, 1)));
            }
        }

        @Override
        public void close() {
            ctx.close();
        }
    }

    static void usage(String why) {
        System.err.println("FabricRate: " + why + " (usage: cross|local THREADS [SECONDS] [POSTLIST] [Q])");
        System.exit(2);
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 2 && args[0].equals("target")) {
            target(args[1], Integer.parseInt(args[2]));
            return;
        }
        if (args.length < 2 || !(args[0].equals("cross") || args[0].equals("local"))) {
            usage("mode must be cross or local");
        }
        int threads = parse(args[1], 1, 64, "THREADS");
        int seconds = args.length > 2 ? parse(args[2], 1, 600, "SECONDS") : 5;
        int postlist = args.length > 3 ? parse(args[3], 1, DEPTH, "POSTLIST") : 32;
        int q = args.length > 4 ? parse(args[4], postlist, DEPTH, "Q") : postlist;
        if (q % postlist != 0 || DEPTH % q != 0) {
            usage("Q must be a multiple of POSTLIST that divides " + DEPTH + ": " + q);
        }
        String job = "fabric-rate-" + ProcessHandle.current().pid();
        SimDevice dev = SimDevice.mlx5(job);
        HexFormat hex = HexFormat.of();
        try (Side me = new Side(dev, threads)) {
            Process child = null;
            long[] raddr = new long[threads];
            int[] rkey = new int[threads];
            Side local = null;
            if (args[0].equals("local")) {
                local = new Side(dev, threads);
                for (int t = 0; t < threads; t++) {
                    connect(me.qps.get(t), local.qps.get(t).address());
                    connect(local.qps.get(t), me.qps.get(t).address());
                    raddr[t] = local.mr.address();
                    rkey[t] = local.mr.rkey();
                }
            } else {
                String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
                child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-cp",
                        System.getProperty("java.class.path"), FabricRate.class.getName(), "target", job,
                        Integer.toString(threads)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
                PrintStream in = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8);
                BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                        StandardCharsets.UTF_8));
                for (int t = 0; t < threads; t++) {
                    String[] f = out.readLine().split(" ");
                    connect(me.qps.get(t), QpAddress.fromBytes(hex.parseHex(f[0])));
                    raddr[t] = Long.parseLong(f[1]);
                    rkey[t] = Integer.parseInt(f[2]);
                    in.println(hex.formatHex(me.qps.get(t).address().toBytes()));
                }
                if (!"READY".equals(out.readLine())) {
                    throw new IllegalStateException("the target process did not come up");
                }
            }
            double rate = run(me, threads, seconds, postlist, q, raddr, rkey);
            System.out.printf("%s %d %.2f %.4f%n", args[0], threads, rate, lastBytesPerMessage);
            if (child != null) {
                child.getOutputStream().close();
                child.waitFor();
            }
            if (local != null) {
                local.close();
            }
        }
    }

    private static int parse(String s, int min, int max, String what) {
        try {
            int v = Integer.parseInt(s);
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        usage(what + " must be an integer in " + min + ".." + max + ": " + s);
        return 0;
    }

    static void connect(QueuePair qp, QpAddress peer) {
        qp.connect(peer, Access.ALL_RDMA, 7);
    }

    /** The other process: one QP per thread, connected to what the initiator sends back. */
    static void target(String job, int threads) throws IOException {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        HexFormat hex = HexFormat.of();
        try (Side s = new Side(SimDevice.mlx5(job), threads)) {
            for (int t = 0; t < threads; t++) {
                out.println(hex.formatHex(s.qps.get(t).address().toBytes()) + " " + s.mr.address() + " " + s.mr.rkey());
                connect(s.qps.get(t), QpAddress.fromBytes(hex.parseHex(in.readLine())));
            }
            out.println("READY");
            while (in.readLine() != null) {
                // wait for the initiator to finish
            }
        }
    }

    static double run(Side me, int threads, int seconds, int postlist, int q, long[] raddr, int[] rkey)
            throws InterruptedException {
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong total = new AtomicLong();
        AtomicLong allocated = new AtomicLong();
        ThreadMXBean mx =
                (ThreadMXBean) ManagementFactory.getThreadMXBean();
        CountDownLatch done = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread.ofPlatform().start(() -> {
                try (SendWorkRequests w = new SendWorkRequests(postlist, 1);
                     SendWorkRequests plain = new SendWorkRequests(postlist, 1);
                     WorkCompletions wc = new WorkCompletions(16)) {
                    for (int k = 0; k < postlist; k++) {
                        int i = w.add(k, Opcode.RDMA_WRITE, k == postlist - 1 ? SendFlags.SIGNALED : 0);
                        w.sge(i, me.mr, 8L * id, 8).rdma(i, raddr[id] + 8L * (id * DEPTH + k), rkey[id]);
                        i = plain.add(k, Opcode.RDMA_WRITE, 0);
                        plain.sge(i, me.mr, 8L * id, 8).rdma(i, raddr[id] + 8L * (id * DEPTH + k), rkey[id]);
                    }
                    QueuePair qp = me.qps.get(id);
                    CompletionQueue cq = me.cqs.get(id);
                    int maxLists = DEPTH / postlist;
                    int listsPerSignal = q / postlist; // every listsPerSignal-th list ends with the signaled WR
                    int cycle = 0;
                    int lists = 0;
                    long counted = 0;
                    boolean was = false;
                    long bytes0 = 0;
                    while (!stop.get()) {
                        while (lists < maxLists && qp.postSend(cycle == listsPerSignal - 1 ? w : plain) == 0) {
                            lists++;
                            cycle = cycle == listsPerSignal - 1 ? 0 : cycle + 1;
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
                        lists -= n * listsPerSignal;
                        boolean m = measuring.get();
                        if (m && !was) {
                            bytes0 = mx.getCurrentThreadAllocatedBytes();
                        }
                        if (m) {
                            counted += (long) n * q;
                        } else if (was) {
                            allocated.addAndGet(mx.getCurrentThreadAllocatedBytes() - bytes0);
                            break;
                        }
                        was = m;
                    }
                    total.addAndGet(counted);
                } finally {
                    done.countDown();
                }
            });
        }
        Thread.sleep(1000); // warm-up
        long t0 = System.nanoTime();
        measuring.set(true);
        Thread.sleep(seconds * 1000L);
        measuring.set(false);
        long t1 = System.nanoTime();
        stop.set(true);
        done.await();
        lastBytesPerMessage = total.get() == 0 ? 0 : (double) allocated.get() / total.get();
        return total.get() / ((t1 - t0) / 1e3);
    }
}
