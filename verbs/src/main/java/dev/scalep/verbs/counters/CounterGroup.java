package dev.scalep.verbs.counters;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The counters of one object (an endpoint, a QP's send path, a CQ's router), each an Agrona
 * {@link AtomicCounter} labelled {@code "<object> <name>"}. {@link #close} frees them.
 *
 * <p>A local group ({@link Counters#localGroup}) counts in a block of the process's memory
 * instead, a few counters to a cache line ({@link #local}), and its Agrona counters hold copies
 * that the publisher thread refreshes ({@link #publish}); {@link #value} reads the block.
 */
public final class CounterGroup implements AutoCloseable {
    private final int typeId;
    private final String object;
    private final String[] names;
    private final AtomicCounter[] counters;
    private final CountersFile file;
    /** A local group's block and its counters (null for a group that counts in its Agrona counters). */
    private final UnsafeBuffer block;
    private final LocalCounter[] local;
    private boolean closed;

    CounterGroup(int typeId, String object, String[] names, AtomicCounter[] counters, CountersFile file,
                 UnsafeBuffer block, LocalCounter[] local) {
        this.typeId = typeId;
        this.object = object;
        this.names = names.clone();
        this.counters = counters;
        this.file = file;
        this.block = block;
        this.local = local;
    }

    /** Counter {@code i} (in the order of the names given); of a local group, the published copy. */
    public AtomicCounter counter(int i) {
        return counters[i];
    }

    /** Counter {@code i} of a local group, where the data path counts. */
    public LocalCounter local(int i) {
        if (local == null) {
            throw new IllegalStateException(object + " counts in its Agrona counters, not in a local block");
        }
        return local[i];
    }

    /**
     * A slot of a local group's block beside its counters in cache line {@code line}, not
     * published: the writer's own state.
     */
    public LocalCounter scratch(int line, int slot) {
        int off = line * Counters.LINE + slot * Long.BYTES;
        if (block == null || slot < 0 || slot >= Counters.LINE / Long.BYTES || off + Long.BYTES > block.capacity()) {
            throw new IllegalArgumentException(object + ": no scratch slot " + slot + " in line " + line);
        }
        for (LocalCounter c : local) {
            if (c.offset() == off) {
                throw new IllegalArgumentException(object + ": slot " + slot + " of line " + line + " holds a counter");
            }
        }
        return new LocalCounter(block, off);
    }

    /** Whether this group counts in a local block ({@link #publish} copies it to the file). */
    public boolean isLocal() {
        return local != null;
    }

    /** The current value of counter {@code i}. */
    public long value(int i) {
        return local != null ? local[i].get() : counters[i].get();
    }

    /** Copy a local group's values into its Agrona counters (the publisher only; nothing for other groups). */
    void publish() {
        if (local != null && !closed) {
            for (int i = 0; i < local.length; i++) {
                counters[i].setOrdered(local[i].get());
            }
        }
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
