package dev.scalep.bench.kernels;

/**
 * The NAS Parallel Benchmarks' pseudo-random generator {@code randlc}: the linear congruential
 * sequence {@code x(k+1) = a · x(k) mod 2^46} with {@code a = 5^13}, each value returned as
 * {@code x / 2^46} in (0, 1). NAS computes it exactly in double arithmetic (splitting the operands
 * in 23-bit halves); here the product is taken modulo 2^64 in a {@code long}, of which the low 46
 * bits are the same, so the values are identical. {@link #jump} skips ahead by squaring, as the
 * MPI version's {@code find_my_seed} does to give each process its part of the sequence.
 */
public final class NasRandom {
    /** NAS's multiplier {@code 5^13}. */
    public static final long A = 1_220_703_125L;
    /** The Integer Sort benchmark's seed. */
    public static final long IS_SEED = 314_159_265L;
    private static final long MASK = (1L << 46) - 1;
    private static final double R46 = 0x1p-46;

    private NasRandom() {
    }

    /** The next state after {@code x}. */
    public static long next(long x) {
        return (A * x) & MASK;
    }

    /** A state as NAS's return value, {@code x / 2^46}. */
    public static double value(long x) {
        return x * R46;
    }

    /** The state {@code steps} steps after {@code x}: {@code a^steps · x mod 2^46}. */
    public static long jump(long x, long steps) {
        long m = A;
        long r = x & MASK;
        for (long s = steps; s > 0; s >>>= 1) {
            if ((s & 1) != 0) {
                r = (r * m) & MASK;
            }
            m = (m * m) & MASK;
        }
        return r;
    }

    /**
     * Keys {@code from .. from + out.length} of the Integer Sort sequence for keys below
     * {@code maxKey}: each key is {@code (maxKey / 4) · (r1 + r2 + r3 + r4)} for the next four
     * values, summed in that order and truncated, as NAS's {@code create_seq}.
     */
    public static void isKeys(long from, int maxKey, int[] out) {
        long x = jump(IS_SEED, 4 * from);
        int k = maxKey / 4;
        for (int i = 0; i < out.length; i++) {
            x = next(x);
            double v = value(x);
            x = next(x);
            v += value(x);
            x = next(x);
            v += value(x);
            x = next(x);
            v += value(x);
            out[i] = (int) (k * v);
        }
    }
}
