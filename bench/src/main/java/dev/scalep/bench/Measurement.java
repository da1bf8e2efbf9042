package dev.scalep.bench;

import dev.scalep.verbs.ResourceUsage;

/**
 * What one run of one configuration measured: wall time of the timed phase (warm-up excluded),
 * messages completed, and the resource report of the endpoints that carried them, plus free-form
 * notes (substitutions the endpoint layer made); {@code ranks} is 1 when sender and receiver share a
 * process and 2 when they are two ranks of a job; {@code payloadBytes} is the size of each write.
 */
public record Measurement(SweepPoint point, int repeat, double seconds, long messages, ResourceUsage resources,
                          String notes, int ranks, int payloadBytes) {

    /** Million messages per second over all sender threads. */
    public double mmsgPerSec() {
        return seconds <= 0 ? 0 : messages / seconds / 1e6;
    }
}
