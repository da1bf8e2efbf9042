package dev.scalep.bench;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Decides when a configuration's warm-up rounds are done: not after a fixed count, but once the JIT
 * has gone quiet and the rate stopped moving. On a 2-core machine a fixed two rounds ended while
 * the compiler threads were still at work: C2 took 0.6 s on a free core, and 2 s under
 * {@code mpirun -np 2}, to compile the simulated NIC's write loop ({@code DirectWrites.burst}), and
 * compiled it three times there (the in-process warm-up's profile did not hold across processes), so
 * the timed rounds of one configuration climbed from 6 to 28 Mmsg/s over 48 M messages, and whichever
 * level ran first was measured slower.
 *
 * <p>A warm-up round is followed by another unless all of these hold: at least {@link #MIN_ROUNDS}
 * ran; in the last one the JIT's compiler threads used at most {@link #QUIET_SHARE} of its wall time
 * in CPU ({@code /proc/self/task}: a compilation in progress counts while it runs; where that is
 * not readable, the {@link CompilationMXBean}'s total compilation time, which grows only when one
 * ends), and at its end nothing is being compiled or waits to be ({@link Warmup#compilerQueue()},
 * where HotSpot answers); and its rate is within {@link #STEADY} of the round before. At most {@link #MAX_ROUNDS}
 * rounds or {@link #MAX_NANOS} of warm-up run, whichever comes first: a rate that never settles (a
 * loaded host) is measured anyway, and {@link #rounds()} says how far it got. One instance per
 * configuration; used by the coordinating thread only.
 */
final class SteadyWarmup {
    static final int MIN_ROUNDS = 2;
    static final int MAX_ROUNDS = 60;
    static final long MAX_NANOS = 20_000_000_000L;
    /** The compiler threads' CPU time, as a share of a round's wall time, up to which the JIT counts as quiet. */
    static final double QUIET_SHARE = 0.05;
    /** How far a round's rate may move from the round before's and still count as steady. */
    static final double STEADY = 0.10;
    /** Linux's USER_HZ: the unit of the CPU times in /proc/PID/task/TID/stat. */
    private static final long NANOS_PER_TICK = 10_000_000L;
    private static final Path TASKS = Path.of("/proc/self/task");

    private final CompilationMXBean jit;
    private long jitNanos;
    private double lastRate = Double.NaN;
    private int rounds;
    private long nanos;

    SteadyWarmup() {
        CompilationMXBean c = ManagementFactory.getCompilationMXBean();
        this.jit = c != null && c.isCompilationTimeMonitoringSupported() ? c : null;
        this.jitNanos = jitNanos();
    }

    /**
     * The JIT's work so far in nanoseconds: the CPU time of the compiler threads, else the total
     * time of the compilations that ended, else 0.
     */
    long jitNanos() {
        long cpu = compilerCpuNanos();
        if (cpu >= 0) {
            return cpu;
        }
        return jit == null ? 0 : jit.getTotalCompilationTime() * 1_000_000L;
    }

    /** CPU time of this JVM's compiler threads ("C1 CompilerThre…", "C2 CompilerThre…"), or -1 when /proc does not say. */
    static long compilerCpuNanos() {
        long ticks = 0;
        boolean any = false;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path t : tasks) {
                String name;
                String stat;
                try {
                    name = Files.readString(t.resolve("comm"));
                    if (!name.startsWith("C1 CompilerThre") && !name.startsWith("C2 CompilerThre")) {
                        continue;
                    }
                    stat = Files.readString(t.resolve("stat"));
                } catch (IOException gone) { // the thread ended between the listing and the read
                    continue;
                }
                // after the name in parentheses: state (field 3) ... utime (14), stime (15)
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                any = true;
            }
        } catch (IOException | RuntimeException unreadable) {
            return -1;
        }
        return any ? ticks * NANOS_PER_TICK : -1;
    }

    /**
     * A warm-up round of {@code messages} took {@code roundNanos}; whether to run another. Reads the
     * JIT's work since the previous call.
     */
    boolean another(long messages, long roundNanos) {
        long now = jitNanos();
        long compiled = now - jitNanos;
        jitNanos = now;
        String queue = Warmup.compilerQueue();
        return another(messages / Math.max(1e-9, roundNanos / 1e9), compiled, queue == null || Warmup.idle(queue),
                roundNanos);
    }

    /**
     * {@link #another(long, long)} with the round's rate, the JIT's time in it and whether its queues
     * are empty now given: the decision alone.
     */
    boolean another(double rate, long jitNanosInRound, boolean queuesEmpty, long roundNanos) {
        rounds++;
        nanos += roundNanos;
        double previous = lastRate;
        lastRate = rate;
        if (rounds < MIN_ROUNDS) {
            return true;
        }
        if (rounds >= MAX_ROUNDS || nanos >= MAX_NANOS) {
            return false;
        }
        boolean quiet = queuesEmpty && jitNanosInRound <= QUIET_SHARE * roundNanos;
        boolean steady = previous > 0 && Math.abs(rate / previous - 1) <= STEADY;
        return !(quiet && steady);
    }

    /** Warm-up rounds run so far. */
    int rounds() {
        return rounds;
    }
}
