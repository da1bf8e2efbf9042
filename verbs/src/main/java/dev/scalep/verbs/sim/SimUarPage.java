package dev.scalep.verbs.sim;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One 4 KiB mlx5 UAR page as the NIC sees it: the BlueFlame buffers of its two data-path uUARs, and
 * the page's write-combining engine, which takes BlueFlame writes to either uUAR one at a time.
 *
 * <p>This is the simulator's model of the effect the research measured: without postlist, threads
 * whose QPs ring two uUARs of the same UAR page (two thread domains of one page, "shared dynamic")
 * lose rate against threads on pages of their own ("2x dynamic"), because the hardware serialises
 * BlueFlame writes per page. Here the serialisation is a real spin on a per-page flag held while the
 * 64-byte WQE is copied into the page, so concurrent writers to one page really wait for each other;
 * doorbell-only rings (postlist, BlueFlame off) do not touch it.
 */
final class SimUarPage {
    private static final VarHandle BUSY;

    static {
        try {
            BUSY = MethodHandles.lookup().findVarHandle(SimUarPage.class, "busy", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final int index;
    // Padding keeps the flag of one page off the cache lines of other pages' flags.
    @SuppressWarnings("unused")
    private long p01, p02, p03, p04, p05, p06, p07;
    private volatile int busy;
    @SuppressWarnings("unused")
    private long p11, p12, p13, p14, p15, p16, p17;
    /** uUAR slot 0's BlueFlame buffer at 0x800, slot 1's at 0xA00, each two alternating 256-byte halves. */
    private final long[] page = new long[4096 / Long.BYTES];
    private long writes;
    /** Writes that found the page busy with the other writer and waited. */
    private long waited;
    /** Writes that followed a write from the page's other uUAR: the engine passed between two writers. */
    private long handovers;
    private int lastSlot = -1;

    SimUarPage(int index) {
        this.index = index;
    }

    /** Copy 64 bytes of a WQE into the BlueFlame buffer half {@code half} of uUAR slot {@code slot}. */
    void blueFlame(int slot, int half, MemorySegment wqe, long offset) {
        boolean spun = false;
        while (!BUSY.compareAndSet(this, 0, 1)) { // acquire: pairs with the release store below
            spun = true;
            Thread.onSpinWait();
        }
        // the array form of copy: no heap segment reaches the data path's copies (see SharedMemory#plain)
        MemorySegment.copy(wqe, ValueLayout.JAVA_LONG_UNALIGNED, offset, page, (0x800 + slot * 0x200 + half * 256) / Long.BYTES,
                64 / Long.BYTES);
        writes++;
        if (spun) {
            waited++;
        }
        if (lastSlot >= 0 && lastSlot != slot) {
            handovers++;
        }
        lastSlot = slot;
        BUSY.setRelease(this, 0);
    }

    /** BlueFlame writes this page took (read once the writers are done). */
    long writes() {
        return writes;
    }

    /** Writes that waited for the page's other writer (read once the writers are done). */
    long waited() {
        return waited;
    }

    /** Writes that the page took right after one from its other uUAR (read once the writers are done). */
    long handovers() {
        return handovers;
    }
}
