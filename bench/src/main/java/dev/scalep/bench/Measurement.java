package dev.scalep.bench;

import dev.scalep.verbs.ResourceUsage;

/**
 * What one run of one configuration measured: wall time of the timed phase (warm-up excluded),
 * messages completed, and the resource report of the endpoints that carried them, plus free-form
 * notes (substitutions the endpoint layer made), and the unsignaled interval that ran (the device
 * may have had to signal more often than {@code point().unsignaled()} asked).
 */
public record Measurement(SweepPoint point, int repeat, double seconds, long messages, ResourceUsage resources,
                          String notes, int unsignaledRan) {

    /** A measurement that ran the unsignaled interval its point asked for. */
    public Measurement(SweepPoint point, int repeat, double seconds, long messages, ResourceUsage resources, String notes) {
        this(point, repeat, seconds, messages, resources, notes, point.unsignaled());
    }

    /** Million messages per second over all sender threads. */
    public double mmsgPerSec() {
        return seconds <= 0 ? 0 : messages / seconds / 1e6;
    }
}
