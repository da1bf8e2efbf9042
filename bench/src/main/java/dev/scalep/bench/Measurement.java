package dev.scalep.bench;

import dev.scalep.verbs.ResourceUsage;

/**
 * What one run of one configuration measured: wall time of the timed phase (warm-up excluded),
 * messages completed, and the resource report of the endpoints that carried them, plus free-form
 * notes (substitutions the endpoint layer made), the unsignaled interval that ran (the device may
 * have had to signal more often than {@code point().unsignaled()} asked), {@code ranks} (1 when
 * sender and receiver share a process, 2 when they are two ranks of a job) and the payload size,
 * what the sender's runtime counters moved by during the run ({@code counters}; null when
 * counting was off, {@code -Dscalep.counters=false}), and how many warm-up rounds ran before the
 * configuration's timed rounds ({@code warmupRounds}: {@link SteadyWarmup} ends them when the JIT
 * is quiet and the rate steady; 0 where unknown), and how long the sender threads took for the
 * {@link ControlLoop}'s fixed work around the round ({@code controlNanos}, their mean; 0 where not
 * measured): the machine's speed then; and how many timed rounds were measured again before this
 * one because the JIT compiled while they ran ({@code jitRounds}, {@link RoundJit}; their times are
 * in no row).
 */
public record Measurement(SweepPoint point, int repeat, double seconds, long messages, ResourceUsage resources,
                          String notes, int unsignaledRan, int ranks, int payloadBytes, CounterDelta counters,
                          int warmupRounds, long controlNanos, int jitRounds) {

    /** A measurement whose warm-up rounds are not known. */
    public Measurement(SweepPoint point, int repeat, double seconds, long messages, ResourceUsage resources,
                       String notes, int unsignaledRan, int ranks, int payloadBytes, CounterDelta counters) {
        this(point, repeat, seconds, messages, resources, notes, unsignaledRan, ranks, payloadBytes, counters, 0, 0, 0);
    }

    /** A measurement without counters. */
    public Measurement(SweepPoint point, int repeat, double seconds, long messages, ResourceUsage resources,
                       String notes, int unsignaledRan, int ranks, int payloadBytes) {
        this(point, repeat, seconds, messages, resources, notes, unsignaledRan, ranks, payloadBytes, null);
    }

    /** A measurement in one process of the sweep's default payload that ran the unsignaled interval its point asked for. */
    public Measurement(SweepPoint point, int repeat, double seconds, long messages, ResourceUsage resources, String notes) {
        this(point, repeat, seconds, messages, resources, notes, point.unsignaled(), 1, SweepRunner.PAYLOAD);
    }

    /** Million messages per second over all sender threads. */
    public double mmsgPerSec() {
        return seconds <= 0 ? 0 : messages / seconds / 1e6;
    }
}
