package dev.scalep.threading;

import org.jctools.queues.SpscArrayQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Credits taken by one thread and given back by another, as a per-thread QP's poster and the
 * thread that polls its CQ do. Each retirement must return the id staged for its sequence, which
 * fails if a take ever let the poster overwrite an id-table entry the poller had not read yet (more
 * than the depth outstanding); at the end every credit is back and every request counted.
 */
@Timeout(120)
class SendCreditsTest {
    private static final int DEPTH = 64;
    private static final int BATCHES = 200_000;

    @Test
    void aTakerAndAPollerOnTwoThreadsNeverOverrunTheDepth() throws Exception {
        SendCredits c = new SendCredits(DEPTH, 1, true);
        SpscArrayQueue<long[]> signaled = new SpscArrayQueue<>(DEPTH * 2); // {sequence, id}: the CQEs
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread poller = Thread.ofPlatform().name("poller").start(() -> {
            try {
                long retired = 0;
                for (int b = 0; b < BATCHES; b++) {
                    long[] cqe;
                    while ((cqe = signaled.relaxedPoll()) == null) {
                        Thread.onSpinWait();
                    }
                    long id = c.retire(cqe[0]);
                    assertEquals(cqe[1], id, "the id staged for sequence " + cqe[0]);
                    retired = cqe[0] + 1;
                    assertEquals(retired, c.retired(0));
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        SplittableRandom rnd = new SplittableRandom(7);
        long[] ids = new long[8];
        long nextId = 0;
        long requests = 0;
        for (int b = 0; b < BATCHES && failure.get() == null; b++) {
            int n = 1 + rnd.nextInt(ids.length);
            while (!c.tryTake(n)) {
                assertNull(failure.get(), () -> "poller: " + failure.get());
                Thread.onSpinWait();
            }
            for (int i = 0; i < n; i++) {
                ids[i] = nextId++;
            }
            long first = c.sequence(ids, n);
            while (!signaled.offer(new long[] {first + n - 1, ids[n - 1]})) {
                Thread.onSpinWait();
            }
            requests += n;
        }
        poller.join();
        assertNull(failure.get(), () -> "poller: " + failure.get());
        assertEquals(DEPTH, c.free(), "every credit back");
        assertEquals(requests, c.retired(0), "every request counted");
        assertFalse(c.tryTake(DEPTH + 1), "never more than the depth");
    }

    /**
     * Runs of consecutive ids ({@link SendCredits#sequenceRun}) among single ones, of every length
     * up to the depth and starting at every place in the id table, so that runs cross its end: each
     * sequence returns the id it was given.
     */
    @Test
    void runsAcrossTheTablesEndKeepEveryId() {
        int depth = 16;
        SendCredits c = new SendCredits(depth, 1, true);
        SplittableRandom rnd = new SplittableRandom(11);
        long[] one = new long[1];
        for (int round = 0; round < 20_000; round++) {
            if (rnd.nextInt(3) == 0) { // a single request moves where the next run starts
                assertTrue(c.tryTake(1));
                one[0] = rnd.nextLong(1L << 40);
                long seq = c.sequence(one, 1);
                assertEquals(one[0], c.retire(seq));
            }
            int n = 1 + rnd.nextInt(depth);
            long firstId = rnd.nextLong(1L << 40);
            assertTrue(c.tryTake(n));
            long first = c.sequenceRun(firstId, n);
            for (int i = 0; i < n; i++) {
                assertEquals(firstId + i, c.userId(first + i), "round " + round + ": sequence " + (first + i));
            }
            assertEquals(firstId + n - 1, c.retire(first + n - 1));
            assertEquals(depth, c.free());
        }
    }

    /**
     * Runs through slot lists mixed with runs through the table, as a per-thread QP's path posts
     * them: a completion's slot wr_id retires with its run's id and every earlier request, a slot is
     * free again only once its run retired, and a completion held back (turned {@link
     * SendCredits#stable} before a later one retired it) retires later without a second credit.
     */
    @Test
    void slotRunsRetireWithTheirIdsAndHeldOnesStayExact() {
        int depth = 16;
        int slots = 3;
        SendCredits c = new SendCredits(depth, 1, true, slots);
        SplittableRandom rnd = new SplittableRandom(5);
        int slot = 0;
        long retired = 0;
        long posted = 0;
        for (int round = 0; round < 20_000; round++) {
            int n = 1 + rnd.nextInt(depth / 2);
            long firstId = rnd.nextLong(1L << 40);
            assertTrue(c.tryTake(n));
            long wr;
            long first;
            if (c.slotFree(slot) && rnd.nextInt(4) != 0) {
                first = c.sequenceSlot(slot, firstId, n);
                wr = SendCredits.slotWrId(slot, n - 1);
                assertEquals(firstId + n - 1, c.idOf(wr), "round " + round);
                int taken = slot;
                slot = (slot + 1) % slots;
                assertFalse(c.slotFree(taken), "round " + round + ": a slot whose run is out is not free");
            } else {
                first = c.sequenceRun(firstId, n);
                wr = first + n - 1;
            }
            posted += n;
            if (rnd.nextInt(3) == 0) {
                // held back: a second run is posted and retired first; the held one retires after it
                long held = c.stable(wr);
                assertEquals(first + n - 1, held, "round " + round + ": the held completion's sequence");
                int m = 1 + rnd.nextInt(depth - n);
                long secondId = rnd.nextLong(1L << 40);
                assertTrue(c.tryTake(m));
                long second = c.sequenceRun(secondId, m);
                posted += m;
                assertEquals(secondId + m - 1, c.retire(second + m - 1));
                c.retire(held);
            } else {
                assertEquals(firstId + n - 1, c.retire(wr), "round " + round);
            }
            retired = c.retired(0);
            assertEquals(posted, retired, "round " + round + ": every request retired once");
            assertEquals(depth, c.free(), "round " + round + ": every credit back, none twice");
        }
        assertTrue(c.slotFree(0) && c.slotFree(1) && c.slotFree(2));
    }

    @Test
    void slotListsNeedRewrittenIdsAndOneOwner() {
        assertThrows(IllegalArgumentException.class, () -> new SendCredits(16, 2, true, 3));
        assertThrows(IllegalArgumentException.class, () -> new SendCredits(16, 1, false, 3));
        assertThrows(IllegalArgumentException.class, () -> new SendCredits(16, 1, true, SendCredits.MAX_SLOTS + 1));
    }
}
