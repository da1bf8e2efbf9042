package dev.scalep.verbs;

import dev.scalep.verbs.ffm.Structs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A reusable, allocation-free chain of receive work requests in the native
 * {@code struct ibv_recv_wr} layout, posted with one call to a QP's receive queue or an SRQ.
 * Not thread-safe; owns its native memory until {@link #close()}.
 */
public final class RecvWorkRequests implements AutoCloseable {
    private static final long WR = Structs.IBV_RECV_WR.byteSize();
    private static final long SGE = Structs.IBV_SGE.byteSize();

    private final Arena arena;
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final int capacity;
    private final int maxSge;
    private int count;
    private int badIndex = -1;
    /** Where a provider's {@code post_*} writes {@code *bad_wr}: one per list, so per posting thread. */
    private final MemorySegment badWr;

    public RecvWorkRequests(int capacity, int maxSge) {
        if (capacity < 1 || maxSge < 1) {
            throw new IllegalArgumentException("capacity and maxSge must be >= 1: " + capacity + ", " + maxSge);
        }
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.arena = Arena.ofShared();
        this.wrs = arena.allocate(WR * capacity, 64);
        this.sges = arena.allocate(SGE * capacity * maxSge, 64);
        this.badWr = arena.allocate(8, 8);
        for (int i = 0; i < capacity; i++) {
            wrs.set(JAVA_LONG, WR * i + Structs.RECV_SG_LIST, sges.address() + SGE * maxSge * i);
        }
    }

    public int capacity() {
        return capacity;
    }

    public int maxSge() {
        return maxSge;
    }

    public int count() {
        return count;
    }

    public void clear() {
        count = 0;
        badIndex = -1;
    }

    /** Append a receive with no SGEs; returns its index, or -1 when the list is full. */
    public int add(long wrId) {
        int i = count;
        if (i == capacity) {
            return -1;
        }
        long base = WR * i;
        wrs.set(JAVA_LONG, base + Structs.RECV_WR_ID, wrId);
        wrs.set(JAVA_LONG, base + Structs.RECV_NEXT, 0L);
        wrs.set(JAVA_INT, base + Structs.RECV_NUM_SGE, 0);
        if (i > 0) {
            wrs.set(JAVA_LONG, base - WR + Structs.RECV_NEXT, wrs.address() + base);
        }
        count = i + 1;
        return i;
    }

    public RecvWorkRequests sge(int i, long addr, int length, int lkey) {
        long base = WR * i;
        int n = wrs.get(JAVA_INT, base + Structs.RECV_NUM_SGE);
        if (n == maxSge) {
            throw new IllegalStateException("receive " + i + " already has " + maxSge + " SGEs");
        }
        long s = SGE * ((long) maxSge * i + n);
        sges.set(JAVA_LONG, s + Structs.SGE_ADDR, addr);
        sges.set(JAVA_INT, s + Structs.SGE_LENGTH, length);
        sges.set(JAVA_INT, s + Structs.SGE_LKEY, lkey);
        wrs.set(JAVA_INT, base + Structs.RECV_NUM_SGE, n + 1);
        return this;
    }

    public RecvWorkRequests sge(int i, MemoryRegion mr, long offset, int length) {
        return sge(i, mr.address() + offset, length, mr.lkey());
    }

    public long wrId(int i) {
        return wrs.get(JAVA_LONG, WR * i + Structs.RECV_WR_ID);
    }

    public int numSge(int i) {
        return wrs.get(JAVA_INT, WR * i + Structs.RECV_NUM_SGE);
    }

    public long sgeAddr(int i, int j) {
        return sges.get(JAVA_LONG, SGE * ((long) maxSge * i + j) + Structs.SGE_ADDR);
    }

    public int sgeLength(int i, int j) {
        return sges.get(JAVA_INT, SGE * ((long) maxSge * i + j) + Structs.SGE_LENGTH);
    }

    public int sgeLkey(int i, int j) {
        return sges.get(JAVA_INT, SGE * ((long) maxSge * i + j) + Structs.SGE_LKEY);
    }

    /** An 8-byte native slot for a provider's {@code bad_wr} out-parameter (provider use). */
    public MemorySegment badWrSlot() {
        return badWr;
    }

    public int badIndex() {
        return badIndex;
    }

    public void badIndex(int index) {
        this.badIndex = index;
    }

    public MemorySegment segment() {
        return wrs;
    }

    public long address(int i) {
        return wrs.address() + WR * i;
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
