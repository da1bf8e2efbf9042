package dev.scalep.threading;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

abstract class PaddedAtomicLongLhs {
    long p00, p01, p02, p03, p04, p05, p06, p07;
    long p10, p11, p12, p13, p14, p15, p16;
}

abstract class PaddedAtomicLongValue extends PaddedAtomicLongLhs {
    volatile long value;
}

abstract class PaddedAtomicLongRhs extends PaddedAtomicLongValue {
    long p20, p21, p22, p23, p24, p25, p26, p27;
    long p30, p31, p32, p33, p34, p35, p36;
}

/**
 * An atomic {@code long} alone on its cache lines: two lines of padding on each side, by
 * inheritance so the JVM cannot reorder the fields (the JCTools idiom). Thread-safe.
 */
public final class PaddedAtomicLong extends PaddedAtomicLongRhs {
    private static final VarHandle VALUE;

    static {
        try {
            VALUE = MethodHandles.lookup().findVarHandle(PaddedAtomicLongValue.class, "value", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public PaddedAtomicLong() {
    }

    public PaddedAtomicLong(long initial) {
        VALUE.setRelease(this, initial);
    }

    /** Volatile read. */
    public long get() {
        return value;
    }

    /** Acquire read: pairs with {@link #setRelease} or any atomic update. */
    public long getAcquire() {
        return (long) VALUE.getAcquire(this);
    }

    /** Plain read for the single writer of this counter. */
    public long getPlain() {
        return (long) VALUE.get(this);
    }

    public void set(long v) {
        value = v;
    }

    /** Release store: everything written before it is visible to a reader that acquires the value. */
    public void setRelease(long v) {
        VALUE.setRelease(this, v);
    }

    public boolean compareAndSet(long expect, long update) {
        return VALUE.compareAndSet(this, expect, update);
    }

    public long getAndAdd(long delta) {
        return (long) VALUE.getAndAdd(this, delta);
    }

    public long addAndGet(long delta) {
        return (long) VALUE.getAndAdd(this, delta) + delta;
    }

    /**
     * Take {@code n} units if at least {@code n} are available (all or nothing). Returns whether
     * they were taken.
     */
    public boolean tryTake(long n) {
        for (;;) {
            long c = value;
            if (c < n) {
                return false;
            }
            if (VALUE.compareAndSet(this, c, c - n)) {
                return true;
            }
            Thread.onSpinWait();
        }
    }

    @Override
    public String toString() {
        return Long.toString(value);
    }
}
