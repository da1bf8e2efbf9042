package dev.scalep.bench;

/**
 * A fixed piece of pure CPU work, timed beside each measured round, that says how fast the core
 * ran then. A virtual machine's vCPU can run at one of two speeds for seconds at a time, which the
 * guest does not see as steal time (on the 2-vCPU development VM: 1.0x or 1.8–2.0x the fastest
 * time of a plain loop, in turns; see docs/ARCHITECTURE.md, "The machine's own two speeds"); a
 * round measured in the slow turn is slow for that reason alone. A chain of dependent arithmetic
 * did not see the slow turns (its time stayed within 3 % while the sweep went from 22 to 33
 * Mmsg/s), as a core's other hardware thread hardly slows one that waits on its own latencies;
 * the work is therefore what the data path does: loads and stores over a {@value #TABLE_BYTES}-byte
 * table (the L1 data cache's size) at data-dependent places, with a data-dependent branch, about
 * a millisecond of it, its result kept so that the JIT cannot drop it. Each sender thread has its
 * own instance (and table) and runs it outside the timed span: the sweep's threads meet at a
 * barrier after their controls and before their sends, and again after their sends.
 */
final class ControlLoop {
    static final int STEPS = 1 << 19;
    static final int TABLE_BYTES = 32 * 1024;
    private static final int MASK = TABLE_BYTES / Integer.BYTES - 1;
    private static final int[] SEED_TABLE = new int[MASK + 1];

    static {
        int x = 0x9E3779B9;
        for (int i = 0; i <= MASK; i++) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            SEED_TABLE[i] = x;
        }
    }

    /**
     * This thread's table: the walk writes into it, and a table shared by the sender threads moved
     * its lines between their cores at every write, so the control measured that traffic as well as
     * the core.
     */
    private final int[] table = SEED_TABLE.clone();
    private int sink;

    /** Nanoseconds the calling thread took for the work, now. One instance per thread. */
    long nanos() {
        long t0 = System.nanoTime();
        int x = walk(table, sink);
        long t = System.nanoTime() - t0;
        sink ^= x;
        return t;
    }

    private static int walk(int[] t, int seed) {
        int j = seed & MASK;
        int acc = 0;
        for (int i = 0; i < STEPS; i++) {
            int v = t[j];
            j = (j + (v & 63) + 1) & MASK;
            t[(j ^ 1) & MASK] = v + i;
            acc += v;
            if ((v & 1) == 0) {
                acc ^= i;
            }
        }
        return acc;
    }
}
