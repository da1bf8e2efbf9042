package dev.scalep.verbs.sim;

/**
 * EFA's out-of-order delivery for one QP (its engine lock held): up to {@code size} WQEs wait in a
 * window and one chosen by a seeded xorshift generator executes when the window is full (or all of
 * them, in random order, on a progress tick); WQEs that found no receive are parked and retried.
 * The seed depends on the device's seed and the QP's generation and slot, so a run is reproducible.
 */
final class ReorderWindow {
    final int window;
    final int[] win;
    int winCount;
    final int[] parked;
    int parkedCount;
    /** Flush scratch: window and parked WQEs sorted back into post order. */
    final int[] scratch;
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

    int nextRandom(int bound) {
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
}
