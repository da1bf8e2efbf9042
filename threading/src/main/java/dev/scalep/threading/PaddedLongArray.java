package dev.scalep.threading;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A fixed array of {@code long} counters spaced two cache lines apart (Agrona's habit), so that
 * counters written by different threads never share a line. Each counter supports plain,
 * acquire/release and atomic access; which one a caller may use is stated by the owner of the
 * array.
 */
public final class PaddedLongArray {
    /** Longs between two counters: 128 bytes, two cache lines (adjacent-line prefetch). */
    private static final int STRIDE = 16;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] values;
    private final int length;

    public PaddedLongArray(int length) {
        if (length < 0) {
            throw new IllegalArgumentException("length must be >= 0: " + length);
        }
        this.length = length;
        this.values = new long[(length + 2) * STRIDE];
    }

    public int length() {
        return length;
    }

    private static int index(int i) {
        return (i + 1) * STRIDE;
    }

    public long getPlain(int i) {
        return values[index(i)];
    }

    public long getAcquire(int i) {
        return (long) LONGS.getAcquire(values, index(i));
    }

    public long getVolatile(int i) {
        return (long) LONGS.getVolatile(values, index(i));
    }

    public void setRelease(int i, long v) {
        LONGS.setRelease(values, index(i), v);
    }

    /** Single-writer increment: plain read, release store. Only the counter's one writer may call it. */
    public void addOrdered(int i, long delta) {
        int k = index(i);
        LONGS.setRelease(values, k, values[k] + delta);
    }

    public long getAndAdd(int i, long delta) {
        return (long) LONGS.getAndAdd(values, index(i), delta);
    }
}
