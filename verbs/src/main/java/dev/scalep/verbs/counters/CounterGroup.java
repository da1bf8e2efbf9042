package dev.scalep.verbs.counters;

import org.agrona.concurrent.status.AtomicCounter;

/**
 * The counters of one object (an endpoint, a QP's send path, a CQ's router), each an Agrona
 * {@link AtomicCounter} labelled {@code "<object> <name>"}. {@link #close} frees them.
 */
public final class CounterGroup implements AutoCloseable {
    private final int typeId;
    private final String object;
    private final String[] names;
    private final AtomicCounter[] counters;
    private final CountersFile file;
    private boolean closed;

    CounterGroup(int typeId, String object, String[] names, AtomicCounter[] counters, CountersFile file) {
        this.typeId = typeId;
        this.object = object;
        this.names = names.clone();
        this.counters = counters;
        this.file = file;
    }

    /** Counter {@code i} (in the order of the names given). */
    public AtomicCounter counter(int i) {
        return counters[i];
    }

    /** The current value of counter {@code i}. */
    public long value(int i) {
        return counters[i].get();
    }

    public String name(int i) {
        return names[i];
    }

    public int size() {
        return counters.length;
    }

    /** The Agrona type id of these counters ({@link Counters#TYPE_ENDPOINT}, ...). */
    public int typeId() {
        return typeId;
    }

    /** The object the counters describe, e.g. {@code m3.qp0}. */
    public String object() {
        return object;
    }

    /** Whether these counters are in the process's counters file (else private to the process). */
    public boolean shared() {
        return file != null;
    }

    /** Free the counters. Idempotent. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            Counters.free(this, file);
        }
    }
}
