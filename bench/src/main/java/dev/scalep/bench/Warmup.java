package dev.scalep.bench;

import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import javax.management.JMException;
import javax.management.ObjectName;
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
     * At least this many messages are posted in warm-up in all, as long as that is at most ten
     * configurations' worth: the passes over a plan's levels repeat until then. A single level
     * measured from a fresh JVM at 4 threads was still getting faster after 8 million messages
     * (its first 2-million-message repeats 20-30% below the later ones), so less than this leaves the first
     * repeats of a small plan on code that is still being compiled.
     */
    public static final long MIN_TOTAL = 20_000_000;

    /** Rounds each level of the JVM's warm-up runs on one set of endpoints ({@link #run}). */
    static final int ROUNDS_PER_RUN = 2;

    /**
     * Run each distinct level and variant of {@code points} with the messages of {@code w}, 400 000
     * messages over the threads each (at least 5 000 per thread, at most two repeats' worth: a tiny
     * sweep stays tiny), as many passes as {@link #MIN_TOTAL} needs, then {@link #awaitJitQuiet()}.
     * On two ranks every rank calls this with the same points, and the warm-up runs between the
     * ranks, on the path the timed runs take: warmed up in one process, the first writes to the
     * other rank took branches the compiled code had never seen (the simulated NIC's way into a
     * peer's mapped memory), so the compiled sender and NIC went back to the interpreter at the
     * start of the first configuration ("made not entrant: uncommon trap") and were compiled again
     * on the rank's one core (the launcher binds a rank to a core) during its warm-up rounds.
     * Each level runs {@link #ROUNDS_PER_RUN} rounds on the same endpoints, half the messages each,
     * as a configuration's own rounds do: warmed up with one round per endpoint, the compiled sender
     * had never seen a round begin on an endpoint whose last run ended at another id
     * ({@code Endpoint.continuesRun}'s first compare false), so it went back to the interpreter at
     * the start of the configuration's second warm-up round, and the loop's C2 compilation came back
     * only 150-300 ms later, often inside the first timed rounds.
     */
    public static void run(World world, Device dev, List<SweepPoint> points, Workload w) throws InterruptedException {
        Map<String, SweepPoint> warm = new LinkedHashMap<>();
        int maxThreads = points.stream().mapToInt(SweepPoint::threads).max().orElse(1);
        long most = points.stream().mapToLong(SweepPoint::messages).max().orElse(1);
        long perThread = Math.min(2 * most, Math.max(5_000, 400_000 / maxThreads));
        long perRound = Math.max(1, perThread / ROUNDS_PER_RUN);
        for (SweepPoint p : points) {
            warm.putIfAbsent(p.sharing() + "|" + p.variant(), p);
        }
        long perPass = warm.size() * perThread * maxThreads;
        long target = Math.min(MIN_TOTAL, 10 * most * maxThreads);
        long passes = Math.max(1, (target + perPass - 1) / perPass);
        for (long pass = 0; pass < passes; pass++) {
            for (SweepPoint p : warm.values()) {
                SweepRunner.run(world, dev, new SweepPoint(p.device(), "jvm warm-up", p.sharing(), maxThreads, p.postlist(),
                        p.unsignaled(), p.depth(), perRound, p.inline(), p.blueFlame(),
                        p.shareAxis(), p.ways(), p.variant(), p.policyClass()), w, ROUNDS_PER_RUN, 0, m -> { });
            }
        }
        awaitJitQuiet();
    }

    /**
     * Wait until the JIT compilers are idle: on a 2-core machine a compiler thread still working
     * through the warm-up's queue takes a core from the first configuration measured, and the code
     * measured is not yet the code that runs later. On HotSpot the compile queues are read
     * ({@code jcmd Compiler.queue} through the DiagnosticCommand MBean) until nothing is being
     * compiled or queued three times in a row (at most 30 s); elsewhere, until the accumulated
     * compilation time has not moved for 300 ms (at most 10 s).
     */
    public static void awaitJitQuiet() throws InterruptedException {
        if (compilerQueue() != null) {
            queuesIdle(3, 50, 30_000_000_000L);
            return;
        }
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

    /** How long {@link #awaitJitIdle()} waits at most for the compilers before a timed round. */
    static final long IDLE_WAIT_NANOS = 2_000_000_000L;

    /**
     * Before a timed round: wait, at most {@link #IDLE_WAIT_NANOS}, until nothing compiles and the
     * compile queues are empty; returns at once when they are. True when it saw them idle, false
     * when the bound passed first or the queues cannot be read.
     * Printing a round's row compiles formatting code, and rarely taken paths of the data path reach
     * the C2 threshold late; on a rank the launcher bound to one core such a compile took half of
     * the core from the next round (a 2-rank sweep measured 28 and 41 Mmsg/s in the two repeats after
     * the first, 55-60 in the others).
     */
    public static boolean awaitJitIdle() throws InterruptedException {
        return queuesIdle(1, 5, IDLE_WAIT_NANOS);
    }

    /**
     * Read the compile queues, {@code pauseMillis} apart, until they are idle {@code times} reads in
     * a row (true), {@code boundNanos} pass or they cannot be read (false).
     */
    private static boolean queuesIdle(int times, long pauseMillis, long boundNanos) throws InterruptedException {
        long deadline = System.nanoTime() + boundNanos;
        int quiet = 0;
        for (;;) {
            String q = compilerQueue();
            if (q == null) {
                return false;
            }
            quiet = idle(q) ? quiet + 1 : 0;
            if (quiet >= times) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(pauseMillis);
        }
    }

    /** HotSpot's compile queues as {@code jcmd Compiler.queue} prints them, or null where there is no such command. */
    static String compilerQueue() {
        try {
            Object r = ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "compilerQueue",
                    new Object[]{null}, new String[]{String[].class.getName()});
            return r instanceof String s ? s : null;
        } catch (JMException | RuntimeException e) {
            return null;
        }
    }

    /** Whether a {@link #compilerQueue()} listing shows nothing compiling and every queue empty. */
    static boolean idle(String queue) {
        for (String line : queue.split("\n")) {
            String l = line.strip();
            if (!l.isEmpty() && !l.endsWith(":") && !l.equals("Empty")) {
                return false;
            }
        }
        return true;
    }
}
