package dev.scalep.verbs.sim;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A fixed-capacity id → object table for the fabric (QPNs, MR keys, AH handles). Ids are
 * {@code generation << slotBits | slot}, so a stale id of a destroyed object never resolves to its
 * successor in the same slot. Allocation and release are serialised (control path); {@link #get} is
 * lock-free and allocation-free (data path): a volatile read of the slot, then an id comparison.
 */
final class SlotTable<T extends SlotTable.Entry> {
    /** An object living in a slot table. */
    interface Entry {
        int simId();
    }

    private final AtomicReferenceArray<T> slots;
    private final int[] generation;
    private final int[] free;
    private final int slotBits;
    private final int mask;
    private final int maxGeneration;
    private final int genShift;
    private int prefix;
    private int freeTop;
    private int highWater;

    SlotTable(int slotBits, int idBits) {
        this(slotBits, idBits, 0);
    }

    /**
     * A table whose ids carry a {@code prefixBits}-bit prefix between the generation and the slot
     * (the fabric's process entry, see {@link #prefix(int)}).
     */
    SlotTable(int slotBits, int idBits, int prefixBits) {
        this.slotBits = slotBits;
        int capacity = 1 << slotBits;
        this.mask = capacity - 1;
        this.genShift = slotBits + prefixBits;
        this.maxGeneration = (1 << (idBits - genShift)) - 1;
        this.slots = new AtomicReferenceArray<>(capacity);
        this.generation = new int[capacity];
        this.free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        this.freeTop = capacity;
    }

    int capacity() {
        return mask + 1;
    }

    /** Reserve an id, or -1 when the table is full. The object is published with {@link #publish}. */
    synchronized int reserve() {
        if (freeTop == 0) {
            return -1;
        }
        int slot = free[--freeTop];
        int g = generation[slot] + 1;
        if (g > maxGeneration) {
            g = 1;
        }
        generation[slot] = g;
        if (slot + 1 > highWater) {
            highWater = slot + 1;
        }
        return (g << genShift) | (prefix << slotBits) | slot;
    }

    /** Set the prefix of ids reserved from now on (only while the table is empty). */
    synchronized void prefix(int p) {
        this.prefix = p;
    }

    /** Make {@code t} (whose {@code simId()} is a reserved id) visible to {@link #get}. */
    void publish(T t) {
        slots.set(t.simId() & mask, t);
    }

    /** Remove {@code t} and recycle its slot. */
    synchronized void release(T t) {
        int slot = t.simId() & mask;
        if (slots.get(slot) == t) {
            slots.set(slot, null);
        }
        free[freeTop++] = slot;
    }

    /** The live object with this id, or null. */
    T get(int id) {
        if (id <= 0) {
            return null;
        }
        T t = slots.get(id & mask);
        return t != null && t.simId() == id ? t : null;
    }

    /** Slot access for scans (index below {@link #highWater()}). */
    T at(int slot) {
        return slots.get(slot);
    }

    synchronized int highWater() {
        return highWater;
    }
}
