package dev.scalep.cli;

import dev.scalep.bench.Stats;
import dev.scalep.bench.jmh.EndpointPostPollBenchmark;
import dev.scalep.endpoints.Completion;
import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointManager;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.Bootstrap;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code scalep drift}: does the machine keep one speed while a level is measured? In one JVM, with
 * the same compiled code throughout, each cycle runs a machine probe on every thread at once (the
 * same fixed arithmetic; threads 0 and 1 also bounce one cache line) and then a burst of 2-byte RDMA
 * writes at a sharing level, one endpoint per thread, and prints both. A rate that moves with the
 * probe moves with the machine, not with the level or the JIT.
 */
@Command(name = "drift", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Does this machine keep one speed? In one JVM, alternate a machine probe (every thread runs the "
                + "same fixed arithmetic at once; two of them bounce a cache line) with a burst of 2-byte RDMA writes at "
                + "a sharing level, one endpoint per thread; print each cycle's probe and rate, then the rate in the "
                + "probe's fastest and slowest thirds and where the line's round trip was far or near. A rate that "
                + "follows a probe follows the machine, not the level or the JIT.",
        footer = {"", "Examples:",
                "  scalep drift",
                "  scalep drift --category mpi-everywhere --cycles 120",
                "  scalep drift --threads 4 --category static --postlist 32"})
final class DriftCommand implements Callable<Integer> {
    /** Cycles left out of the summary: the JIT compiles the write path during them. */
    static final int WARMUP_CYCLES = 5;
    private static final int PROBE_ROUNDS = 16_000;
    private static final int LINE_ROUND_TRIPS = 200_000;
    /** The smallest jump between two neighbouring round trips (sorted) that splits near cycles from far ones. */
    static final double FAR_GAP = 2.0;

    @Option(names = "--device", paramLabel = "NAME", description = "Device (default: ${DEFAULT-VALUE}).")
    String device = Devices.DEFAULT;

    @Option(names = "--category", paramLabel = "LEVEL", description = "Sharing level: a category or the axes form "
            + "(default: ${DEFAULT-VALUE}).")
    String category = "shared-dynamic";

    @Option(names = "--threads", paramLabel = "N", description = "Threads, each with its own endpoint (2..64; "
            + "default: ${DEFAULT-VALUE}).")
    int threads = 2;

    @Option(names = "--postlist", paramLabel = "P", description = "p: work requests per doorbell (1..256; default: "
            + "${DEFAULT-VALUE}, where threads on one UAR page meet).")
    int postlist = 1;

    @Option(names = "--cycles", paramLabel = "N", description = "Probe-and-burst cycles (" + (WARMUP_CYCLES + 3)
            + "..100000; default: ${DEFAULT-VALUE}); the first " + WARMUP_CYCLES + " are warm-up.")
    int cycles = 60;

    @Option(names = "--messages", paramLabel = "N", description = "Writes per thread per burst (1000..100000000; "
            + "default: ${DEFAULT-VALUE}).")
    long messages = 1_000_000;

    /** One cycle: probe time of the slowest thread, line round trip, write rate. */
    record Cycle(double seconds, double probeMs, double roundTripNs, double mmsgPerSec) {
    }

    @Override
    public Integer call() throws Exception {
        refuseLauncher(System.getenv());
        Checks.range("--threads", threads, 2, 64, "the line probe needs two threads");
        Checks.range("--postlist", postlist, 1, 256, "");
        Checks.range("--cycles", cycles, WARMUP_CYCLES + 3, 100_000, "");
        Checks.range("--messages", messages, 1000, 100_000_000, "");
        SharingConfig cfg = SharingConfig.parse(category);
        cfg.checkThreads(threads);
        Device dev = Devices.byName(device);
        EndpointOptions o = EndpointOptions.DEFAULTS.withFeatures(postlist, 64, 2);
        System.out.printf("%s, %s, %d threads, postlist %d, %d writes per thread per burst; cycles %d..%d are warm-up%n",
                dev.name(), category, threads, postlist, messages, 1, WARMUP_CYCLES);
        System.out.printf("%6s %8s %9s %11s %8s%n", "CYCLE", "SECONDS", "PROBE ms", "LINE RT ns", "Mmsg/s");
        Cycle[] out = new Cycle[cycles];
        try (EndpointManager sender = EndpointManager.open(dev, cfg, threads, o);
             EndpointManager receiver = EndpointManager.open(dev, cfg, threads, o)) {
            sender.connect(receiver);
            run(sender, out);
        }
        summarize(Arrays.copyOfRange(out, WARMUP_CYCLES, cycles));
        return 0;
    }

    /** Ranks started together would share the machine the probes measure: drift runs as one process. */
    static void refuseLauncher(Map<String, String> env) {
        if (Bootstrap.launched(env)) {
            throw new UserException("drift measures one process's threads on this machine, and ranks started together "
                    + "would run on the same cores; run it without a launcher (mpirun, srun)");
        }
    }

    /** Run the cycles: the threads and the main thread meet at a phaser before and after each phase; the main thread times the phases. */
    private void run(EndpointManager sender, Cycle[] out) throws Exception {
        Phaser bar = new Phaser(threads + 1);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        long[] probeNs = new long[threads * 8]; // one slot per thread, a cache line apart
        Line line = new Line();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int me = t;
            workers[t] = new Thread(() -> {
                Endpoint ep = null;
                try {
                    ep = sender.acquire();
                    Completion c = new Completion();
                    int offset = (ep.index() & 7) * 2;
                    long id = 0;
                    int[] a = Probe.data(me);
                    for (int k = 0; k < out.length; k++) {
                        meet(bar);
                        probeNs[me * 8] = Probe.run(a, PROBE_ROUNDS);
                        meet(bar);
                        if (me < 2) {
                            line.bounce(me, k, LINE_ROUND_TRIPS);
                        }
                        meet(bar);
                        id = burst(ep, c, id, offset, messages);
                        meet(bar);
                    }
                    if (!ep.drain(TimeUnit.SECONDS.toNanos(30))) {
                        throw new IllegalStateException("endpoint " + ep.index() + " did not drain: " + ep.outstanding()
                                + " outstanding");
                    }
                } catch (Terminated e) {
                    // another thread failed; its error is reported
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                    bar.forceTermination(); // every thread waiting or yet to arrive stops
                } finally {
                    if (ep != null) {
                        close(ep, failed);
                    }
                }
            }, "drift-" + t);
            workers[t].start();
        }
        long start = System.nanoTime();
        try {
            for (int k = 0; k < out.length; k++) {
                meet(bar);
                meet(bar);
                long r0 = System.nanoTime();
                meet(bar);
                long w0 = System.nanoTime();
                meet(bar);
                long w1 = System.nanoTime();
                long slowest = 0;
                for (int t = 0; t < threads; t++) {
                    slowest = Math.max(slowest, probeNs[t * 8]);
                }
                out[k] = new Cycle((w1 - start) / 1e9, slowest / 1e6, (w0 - r0) / (double) LINE_ROUND_TRIPS,
                        threads * (double) messages / ((w1 - w0) / 1e3));
                System.out.printf("%6d %8.2f %9.2f %11.0f %8.2f%n", k + 1, out[k].seconds(), out[k].probeMs(),
                        out[k].roundTripNs(), out[k].mmsgPerSec());
            }
        } catch (Terminated e) {
            // a worker failed: its error follows
        } catch (RuntimeException | Error e) {
            bar.forceTermination();
            throw e;
        } finally {
            for (Thread w : workers) {
                w.join();
            }
        }
        Throwable f = failed.get();
        if (f instanceof Exception e) {
            throw e;
        } else if (f != null) {
            throw new IllegalStateException(f);
        }
    }

    /**
     * Close a thread's endpoint, after draining it when a failure left requests outstanding; a close
     * that fails is the run's error, or is attached to the error that came first.
     */
    private static void close(Endpoint ep, AtomicReference<Throwable> failed) {
        try {
            if (ep.outstanding() > 0) {
                ep.drain(TimeUnit.SECONDS.toNanos(30));
            }
            ep.close();
        } catch (RuntimeException e) {
            if (!failed.compareAndSet(null, e)) {
                failed.get().addSuppressed(e);
            }
        }
    }

    /** Thrown by {@link #meet} once a thread has failed and ended the phaser. */
    private static final class Terminated extends RuntimeException {
        Terminated() {
            super("a drift thread failed", null, false, false);
        }
    }

    /** Wait for every thread and the main thread; {@link Terminated} once one of them failed. */
    private static void meet(Phaser bar) {
        if (bar.arriveAndAwaitAdvance() < 0) {
            throw new Terminated();
        }
    }

    /** Post {@code n} writes with the body {@code EndpointPostPollBenchmark} measures; returns the next id. */
    private static long burst(Endpoint ep, Completion c, long id, int offset, long n) {
        for (long end = id + n; id < end; id++) {
            EndpointPostPollBenchmark.Ops.write(ep, c, id, offset);
        }
        return id;
    }

    /**
     * Print the steady cycles' rate, then the rate against each probe: in the arithmetic probe's fastest
     * and slowest thirds, and in the cycles whose line round trip was far (above the widest jump, of at
     * least {@value #FAR_GAP} times, between neighbouring round trips) against the rest, each with the
     * correlation of probe and rate.
     */
    static void summarize(Cycle[] steady) {
        double[] rate = Arrays.stream(steady).mapToDouble(Cycle::mmsgPerSec).toArray();
        double[] probe = Arrays.stream(steady).mapToDouble(Cycle::probeMs).toArray();
        double[] rt = Arrays.stream(steady).mapToDouble(Cycle::roundTripNs).toArray();
        Stats r = Stats.of(rate);
        Stats pr = Stats.of(probe);
        Stats lr = Stats.of(rt);
        System.out.println();
        System.out.printf("steady cycles: %d; rate %.2f Mmsg/s median (%.2f..%.2f, slowest/fastest %.2f)%n", steady.length,
                r.median(), r.min(), r.max(), r.min() / r.max());
        Cycle[] byProbe = steady.clone();
        Arrays.sort(byProbe, (x, y) -> Double.compare(x.probeMs(), y.probeMs()));
        int third = Math.max(1, byProbe.length / 3);
        System.out.printf("arithmetic probe %.2f ms median (%.2f..%.2f): rate %.2f in its fastest third, %.2f in its "
                        + "slowest; correlation %.2f%n", pr.median(), pr.min(), pr.max(),
                medianRate(byProbe, 0, third), medianRate(byProbe, byProbe.length - third, byProbe.length),
                correlation(probe, rate));
        Cycle[] byLine = steady.clone();
        Arrays.sort(byLine, (x, y) -> Double.compare(x.roundTripNs(), y.roundTripNs()));
        double[] sortedRt = Arrays.stream(byLine).mapToDouble(Cycle::roundTripNs).toArray();
        int nearCount = nearCount(sortedRt);
        String split = nearCount == sortedRt.length ? "no jump of " + FAR_GAP + "x between round trips"
                : String.format("%.0f ns or more", sortedRt[nearCount]);
        System.out.printf("line round trip %.0f ns median (%.0f..%.0f): %d cycles far (%s), rate %s there, %s "
                        + "elsewhere; correlation %.2f%n", lr.median(), lr.min(), lr.max(), byLine.length - nearCount, split,
                nearCount == byLine.length ? "-" : String.format("%.2f", medianRate(byLine, nearCount, byLine.length)),
                nearCount == 0 ? "-" : String.format("%.2f", medianRate(byLine, 0, nearCount)), correlation(rt, rate));
        System.out.println("(a correlation near -1: the rate follows that probe, the machine; near 0: it does not)");
    }

    /**
     * How many of the sorted round trips are near: those up to the widest jump between neighbours, when
     * that jump is at least {@link #FAR_GAP} times; all of them otherwise. A run spent wholly far shows
     * it in the median alone.
     */
    static int nearCount(double[] sorted) {
        int cut = sorted.length;
        double widest = FAR_GAP;
        for (int i = 0; i + 1 < sorted.length; i++) {
            if (sorted[i] > 0 && sorted[i + 1] / sorted[i] >= widest) {
                widest = sorted[i + 1] / sorted[i];
                cut = i + 1;
            }
        }
        return cut;
    }

    /** The median rate of cycles [from, to). */
    private static double medianRate(Cycle[] c, int from, int to) {
        return Stats.of(Arrays.stream(c, from, to).mapToDouble(Cycle::mmsgPerSec).toArray()).median();
    }

    /** Pearson's correlation of x and y; NaN when either does not vary. */
    static double correlation(double[] x, double[] y) {
        double mx = Arrays.stream(x).average().orElse(0);
        double my = Arrays.stream(y).average().orElse(0);
        double sxy = 0;
        double sxx = 0;
        double syy = 0;
        for (int i = 0; i < x.length; i++) {
            sxy += (x[i] - mx) * (y[i] - my);
            sxx += (x[i] - mx) * (x[i] - mx);
            syy += (y[i] - my) * (y[i] - my);
        }
        return sxx == 0 || syy == 0 ? Double.NaN : sxy / Math.sqrt(sxx * syy);
    }

    /** The fixed arithmetic every thread runs at once: a multiply-accumulate over an L1-resident array. */
    static final class Probe {
        private static volatile long sink;

        private Probe() {
        }

        static int[] data(int seed) {
            int[] a = new int[1024];
            for (int i = 0; i < a.length; i++) {
                a[i] = (i * 31 + seed) & 0xff;
            }
            return a;
        }

        /** Nanoseconds for {@code rounds} passes over {@code a}. */
        static long run(int[] a, int rounds) {
            long t0 = System.nanoTime();
            long x = 0;
            for (int r = 0; r < rounds; r++) {
                for (int i = 0; i < a.length; i++) {
                    x += (long) a[i] * a[a.length - 1 - i] + (x >>> 63);
                }
            }
            sink = x;
            return System.nanoTime() - t0;
        }
    }

    /** Two threads bounce one cache line: thread 0 writes a number, thread 1 answers with it. */
    static final class Line {
        private volatile long ping;
        private volatile long pong;

        /** Bounce {@code n} times in cycle {@code cycle} (numbers continue from the cycle before). */
        void bounce(int me, int cycle, int n) {
            long base = (long) cycle * n;
            for (long i = base + 1; i <= base + n; i++) {
                if (me == 0) {
                    ping = i;
                    while (pong != i) {
                        Thread.onSpinWait();
                    }
                } else {
                    while (ping != i) {
                        Thread.onSpinWait();
                    }
                    pong = i;
                }
            }
        }
    }
}
