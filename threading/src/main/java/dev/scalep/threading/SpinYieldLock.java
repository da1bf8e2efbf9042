package dev.scalep.threading;

import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.jctools.util.PaddedAtomicLong;

import java.util.concurrent.TimeUnit;

/**
 * A non-reentrant mutual-exclusion lock that never allocates: a CAS on a padded word (JCTools'
 * {@link PaddedAtomicLong}); a waiter idles with Agrona's stateless strategies, busy-spinning
 * ({@link BusySpinIdleStrategy}) for a few attempts, then yielding ({@link YieldingIdleStrategy})
 * between attempts. Unlike {@code ReentrantLock}, a waiting thread does not enqueue a node (which
 * allocates when it parks), so the locked send path keeps the data path allocation-free; yielding
 * keeps a descheduled holder from being starved when threads outnumber cores, and past 128 attempts a
 * waiter sleeps 20 µs between them ({@link SleepingIdleStrategy}), so many waiters on few cores leave
 * the holder a core. Not fair.
 */
public final class SpinYieldLock {
    private static final int SPINS = 64;
    private static final IdleStrategy SPIN = BusySpinIdleStrategy.INSTANCE;
    private static final int YIELDS = 128;
    private static final IdleStrategy YIELD = YieldingIdleStrategy.INSTANCE;
    /** After {@link #YIELDS} attempts a waiter sleeps between attempts, so many waiters on few cores leave the holder a core. */
    private static final IdleStrategy SLEEP = new SleepingIdleStrategy(TimeUnit.MICROSECONDS.toNanos(20));

    private final PaddedAtomicLong state = new PaddedAtomicLong();

    /** Acquire; the CAS has volatile semantics and pairs with the release store in {@link #unlock()}. */
    public void lock() {
        if (state.compareAndSet(0, 1)) {
            return;
        }
        int attempts = 0;
        while (state.lvVal() != 0 || !state.compareAndSet(0, 1)) {
            ++attempts;
            (attempts < SPINS ? SPIN : attempts < YIELDS ? YIELD : SLEEP).idle();
        }
    }

    /** Acquire if free, without waiting; true when acquired. */
    public boolean tryLock() {
        return state.lvVal() == 0 && state.compareAndSet(0, 1);
    }

    /** Release (by the holder only). */
    public void unlock() {
        state.soVal(0);
    }
}
