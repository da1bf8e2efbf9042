package dev.scalep.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * Whether this JVM's JIT compiled while a timed round ran. A round starts when the compilers are
 * idle ({@link Warmup#awaitJitIdle}), but a method the round itself calls rarely (once per
 * back-pressured post: the router's hand-back of held completions, a kept run's post) can reach
 * C2's threshold inside it; on a rank bound to one core (mpirun's default) the compile then takes
 * that core from the sending thread for 5-30 ms of a 50 ms round. {@link #start} before the round,
 * {@link #compiled} right after it, before anything else runs: true when the compilers' total time
 * grew by {@link #MILLIS} ms or more during the round, or when a compile is still running or queued
 * (it began inside the round). Where the JVM keeps no compile time or queue, never true.
 */
final class RoundJit {
    /** Compile time during a round, in ms, at which the round counts as disturbed. */
    static final long MILLIS = 5;

    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();
    private long before;

    /** Right before the round opens (the compilers idle). */
    void start() {
        before = totalMillis();
    }

    /** Right after the round, before anything else runs on this thread. */
    boolean compiled() {
        if (totalMillis() - before >= MILLIS) {
            return true;
        }
        String q = Warmup.compilerQueue();
        return q != null && !Warmup.idle(q);
    }

    private static long totalMillis() {
        return JIT != null && JIT.isCompilationTimeMonitoringSupported() ? JIT.getTotalCompilationTime() : 0;
    }
}
