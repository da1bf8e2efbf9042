package dev.scalep.threading;

import dev.scalep.verbs.Errno;
import dev.scalep.verbs.SendFlags;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A request refused inside a combined postlist is reported to the owner whose request it is,
 * never to the combining thread: thread A holds the combiner role inside the provider's post while
 * thread B queues a request and returns; the provider then refuses B's request when A posts it.
 */
class CombinedRejectionTest {
    @Test
    @Timeout(20)
    void refusalGoesToTheOwnerNotTheCombiner() throws Exception {
        FakeQp.FakeCq cq = new FakeQp.FakeCq();
        FakeQp qp = new FakeQp(5, 16, cq, 64);
        ConcurrentLinkedQueue<long[]> reported = new ConcurrentLinkedQueue<>();
        try (CombiningPoster p = new CombiningPoster(qp, 8, 2, 0, (id, errno) -> reported.add(new long[]{id, errno}))) {
            CountDownLatch aInside = new CountDownLatch(1);
            CountDownLatch bQueued = new CountDownLatch(1);
            AtomicInteger posts = new AtomicInteger();
            qp.beforePost = () -> {
                if (posts.getAndIncrement() == 0) { // A's own post: hold it until B has queued
                    aInside.countDown();
                    try {
                        assertTrue(bQueued.await(10, TimeUnit.SECONDS), "B queued");
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                } else {
                    qp.refuseWith = Errno.EINVAL; // the next list A posts (B's request) is refused
                }
            };
            AtomicInteger aRc = new AtomicInteger(-1);
            Thread a = Thread.ofPlatform().start(() ->
                    aRc.set(p.post(Requests.write(WrIds.send(0, 1), SendFlags.SIGNALED, 0, 8, 1, 0, 1))));
            assertTrue(aInside.await(10, TimeUnit.SECONDS), "A is the combiner, inside postSend");
            int bRc = p.post(Requests.write(WrIds.send(1, 7), SendFlags.SIGNALED, 0, 8, 1, 0, 1));
            assertEquals(0, bRc, "B's request was accepted (queued for the combiner)");
            bQueued.countDown();
            a.join(10_000);
            assertEquals(0, aRc.get(), "A's own request was posted: B's refusal is not A's error");
            assertEquals(0, p.rejected(0), "nothing of A refused");
            assertEquals(1, p.rejected(1), "B's request refused and counted to B");
            assertEquals(Errno.EINVAL, p.firstRejectErrno(1));
            assertEquals(1, reported.size());
            assertEquals(WrIds.send(1, 7), reported.peek()[0], "the handler names B's request");
            assertEquals(0, p.queued(), "nothing stranded");
            assertEquals(16 - 1, p.freeSlots(), "B's credit came back, A's is held until it completes");
            assertEquals(0, p.retired(1));
        }
    }
}
