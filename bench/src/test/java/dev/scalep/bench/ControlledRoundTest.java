package dev.scalep.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sweep's timed round keeps each thread's control work out of the timed span: no thread sends
 * while another still runs its control before the round, and no thread runs its control after the
 * round while another still sends. Thread 0 is the slow one on both sides, and it waits (boundedly)
 * for the other threads to do what they must not: start sending during its control before, start
 * their control after during its sends. Where they can, the stamps show it.
 */
class ControlledRoundTest {
    private static final int THREADS = 3;
    private static final long BOUND_S = 2;

    @Test
    void noControlRunsInsideTheTimedSpan() throws Exception {
        CyclicBarrier go = new CyclicBarrier(THREADS);
        CyclicBarrier done = new CyclicBarrier(THREADS);
        long[] begin = new long[THREADS];
        long[] finish = new long[THREADS];
        long[] beforeEnd = new long[THREADS];
        long[] afterStart = new long[THREADS];
        CountDownLatch othersSending = new CountDownLatch(THREADS - 1);
        CountDownLatch othersInControlAfter = new CountDownLatch(THREADS - 1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong results = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int idx = t;
            int[] calls = new int[1];
            LongSupplier control = () -> {
                long t0 = System.nanoTime();
                if (calls[0]++ == 0) { // before the round
                    if (idx == 0) {
                        await(othersSending); // a thread that did not wait at go is sending by now
                    }
                    beforeEnd[idx] = System.nanoTime();
                } else { // after the round
                    afterStart[idx] = t0;
                    if (idx != 0) {
                        othersInControlAfter.countDown();
                    }
                }
                return 1000L * (idx + 1);
            };
            Runnable sends = () -> {
                if (idx == 0) {
                    await(othersInControlAfter); // a thread that did not wait at done is in its control by now
                } else {
                    othersSending.countDown();
                }
            };
            Thread th = Thread.ofPlatform().name("round-" + t).start(() -> {
                try {
                    results.addAndGet(SweepRunner.controlledRound(control, go, done, begin, finish, idx, sends));
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            threads.add(th);
        }
        for (Thread th : threads) {
            th.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(!th.isAlive(), th.getName() + " did not finish its round");
        }
        assertNull(failure.get(), () -> "a round thread failed: " + failure.get());
        long firstBegin = Long.MAX_VALUE;
        long lastFinish = Long.MIN_VALUE;
        for (int t = 0; t < THREADS; t++) {
            firstBegin = Math.min(firstBegin, begin[t]);
            lastFinish = Math.max(lastFinish, finish[t]);
        }
        for (int t = 0; t < THREADS; t++) {
            assertTrue(beforeEnd[t] <= firstBegin,
                    "thread " + t + "'s control before the round ended " + (beforeEnd[t] - firstBegin) + " ns after the first send began");
            assertTrue(afterStart[t] >= lastFinish,
                    "thread " + t + "'s control after the round began " + (lastFinish - afterStart[t]) + " ns before the last send finished");
        }
        assertEquals(1000L + 2000L + 3000L, results.get(), "each thread's result is its own controls' mean");
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(BOUND_S, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
