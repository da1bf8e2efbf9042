package dev.scalep.verbs.counters;

import org.agrona.UnsafeAccess;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One counter of a group kept in the process's memory ({@link Counters#localGroup}): an aligned
 * 8-byte slot of the group's block, written by the thread that holds what the counted object
 * serialises with a plain load and store ({@link #add}), or atomically by threads that do not
 * ({@link #addAtomic}). The counters file gets a copy of its value from the publisher thread.
 */
public final class LocalCounter {
    private final UnsafeBuffer block;
    private final int offset;
    /**
     * The slot's address: the block is direct memory that this counter keeps reachable, and the
     * slot was checked against its bounds when the group was made, so {@link #add} is a load and a
     * store with no bounds check and no hop through the buffer's fields.
     */
    private final long address;

    LocalCounter(UnsafeBuffer block, int offset) {
        if (block.byteArray() != null || offset < 0 || offset + Long.BYTES > block.capacity() || (offset & 7) != 0) {
            throw new IllegalArgumentException("counter slot " + offset + " outside a direct block of " + block.capacity());
        }
        this.block = block;
        this.offset = offset;
        this.address = block.addressOffset() + offset;
    }

    /** Add {@code n}: the single writer of the moment only (plain load and store). Data path. */
    public void add(long n) {
        UnsafeAccess.UNSAFE.putLong(address, UnsafeAccess.UNSAFE.getLong(address) + n);
    }

    /** Add {@code n} atomically: for counters that threads without the object's role also add to. */
    public void addAtomic(long n) {
        block.getAndAddLong(offset, n);
    }

    /** Set the value (the single writer of the moment only). */
    public void set(long v) {
        UnsafeAccess.UNSAFE.putLong(address, v);
    }

    /** The value as the writer left it (the writer's plain view: for the writer itself). */
    public long getWeak() {
        return UnsafeAccess.UNSAFE.getLong(address);
    }

    int offset() {
        return offset;
    }

    /** The value (a volatile read; any thread). */
    public long get() {
        return block.getLongVolatile(offset);
    }
}
