package dev.scalep.verbs.sim;

import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;

/**
 * The simulated NIC's data-path lock (a QP's lock, its engine, a shared uUAR, a receive queue):
 * reentrant, with {@link #tryLock()} and {@link #isHeldByCurrentThread()}, and allocation-free when
 * contended. {@code ReentrantLock} enqueues a fresh node for every waiter that parks, so two threads
 * meeting on one QP (a poll releasing EFA's reordering window while the other posts) allocated on the
 * data path; a real provider's QP lock is a spinlock too. A waiter busy-spins a few times with
 * Agrona's {@link BusySpinIdleStrategy}, then yields between attempts ({@link YieldingIdleStrategy})
 * so a descheduled holder runs when threads outnumber cores, and past 128 attempts sleeps between
 * them ({@link SleepingIdleStrategy}, 20 µs) so many waiters on few cores leave the holder a core. Not fair; the owner word is the only
 * shared state (the hold count is the owner's own).
 */
final class SimLock {
    private static final int SPINS = 64;
    private static final IdleStrategy SPIN = BusySpinIdleStrategy.INSTANCE;
    private static final int YIELDS = 128;
    private static final IdleStrategy YIELD = YieldingIdleStrategy.INSTANCE;
    /** After {@link #YIELDS} attempts a waiter sleeps between attempts, so many waiters on few cores leave the holder a core. */
    private static final IdleStrategy SLEEP = new SleepingIdleStrategy(TimeUnit.MICROSECONDS.toNanos(20));
    private static final VarHandle OWNER;

    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(SimLock.class, "owner", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through OWNER
    private volatile Thread owner;
    private int holds; // read and written by the owner only

    /** Acquire, waiting as long as it takes; reentrant. */
    void lock() {
        Thread me = Thread.currentThread();
        if (owner == me) {
            holds++;
            return;
        }
        int attempts = 0;
        while (owner != null || !OWNER.compareAndSet(this, null, me)) {
            ++attempts;
            (attempts < SPINS ? SPIN : attempts < YIELDS ? YIELD : SLEEP).idle();
        }
        holds = 1;
    }

    /** Acquire when free or already held by this thread; never waits. */
    boolean tryLock() {
        Thread me = Thread.currentThread();
        if (owner == me) {
            holds++;
            return true;
        }
        if (owner == null && OWNER.compareAndSet(this, null, me)) {
            holds = 1;
            return true;
        }
        return false;
    }

    /**
     * Release one hold (by the owner only). The last release is a volatile store, not only a
     * release store: the simulator's hand-off ({@code SimQp.kick}) has a thread that fails
     * {@link #tryLock} leave a flag for the holder, and the holder read that flag after unlocking.
     * A release store may be ordered after that read (x86's store buffer does it), so the holder
     * would read the old flag while the other thread still saw the lock held, and the work would
     * be lost: a request that waited on another process then never ran again.
     */
    void unlock() {
        if (owner != Thread.currentThread()) {
            throw new IllegalMonitorStateException("sim lock released by a thread that does not hold it");
        }
        if (--holds == 0) {
            OWNER.setVolatile(this, (Thread) null);
        }
    }

    boolean isHeldByCurrentThread() {
        return owner == Thread.currentThread();
    }
}
