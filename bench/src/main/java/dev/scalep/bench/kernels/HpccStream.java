package dev.scalep.bench.kernels;

/**
 * The HPC Challenge RandomAccess pseudo-random stream: 64-bit values from the primitive polynomial
 * x^63 + x^2 + x + 1 over GF(2), one shift and a conditional XOR with {@link #POLY} per step, of
 * period {@link #PERIOD}. {@link #start(long)} jumps to the n-th value without stepping n times (by
 * squaring in GF(2)[x] modulo the polynomial), so every thread of every rank can generate its own
 * slice of the one global stream, and a verifier can replay it.
 */
public final class HpccStream {
    /** The low terms of the polynomial (x^2 + x + 1); the x^63 term is the shifted-out sign bit. */
    public static final long POLY = 0x7L;
    /** The stream's period. */
    public static final long PERIOD = 1317624576693539401L;

    /** x^(2i) reduced, for i = 0..63: the columns of the squaring map. */
    private static final long[] SQUARES = new long[64];

    static {
        long t = 1;
        for (int i = 0; i < 64; i++) {
            SQUARES[i] = t;
            t = next(next(t));
        }
    }

    private HpccStream() {
    }

    /** The value after {@code v}. */
    public static long next(long v) {
        return (v << 1) ^ (v < 0 ? POLY : 0);
    }

    /** The {@code n}-th value of the stream (the 0-th is 1), for any {@code n} (taken modulo the period). */
    public static long start(long n) {
        long k = n % PERIOD;
        if (k < 0) {
            k += PERIOD;
        }
        if (k == 0) {
            return 1;
        }
        // Left-to-right binary exponentiation of x: square for every bit below the top one, times x when it is set.
        int bit = 63 - Long.numberOfLeadingZeros(k);
        long v = 2; // x^1
        while (bit > 0) {
            long sq = 0;
            for (int j = 0; j < 64; j++) {
                if (((v >>> j) & 1) != 0) {
                    sq ^= SQUARES[j];
                }
            }
            v = sq;
            bit--;
            if (((k >>> bit) & 1) != 0) {
                v = next(v);
            }
        }
        return v;
    }
}
