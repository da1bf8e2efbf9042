package dev.scalep.bench;

import dev.scalep.verbs.Device;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JIT warm-up before anything is timed: every distinct sharing level and variant of a plan runs once
 * at the plan's largest thread count, so that the data path of each send path (exclusive, locked,
 * combining) is compiled before the first measurement; then it waits for the compilers to go quiet.
 * Each configuration still gets its own untimed rounds in {@link SweepRunner}.
 */
public final class Warmup {
    private Warmup() {
    }

    /**
     * Run each distinct level and variant of {@code points} once with the messages of {@code w}, 400 000
     * messages over the threads (at least 5 000 per thread, at most two repeats' worth: a tiny sweep
     * stays tiny), then {@link #awaitJitQuiet()}.
     */
    public static void run(Device dev, List<SweepPoint> points, Workload w) throws InterruptedException {
        int maxThreads = points.stream().mapToInt(SweepPoint::threads).max().orElse(1);
        long most = points.stream().mapToLong(SweepPoint::messages).max().orElse(1);
        run(dev, points, w, Math.min(2 * most, Math.max(5_000, 400_000 / maxThreads)));
    }

    /** {@link #run(Device, List, Workload)} with {@code perThread} messages per thread. */
    public static void run(Device dev, List<SweepPoint> points, Workload w, long perThread) throws InterruptedException {
        Map<String, SweepPoint> warm = new LinkedHashMap<>();
        int maxThreads = points.stream().mapToInt(SweepPoint::threads).max().orElse(1);
        for (SweepPoint p : points) {
            warm.putIfAbsent(p.sharing() + "|" + p.variant(), p);
        }
        for (SweepPoint p : warm.values()) {
            SweepRunner.run(dev, new SweepPoint(p.device(), "jvm warm-up", p.sharing(), maxThreads, p.postlist(),
                    p.unsignaled(), p.depth(), perThread, p.inline(), p.blueFlame(),
                    p.shareAxis(), p.ways(), p.variant(), p.policyClass()), w, 1, 0, m -> { });
        }
        awaitJitQuiet();
    }

    /**
     * Wait (at most 10 s) until the JIT compilers have been idle for 300 ms: on a 2-core machine a
     * compiler thread still working through the warm-up's queue would take a core from the first
     * configuration measured.
     */
    public static void awaitJitQuiet() throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            Thread.sleep(1000);
            return;
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        long last = jit.getTotalCompilationTime();
        int quiet = 0;
        while (quiet < 3 && System.nanoTime() < deadline) {
            Thread.sleep(100);
            long now = jit.getTotalCompilationTime();
            quiet = now == last ? quiet + 1 : 0;
            last = now;
        }
    }
}
