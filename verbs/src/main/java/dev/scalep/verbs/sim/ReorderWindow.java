package dev.scalep.verbs.sim;

/**
 * EFA's out-of-order delivery for one QP (its engine lock held): up to {@code size} WQEs wait in a
 * window and one chosen by a seeded xorshift generator executes when the window is full (or all of
 * them, in random order, on a progress tick); WQEs that found no receive are parked and retried.
 * The seed depends on the device's seed and the QP's generation and slot, so a run is reproducible.
 * The window and the parked list hold slots of the QP's {@link SendSlots}.
 */
final class ReorderWindow {
    private final int window;
    private final int[] win;
    private int winCount;
    private final int[] parked;
    private int parkedCount;
    /** Flush scratch: window and parked WQEs sorted back into post order. */
    private final int[] scratch;
    private long rng;

    ReorderWindow(int window, int cap, long seed, int qpn) {
        this.window = window;
        this.win = new int[window];
        this.parked = new int[cap];
        this.scratch = new int[cap];
        // seeded by generation and slot, not by the fabric's process bits: the same order in every process
        int local = (qpn >>> (FabricLayout.QP_SLOT_BITS + FabricLayout.PROC_BITS)) << 17
                | (qpn & (FabricLayout.QP_SLOTS - 1));
        this.rng = mix(seed * 0x9E3779B97F4A7C15L + local);
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        z = z ^ (z >>> 33);
        return z == 0 ? 1 : z;
    }

    private int nextRandom(int bound) {
        long x = rng;
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        rng = x;
        return (int) Long.remainderUnsigned(x, bound);
    }

    void reset() {
        winCount = 0;
        parkedCount = 0;
    }

    /** Whether a WQE waits in the window or is parked (the QP holds work back). */
    boolean holds() {
        return winCount + parkedCount > 0;
    }

    boolean full() {
        return winCount == window;
    }

    boolean isEmpty() {
        return winCount == 0;
    }

    /** Slot s enters the window (not {@link #full}). */
    void add(int s) {
        win[winCount++] = s;
    }

    /** Take the entry the generator picks out of the (non-empty) window. */
    int takeRandom() {
        int r = nextRandom(winCount);
        int s = win[r];
        win[r] = win[--winCount];
        return s;
    }

    /** Slot s found no receive: it waits to be retried. */
    void park(int s) {
        parked[parkedCount++] = s;
    }

    int parkedCount() {
        return parkedCount;
    }

    /** The i-th parked slot; {@link #unpark} moves the last one into its place. */
    int parkedAt(int i) {
        return parked[i];
    }

    void unpark(int i) {
        parked[i] = parked[--parkedCount];
    }

    /**
     * Empty the window and the parked list into the flush scratch, sorted back into post order
     * ({@link SendSlots#seq}); returns how many, to be read with {@link #drainedAt}.
     */
    int drainInPostOrder(SendSlots sl) {
        int n = 0;
        for (int i = 0; i < winCount; i++) {
            scratch[n++] = win[i];
        }
        for (int i = 0; i < parkedCount; i++) {
            scratch[n++] = parked[i];
        }
        winCount = parkedCount = 0;
        for (int i = 1; i < n; i++) { // insertion sort by post order
            int x = scratch[i];
            int j = i - 1;
            while (j >= 0 && sl.seq(scratch[j]) > sl.seq(x)) {
                scratch[j + 1] = scratch[j];
                j--;
            }
            scratch[j + 1] = x;
        }
        return n;
    }

    int drainedAt(int i) {
        return scratch[i];
    }
}
