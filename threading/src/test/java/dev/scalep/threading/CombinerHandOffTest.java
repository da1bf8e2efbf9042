package dev.scalep.threading;

import dev.scalep.verbs.SendFlags;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The combiner hand-off under many short randomized races (a stand-in for jcstress): in each round
 * 2–4 threads start together and post a few small batches with random yields and spins between
 * them, so that the combiner role is won, lost and released in ever different interleavings. After
 * every round, with no thread left inside the poster, the invariants of the hand-off must hold:
 * nothing stranded in the ring (a loser returned only because the holder would post its requests),
 * every accepted request posted exactly once, never two threads in the provider's post at once,
 * each thread's requests in its own order, and every credit back once they are retired.
 */
class CombinerHandOffTest {
    @Test
    @Timeout(60)
    void randomizedRaces() throws Exception {
        long stop = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
        SplittableRandom seeds = new SplittableRandom(0x5ca1e9L);
        int rounds = 0;
        while (System.nanoTime() < stop && rounds < 4000) {
            round(seeds.nextLong(), 2 + (rounds % 3));
            rounds++;
        }
        assertTrue(rounds >= 100, "only " + rounds + " rounds ran");
    }

    static void round(long seed, int threads) throws Exception {
        int depth = 64;
        FakeQp.FakeCq cq = new FakeQp.FakeCq();
        FakeQp qp = new FakeQp(3, depth, cq, 4096);
        try (CombiningPoster p = new CombiningPoster(qp, 8, threads, 0, null)) {
            CyclicBarrier start = new CyclicBarrier(threads);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            long[] accepted = new long[threads];
            Thread[] ts = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                int owner = t;
                SplittableRandom rnd = new SplittableRandom(seed + t);
                ts[t] = Thread.ofPlatform().start(() -> {
                    try {
                        SendBatch b = new SendBatch(4);
                        start.await();
                        long next = 0;
                        int batches = 1 + rnd.nextInt(4);
                        for (int k = 0; k < batches; k++) {
                            pause(rnd);
                            int rc;
                            if (rnd.nextBoolean()) {
                                b.clear();
                                int n = 1 + rnd.nextInt(4);
                                for (int i = 0; i < n; i++) {
                                    Requests.write(b, WrIds.send(owner, next + i), SendFlags.SIGNALED, 0, 0, 0, 0, 0);
                                }
                                rc = p.post(b);
                                if (rc == 0) {
                                    next += n;
                                }
                            } else {
                                rc = p.post(Requests.write(WrIds.send(owner, next), SendFlags.SIGNALED, 0, 0, 0, 0, 0));
                                if (rc == 0) {
                                    next++;
                                }
                            }
                            if (rc != 0) {
                                throw new AssertionError("post: " + rc + " (the queue cannot be full here)");
                            }
                        }
                        accepted[owner] = next;
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            for (Thread t : ts) {
                t.join(10_000);
                assertFalse(t.isAlive(), "a poster is stuck");
            }
            assertNull(failure.get(), () -> "seed " + seed + ": " + failure.get());
            long total = 0;
            for (long a : accepted) {
                total += a;
            }
            String at = "seed " + seed + ", " + threads + " threads: ";
            assertEquals(0, p.queued(), at + "requests stranded in the ring");
            assertEquals(total, qp.postedCount.get(), at + "requests posted");
            assertEquals(total, p.combined(), at + "requests through doorbells");
            assertEquals(qp.doorbells.get(), p.doorbells(), at + "doorbells");
            assertFalse(qp.overlapSeen, at + "two threads inside postSend");
            assertEquals(depth - total, p.freeSlots(), at + "credits taken");
            // Retire in send-queue order: each id comes back once, each owner's ids in its order.
            long[] expect = new long[threads];
            for (int i = 0; i < total; i++) {
                long id = p.retire(qp.posted[i]);
                int owner = WrIds.owner(id);
                assertEquals(expect[owner]++, WrIds.user(id), at + "owner " + owner + " order at send-queue position " + i);
            }
            for (int t = 0; t < threads; t++) {
                assertEquals(accepted[t], expect[t], at + "requests of owner " + t);
                assertEquals(accepted[t], p.retired(t), at + "retired to owner " + t);
            }
            assertEquals(depth, p.freeSlots(), at + "credits back");
        }
    }

    private static void pause(SplittableRandom rnd) {
        switch (rnd.nextInt(4)) {
            case 0 -> Thread.yield();
            case 1 -> {
                for (int i = rnd.nextInt(200); i > 0; i--) {
                    Thread.onSpinWait();
                }
            }
            default -> {
            }
        }
    }
}
