package dev.scalep.threading;

import dev.scalep.verbs.SendFlags;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many threads through one shared send queue and one shared CQ: every request posted exactly once,
 * the send queue never overfilled (the fake NIC refuses beyond its depth), every signaled
 * completion delivered to its owner once and in its post order, every request retired to its
 * owner, all credits back at the end.
 */
class SharedQpStressTest {
    /** A thread that makes no progress for this long fails the test (a stall, not a slow machine). */
    static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(20);

    enum Kind { COMBINING, LOCKED }

    static SendPath path(Kind k, FakeQp qp, int owners) {
        return k == Kind.COMBINING ? new CombiningPoster(qp, 64, owners, 0, null) : new LockedPoster(qp, 64, owners, 0, null);
    }

    @ParameterizedTest(name = "{0} threads={1} perThread={2} signalEvery={3} batch={4}")
    @CsvSource({
            "COMBINING, 8, 250000, 16, 1",
            "COMBINING, 8, 100000, 1, 1",
            "COMBINING, 4, 200000, 8, 8",
            "LOCKED, 8, 150000, 16, 1",
            "LOCKED, 4, 100000, 1, 4",
    })
    @Timeout(600)
    void sharedQp(Kind kind, int threads, int perThread, int signalEvery, int batch) throws Exception {
        FakeQp.FakeCq cq = new FakeQp.FakeCq();
        int depth = 256;
        FakeQp qp = new FakeQp(7, depth, cq, threads * perThread);
        cq.qps.put(qp.qpNum, qp);
        try (SendPath p = path(kind, qp, threads);
             CompletionRouter router = new CompletionRouter(cq, threads, depth * 2, 64)) {
            router.route(qp.qpNum, -1, p);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CyclicBarrier start = new CyclicBarrier(threads);
            long t0 = System.nanoTime();
            List<Thread> ts = new ArrayList<>();
            long[] delivered = new long[threads];
            for (int t = 0; t < threads; t++) {
                int owner = t;
                ts.add(Thread.ofPlatform().name("poster-" + t).start(() -> {
                    try {
                        start.await();
                        RoutedCompletion c = new RoutedCompletion();
                        SendBatch sb = new SendBatch(batch);
                        long[] nextExpected = {signalEvery - 1 < perThread - 1 ? signalEvery - 1 : perThread - 1};
                        long got = 0;
                        long lastProgress = System.nanoTime();
                        for (int i = 0; i < perThread; ) {
                            sb.clear();
                            int n = Math.min(batch, perThread - i);
                            for (int k = 0; k < n; k++) {
                                int seq = i + k;
                                int flags = ((seq + 1) % signalEvery == 0 || seq == perThread - 1) ? SendFlags.SIGNALED : 0;
                                Requests.write(sb, WrIds.send(owner, seq), flags, 0x1000L + owner * 64L, 8, 1, 0x9000, 2);
                            }
                            int rc;
                            while ((rc = p.post(sb)) == SendPath.EAGAIN) {
                                got += drain(router, owner, c, nextExpected, signalEvery, perThread);
                                if (System.nanoTime() - lastProgress > DEADLINE_NANOS) {
                                    throw new AssertionError("owner " + owner + " stuck at " + i + " for 20 s");
                                }
                                Thread.onSpinWait();
                            }
                            assertEquals(0, rc, "post");
                            i += n;
                            lastProgress = System.nanoTime();
                            if ((i & 63) == 0) {
                                got += drain(router, owner, c, nextExpected, signalEvery, perThread);
                            }
                        }
                        lastProgress = System.nanoTime();
                        long retired = p.retired(owner);
                        while (p.retired(owner) < perThread) {
                            got += drain(router, owner, c, nextExpected, signalEvery, perThread);
                            if (p.retired(owner) != retired) {
                                retired = p.retired(owner);
                                lastProgress = System.nanoTime();
                            } else if (System.nanoTime() - lastProgress > DEADLINE_NANOS) {
                                throw new AssertionError("deadline: owner " + owner + " retired " + p.retired(owner));
                            }
                            Thread.onSpinWait();
                        }
                        got += drain(router, owner, c, nextExpected, signalEvery, perThread);
                        delivered[owner] = got;
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            for (Thread t : ts) {
                t.join();
            }
            assertNull(failure.get(), () -> String.valueOf(failure.get()));
            long total = (long) threads * perThread;
            assertEquals(total, qp.postedCount.get(), "requests reaching the provider");
            // The provider saw each send-queue sequence exactly once, in order.
            for (int i = 0; i < total; i++) {
                if (qp.posted[i] != i) {
                    throw new AssertionError("provider wr_id at " + i + " is " + qp.posted[i]);
                }
            }
            long signaledPerThread = perThread / signalEvery + (perThread % signalEvery == 0 ? 0 : 1);
            for (int t = 0; t < threads; t++) {
                assertEquals(perThread, p.retired(t), "retired to owner " + t);
                assertEquals(signaledPerThread, delivered[t], "signaled completions to owner " + t);
            }
            assertFalse(qp.overlapSeen, "two threads inside ibv_post_send at once");
            assertEquals(0, p.rejected());
            assertEquals(depth, p.freeSlots(), "every credit back");
            assertEquals(0, router.unrouted());
            if (p instanceof CombiningPoster cp) {
                assertEquals(total, cp.combined());
                assertEquals(cp.doorbells(), qp.doorbells.get(), "one doorbell per drained list");
                assertTrue(cp.doorbells() <= total);
                System.out.printf("combining: %d requests, %d doorbells (%.2f per doorbell), %.1f ms%n", total,
                        cp.doorbells(), (double) total / cp.doorbells(), (System.nanoTime() - t0) / 1e6);
            }
        }
    }

    private static long drain(CompletionRouter router, int owner, RoutedCompletion c, long[] nextExpected,
                              int signalEvery, int perThread) {
        long n = 0;
        router.progress();
        while (router.poll(owner, c)) {
            if (c.wrId() != nextExpected[0]) {
                throw new AssertionError("owner " + owner + " expected completion " + nextExpected[0] + " got " + c);
            }
            if (!c.ok() || c.isRecv() || c.qpNum() != 7) {
                throw new AssertionError("bad completion " + c);
            }
            long next = nextExpected[0] + signalEvery;
            nextExpected[0] = next >= perThread && nextExpected[0] < perThread - 1 ? perThread - 1 : next;
            n++;
        }
        return n;
    }

    @Test
    @Timeout(600)
    void dedicatedQpsOnOneSharedCq() throws Exception {
        int threads = 4;
        int perThread = 200_000;
        int depth = 128;
        FakeQp.FakeCq cq = new FakeQp.FakeCq();
        FakeQp[] qps = new FakeQp[threads];
        SendPath[] paths = new SendPath[threads];
        try (CompletionRouter router = new CompletionRouter(cq, threads, depth, 32)) {
            for (int t = 0; t < threads; t++) {
                qps[t] = new FakeQp(100 + t, depth, cq, perThread);
                cq.qps.put(qps[t].qpNum, qps[t]);
                paths[t] = new ExclusivePoster(qps[t], 16, threads, 0, null);
                router.route(qps[t].qpNum, t, paths[t]);
            }
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread[] ts = new Thread[threads];
            long[] delivered = new long[threads];
            for (int t = 0; t < threads; t++) {
                int owner = t;
                ts[t] = Thread.ofPlatform().start(() -> {
                    try {
                        RoutedCompletion c = new RoutedCompletion();
                        long expect = 7;
                        long got = 0;
                        SendPath p = paths[owner];
                        long lastProgress = System.nanoTime();
                        for (int i = 0; i < perThread; i++) {
                            int flags = (i % 8 == 7) ? SendFlags.SIGNALED : 0;
                            while (p.post(Requests.write(WrIds.send(owner, i), flags, 0, 8, 1, 0, 2)) == SendPath.EAGAIN) {
                                router.progress();
                                while (router.poll(owner, c)) {
                                    assertEquals(expect, c.wrId());
                                    assertEquals(100 + owner, c.qpNum());
                                    expect += 8;
                                    got++;
                                    lastProgress = System.nanoTime();
                                }
                                if (System.nanoTime() - lastProgress > DEADLINE_NANOS) {
                                    throw new AssertionError("owner " + owner + " stalled at " + i + " for 20 s");
                                }
                            }
                            lastProgress = System.nanoTime();
                        }
                        while (p.retired(owner) < perThread) {
                            router.progress();
                            while (router.poll(owner, c)) {
                                assertEquals(expect, c.wrId());
                                expect += 8;
                                got++;
                                lastProgress = System.nanoTime();
                            }
                            if (System.nanoTime() - lastProgress > DEADLINE_NANOS) {
                                throw new AssertionError("owner " + owner + " stalled retiring for 20 s");
                            }
                        }
                        // The router delivers a completion before it retires the requests it covers: the last
                        // one may have arrived between the poll above and the retirement check.
                        while (router.poll(owner, c)) {
                            assertEquals(expect, c.wrId());
                            expect += 8;
                            got++;
                        }
                        delivered[owner] = got;
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            for (Thread t : ts) {
                t.join();
            }
            assertNull(failure.get(), () -> String.valueOf(failure.get()));
            for (int t = 0; t < threads; t++) {
                assertEquals(perThread / 8, delivered[t]);
                assertEquals(perThread, qps[t].postedCount.get());
                assertEquals(depth, paths[t].freeSlots());
                paths[t].close();
            }
            assertEquals(0, router.unrouted());
        }
    }
}
