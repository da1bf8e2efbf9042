package dev.scalep.threading;

import dev.scalep.verbs.SendFlags;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The combining QP's lanes, with the combiner held inside the provider's post (thread A) while the
 * test thread (B, another owner) hands its requests over: a stream of alike requests is one slot
 * whose run grows, so it outlasts the lane's slots, and comes out of the combiner whole, in order,
 * with each request's id and addresses; requests that each need a slot fill the lane, and the post
 * that finds it full is refused whole with its credits back.
 */
class CombiningLaneTest {
    private static final int A = 0;
    private static final int B = 1;

    /** Thread A posts one request and stays inside the provider's post until {@code go} opens. */
    private static Thread holdCombiner(CombiningPoster p, FakeQp qp, CountDownLatch go, AtomicInteger aRc)
            throws InterruptedException {
        CountDownLatch inside = new CountDownLatch(1);
        AtomicInteger posts = new AtomicInteger();
        qp.beforePost = () -> {
            if (posts.getAndIncrement() == 0) {
                inside.countDown();
                try {
                    assertTrue(go.await(10, TimeUnit.SECONDS), "released");
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        Thread a = Thread.ofPlatform().start(() ->
                aRc.set(p.post(Requests.write(WrIds.send(A, 1), SendFlags.SIGNALED, 0, 8, 1, 0, 1))));
        assertTrue(inside.await(10, TimeUnit.SECONDS), "A holds the combiner role inside postSend");
        return a;
    }

    @Test
    @Timeout(30)
    void aStreamHandedOverGrowsOneSlotAndComesOutWholeInOrder() throws Exception {
        int stream = 3 * CombiningPoster.LANE_SLOTS; // more requests than the lane has slots
        FakeQp qp = new FakeQp(7, 256, new FakeQp.FakeCq(), 1024);
        try (CombiningPoster p = new CombiningPoster(qp, 64, 2, 0, null)) {
            CountDownLatch go = new CountDownLatch(1);
            AtomicInteger aRc = new AtomicInteger(-1);
            Thread a = holdCombiner(p, qp, go, aRc);
            for (int i = 0; i < stream; i++) {
                // ids that count up, local addresses 8 bytes apart, remote ones 16: one run
                int rc = p.post(Requests.write(WrIds.send(B, 100 + i), 0, 4096 + 8L * i, 8, 1, 65536 + 16L * i, 1));
                assertEquals(0, rc, "request " + i + " of the stream handed over");
            }
            assertEquals(0, qp.postedCount.get(), "nothing posted while A is held inside the provider");
            go.countDown();
            a.join(10_000);
            assertEquals(0, aRc.get());
            assertEquals(0, p.queued(), "nothing stranded");
            assertEquals(1 + stream, qp.postedCount.get(), "every request posted once");
            assertEquals(WrIds.send(A, 1), p.idOf(qp.posted[0]));
            for (int i = 0; i < stream; i++) {
                int at = 1 + i;
                assertEquals(WrIds.send(B, 100 + i), p.idOf(qp.posted[at]), "id of stream request " + i);
                assertEquals(4096 + 8L * i, qp.postedLocal[at], "local address of stream request " + i);
                assertEquals(65536 + 16L * i, qp.postedRemote[at], "remote address of stream request " + i);
            }
        }
    }

    @Test
    @Timeout(30)
    void aFullLaneRefusesThePostWholeAndGivesItsCreditsBack() throws Exception {
        int depth = 256;
        FakeQp qp = new FakeQp(8, depth, new FakeQp.FakeCq(), 1024);
        try (CombiningPoster p = new CombiningPoster(qp, 64, 2, 0, null)) {
            CountDownLatch go = new CountDownLatch(1);
            AtomicInteger aRc = new AtomicInteger(-1);
            Thread a = holdCombiner(p, qp, go, aRc);
            // ids two apart: no run, a slot each
            for (int i = 0; i < CombiningPoster.LANE_SLOTS; i++) {
                assertEquals(0, p.post(Requests.write(WrIds.send(B, 2L * i), 0, 0, 8, 1, 0, 1)), "request " + i);
            }
            long free = p.freeSlots();
            assertEquals(depth - 1 - CombiningPoster.LANE_SLOTS, free);
            SendBatch two = new SendBatch(2);
            Requests.write(two, WrIds.send(B, 1000), 0, 0, 8, 1, 0, 1);
            Requests.write(two, WrIds.send(B, 1002), 0, 0, 8, 1, 0, 1);
            assertEquals(SendPath.EAGAIN, p.post(two), "the lane is full: back-pressure");
            assertEquals(free, p.freeSlots(), "the refused post's credits are back");
            go.countDown();
            a.join(10_000);
            assertEquals(0, aRc.get());
            assertEquals(1 + CombiningPoster.LANE_SLOTS, qp.postedCount.get(), "nothing of the refused post went out");
            assertEquals(0, p.post(two), "accepted once the combiner has taken the lane");
            assertEquals(3 + CombiningPoster.LANE_SLOTS, qp.postedCount.get());
            for (int i = 0; i < CombiningPoster.LANE_SLOTS; i++) {
                assertEquals(WrIds.send(B, 2L * i), p.idOf(qp.posted[1 + i]), "order of B's requests");
            }
            assertEquals(WrIds.send(B, 1000), p.idOf(qp.posted[1 + CombiningPoster.LANE_SLOTS]));
            assertEquals(WrIds.send(B, 1002), p.idOf(qp.posted[2 + CombiningPoster.LANE_SLOTS]));
            assertEquals(0, p.queued(), "nothing stranded");
        }
    }
}
