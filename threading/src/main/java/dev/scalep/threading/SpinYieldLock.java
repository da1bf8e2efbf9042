package dev.scalep.threading;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A non-reentrant mutual-exclusion lock that never allocates: a CAS on a padded word, a short spin,
 * then {@link Thread#yield()} between attempts. Unlike {@code ReentrantLock}, a waiting thread does
 * not enqueue a node (which allocates when it parks), so the locked send path keeps the data path
 * allocation-free; yielding keeps a descheduled holder from being starved when threads outnumber
 * cores. Not fair.
 */
public final class SpinYieldLock {
    private static final VarHandle STATE;
    private static final int SPINS = 64;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(SpinYieldLock.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused")
    private long p01, p02, p03, p04, p05, p06, p07;
    private volatile int state;
    @SuppressWarnings("unused")
    private long p11, p12, p13, p14, p15, p16, p17;

    /** Acquire; the CAS has volatile semantics and pairs with the release store in {@link #unlock()}. */
    public void lock() {
        if (STATE.compareAndSet(this, 0, 1)) {
            return;
        }
        int spins = 0;
        while (true) {
            if (state == 0 && STATE.compareAndSet(this, 0, 1)) {
                return;
            }
            if (++spins < SPINS) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /** Release (by the holder only). */
    public void unlock() {
        STATE.setRelease(this, 0);
    }
}
