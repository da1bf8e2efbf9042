package dev.scalep.verbs;

import dev.scalep.verbs.ffm.Structs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * What a send and a receive list share: {@code capacity} native work-request records of one C
 * layout, each pointing at its own block of {@code maxSge} {@code struct ibv_sge} entries, the
 * count of records in use, and the {@code bad_wr} slot and index a failed post reports. Not
 * thread-safe; owns its native memory until {@link #close()}.
 */
public abstract sealed class WorkRequestList implements AutoCloseable permits SendWorkRequests, RecvWorkRequests {
    /** Bytes of one {@code struct ibv_sge}. */
    protected static final long SGE = Structs.IBV_SGE.byteSize();

    /** The records, {@code wrBytes} apart. */
    protected final MemorySegment wrs;
    /** The SGE blocks, {@code maxSge} entries per record. */
    protected final MemorySegment sges;
    /** Records in the list. */
    protected int count;
    private final Arena arena;
    private final long wrBytes;
    private final long wrIdOffset;
    private final long nextOffset;
    private final long numSgeOffset;
    private final int capacity;
    private final int maxSge;
    private int badIndex = -1;
    /** Where a provider's {@code post_*} writes {@code *bad_wr}: one per list, so per posting thread. */
    private final MemorySegment badWr;

    /**
     * Records of {@code wrBytes} whose {@code wr_id}, {@code next}, {@code sg_list} and
     * {@code num_sge} fields are at the given offsets.
     */
    WorkRequestList(int capacity, int maxSge, long wrBytes, long wrIdOffset, long nextOffset, long sgListOffset,
                    long numSgeOffset) {
        if (capacity < 1 || maxSge < 1) {
            throw new IllegalArgumentException("capacity and maxSge must be >= 1: " + capacity + ", " + maxSge);
        }
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.wrBytes = wrBytes;
        this.wrIdOffset = wrIdOffset;
        this.nextOffset = nextOffset;
        this.numSgeOffset = numSgeOffset;
        this.arena = Arena.ofShared();
        this.wrs = arena.allocate(wrBytes * capacity, 64);
        this.sges = arena.allocate(SGE * capacity * maxSge, 64);
        this.badWr = arena.allocate(8, 8);
        for (int i = 0; i < capacity; i++) {
            wrs.set(JAVA_LONG_UNALIGNED, wrBytes * i + sgListOffset, sges.address() + SGE * maxSge * i);
        }
    }

    public final int capacity() {
        return capacity;
    }

    public final int maxSge() {
        return maxSge;
    }

    /** Work requests added since the last {@link #clear()}. */
    public final int count() {
        return count;
    }

    /** Forget every work request (the memory is reused). */
    public final void clear() {
        count = 0;
        badIndex = -1;
    }

    /**
     * Append a record with {@code wrId}, no SGEs and no successor, linked from the previous one;
     * returns its index, or -1 when the list is full. The caller fills the layout's other fields.
     */
    protected final int appendRecord(long wrId) {
        int i = count;
        if (i == capacity) {
            return -1;
        }
        long base = wrBytes * i;
        wrs.set(JAVA_LONG_UNALIGNED, base + wrIdOffset, wrId);
        wrs.set(JAVA_LONG_UNALIGNED, base + nextOffset, 0L);
        wrs.set(JAVA_INT_UNALIGNED, base + numSgeOffset, 0);
        if (i > 0) {
            wrs.set(JAVA_LONG_UNALIGNED, base - wrBytes + nextOffset, wrs.address() + base);
        }
        count = i + 1;
        return i;
    }

    /** Append an SGE to record {@code i} ({@code what} names the record in the error when it is full). */
    protected final void appendSge(int i, long addr, int length, int lkey, String what) {
        long at = wrBytes * i + numSgeOffset;
        int n = wrs.get(JAVA_INT_UNALIGNED, at);
        if (n == maxSge) {
            throw new IllegalStateException(what + " " + i + " already has " + maxSge + " SGEs");
        }
        putSge(i, n, addr, length, lkey);
        wrs.set(JAVA_INT_UNALIGNED, at, n + 1);
    }

    /** Byte offset of SGE {@code j} of record {@code i} in the SGE blocks. */
    protected final long sgeOffset(int i, int j) {
        return SGE * ((long) maxSge * i + j);
    }

    public final long sgeAddr(int i, int j) {
        return sges.get(JAVA_LONG_UNALIGNED, sgeOffset(i, j) + Structs.SGE_ADDR);
    }

    public final int sgeLength(int i, int j) {
        return sges.get(JAVA_INT_UNALIGNED, sgeOffset(i, j) + Structs.SGE_LENGTH);
    }

    public final int sgeLkey(int i, int j) {
        return sges.get(JAVA_INT_UNALIGNED, sgeOffset(i, j) + Structs.SGE_LKEY);
    }

    /** Write SGE {@code j} of record {@code i}. */
    protected final void putSge(int i, int j, long addr, int length, int lkey) {
        long s = sgeOffset(i, j);
        sges.set(JAVA_LONG_UNALIGNED, s + Structs.SGE_ADDR, addr);
        sges.set(JAVA_INT_UNALIGNED, s + Structs.SGE_LENGTH, length);
        sges.set(JAVA_INT_UNALIGNED, s + Structs.SGE_LKEY, lkey);
    }

    /** An 8-byte native slot for a provider's {@code bad_wr} out-parameter (provider use). */
    public final MemorySegment badWrSlot() {
        return badWr;
    }

    /**
     * Index of the first work request the last failed post did not accept (verbs' {@code bad_wr}),
     * or -1 after a successful post.
     */
    public final int badIndex() {
        return badIndex;
    }

    /** Set by providers when a post fails. */
    public final void badIndex(int index) {
        this.badIndex = index;
    }

    /** The native chain: the first record, valid while the list is open. */
    public final MemorySegment segment() {
        return wrs;
    }

    /**
     * The SGE blocks: record {@code i}'s {@code maxSge} entries start at byte
     * {@code i * maxSge * sizeof(struct ibv_sge)} (a provider reads them without going through
     * the chain's {@code sg_list} pointers).
     */
    public final MemorySegment sgeSegment() {
        return sges;
    }

    /** Native address of work request {@code i} (to compare with a returned {@code bad_wr}). */
    public final long address(int i) {
        return wrs.address() + wrBytes * i;
    }

    @Override
    public final void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
