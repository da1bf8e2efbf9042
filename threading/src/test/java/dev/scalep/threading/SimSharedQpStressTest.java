package dev.scalep.threading;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shared send paths and the completion router on the simulated mlx5 (real QP and uUAR locks,
 * WQEs executed in the posting thread, CQEs written by the simulated NIC), not on the fake QP:
 * many threads, millions of requests, each failing when it stalls (no progress for 20 s), however slow the machine. Checked: every request executed
 * by the device exactly once (its WQE counter), every signaled completion delivered to its owner
 * exactly once and in that owner's post order, every unsignaled request retired to its owner by a
 * later signaled completion, and every credit back at the end.
 */
class SimSharedQpStressTest {
    /**
     * {@code -Dscalep.th.devices=rxe0/rxe1 -Dscalep.th.scale=500 -Dscalep.th.deadline-s=120} runs the
     * same checks on real verbs (sender QPs on the first device, their peers on the second) with
     * 1/500 of the requests (rounded to whole signal intervals), as the rxe VM of {@code verbs/src/test/rxe/run} does.
     */
    static final String[] DEVICES = System.getProperty("scalep.th.devices", "sim:mlx5").split("/");
    static final int SCALE = Integer.getInteger("scalep.th.scale", 1);
    static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(Integer.getInteger("scalep.th.deadline-s", 20));
    static final int DEPTH = 256;

    /** Two contexts on sim:mlx5, a receiver QP and the sender's QPs on one shared CQ. */
    static final class Rig implements AutoCloseable {
        final Context ctxA;
        final Context ctxB;
        final ProtectionDomain pdA;
        final CompletionQueue cq;
        final Arena arena = Arena.ofShared();
        final MemorySegment memA;
        final MemorySegment memB;
        final MemoryRegion mrA;
        final MemoryRegion mrB;
        final ProtectionDomain pdB;
        final CompletionQueue cqB;
        final List<QueuePair> qps = new ArrayList<>();

        Rig(int cqDepth) {
            ctxA = Devices.byName(DEVICES[0]).open(ContextOptions.DEFAULTS);
            ctxB = Devices.byName(DEVICES[DEVICES.length - 1]).open(ContextOptions.DEFAULTS);
            pdA = ctxA.allocPd();
            pdB = ctxB.allocPd();
            cq = ctxA.createCq(CqOptions.of(cqDepth));
            cqB = ctxB.createCq(CqOptions.of(cqDepth));
            memA = pdA.allocate(1 << 16, 64);
            memB = pdB.allocate(1 << 16, 64);
            mrA = pdA.register(memA, Access.ALL_RDMA);
            mrB = pdB.register(memB, Access.ALL_RDMA);
        }

        /** A connected RC QP on the shared CQ (its peer on context B). */
        QueuePair qp() {
            QueuePair a = pdA.createQp(QpInitAttr.of(QpType.RC, cq, DEPTH));
            QueuePair b = pdB.createQp(QpInitAttr.of(QpType.RC, cqB, DEPTH));
            a.connect(b.address(), Access.ALL_RDMA, 7);
            b.connect(a.address(), Access.ALL_RDMA, 7);
            qps.add(a);
            qps.add(b);
            return a;
        }

        @Override
        public void close() {
            for (QueuePair q : qps) {
                q.close();
            }
            ctxA.close();
            ctxB.close();
            arena.close();
        }
    }

    /**
     * One thread's work: {@code n} 8-byte RDMA writes in batches of {@code batch}, every
     * {@code signalEvery}-th signaled (n is a multiple of it, so the last one is), polling on
     * back-pressure (n must be a multiple of signalEvery); every delivered completion must be the next signaled id of this owner.
     * Returns the number of signaled completions delivered.
     */
    static long run(SendPath p, CompletionRouter router, int owner, Rig rig, long n, int batch, int signalEvery,
                    long stallNanos) {
        SendBatch b = new SendBatch(batch);
        long lastProgress = System.nanoTime();
        long seen = 0;
        RoutedCompletion c = new RoutedCompletion();
        long nextExpected = signalEvery - 1;
        long delivered = 0;
        long k = 0;
        long local = rig.mrA.address() + owner * 64L;
        long remote = rig.mrB.address() + owner * 64L;
        while (k < n || delivered < n / signalEvery) {
            if (k + delivered != seen) {
                seen = k + delivered;
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > stallNanos) {
                throw new AssertionError("owner " + owner + " made no progress for " + TimeUnit.NANOSECONDS.toSeconds(stallNanos)
                        + " s: posted " + k + "/" + n
                        + ", delivered " + delivered + ", retired " + p.retired(owner) + ", free " + p.freeSlots());
            }
            if (k < n) {
                b.clear();
                for (long j = k; j < n && !b.isFull(); j++) {
                    int f = (j % signalEvery == signalEvery - 1) ? SendFlags.SIGNALED : 0;
                    Requests.write(b, WrIds.send(owner, j), f, local, 8, rig.mrA.lkey(), remote, rig.mrB.rkey());
                }
                int rc = p.post(b);
                if (rc == 0) {
                    k += b.count();
                } else if (rc != SendPath.EAGAIN) {
                    throw new AssertionError("owner " + owner + ": post failed, errno " + rc);
                }
            }
            router.progress();
            while (router.poll(owner, c)) {
                if (!c.ok() || c.isRecv() || c.wrId() != nextExpected) {
                    throw new AssertionError("owner " + owner + " expected completion " + nextExpected + ", got " + c);
                }
                nextExpected += signalEvery;
                delivered++;
            }
        }
        return delivered;
    }

    static void runAll(List<Runnable> work) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CyclicBarrier start = new CyclicBarrier(work.size());
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < work.size(); i++) {
            Runnable r = work.get(i);
            ts.add(Thread.ofPlatform().name("sim-poster-" + i).start(() -> {
                try {
                    start.await();
                    r.run();
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        // Each worker fails itself once it makes no progress for the deadline; the join only catches a worker
        // stuck outside its loop. 30 s was too short for slow but moving work in the rxe VM's TCG guest
        // (sim-poster-0 still running at 30 s, deadline 120 s, in a CI run).
        long joinMillis = Math.max(30_000L, 3 * TimeUnit.NANOSECONDS.toMillis(DEADLINE_NANOS));
        for (Thread t : ts) {
            t.join(joinMillis);
            assertTrue(!t.isAlive(), t.getName() + " still running after " + joinMillis / 1000 + " s");
        }
        assertNull(failure.get(), () -> String.valueOf(failure.get()));
    }

    @ParameterizedTest(name = "{0} threads={1} perThread={2} batch={3} signalEvery={4}")
    @CsvSource({
            "COMBINING, 8, 250000, 8, 16",
            "COMBINING, 4, 256000, 1, 32",
            "COMBINING, 8, 50000, 4, 1",
            "LOCKED, 4, 250000, 8, 16",
    })
    @Timeout(600)
    void sharedQpOnSim(SharedQpStressTest.Kind kind, int threads, long requests, int batch, int signalEvery)
            throws Exception {
        long unit = (long) signalEvery * batch / BigInteger.valueOf(signalEvery).gcd(
                BigInteger.valueOf(batch)).longValue();
        long perThread = requests / SCALE / unit * unit; // whole batches and signal intervals
        try (Rig rig = new Rig(4 * DEPTH)) {
            QueuePair qp = rig.qp();
            try (SendPath p = kind == SharedQpStressTest.Kind.COMBINING
                    ? new CombiningPoster(qp, 64, threads, 0, null) : new LockedPoster(qp, 64, threads, 0, null);
                 CompletionRouter router = new CompletionRouter(rig.cq, threads, 2 * DEPTH, 64)) {
                router.route(qp.qpNum(), -1, p);
                long[] delivered = new long[threads];
                List<Runnable> work = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int owner = t;
                    work.add(() -> delivered[owner] = run(p, router, owner, rig, perThread, batch, signalEvery, DEADLINE_NANOS));
                }
                runAll(work);
                long total = threads * perThread;
                for (int t = 0; t < threads; t++) {
                    assertEquals(perThread / signalEvery, delivered[t], "signaled completions of owner " + t);
                    assertEquals(perThread, p.retired(t), "requests retired to owner " + t);
                }
                assertEquals(total, qp.counters().wqes(), "WQEs the device executed");
                assertEquals(DEPTH, p.freeSlots(), "credits back");
                assertEquals(0, p.rejected());
                assertEquals(0, router.unrouted());
                assertEquals(0, router.progress(), "nothing left on the CQ");
                if (p instanceof CombiningPoster cp) {
                    assertEquals(total, cp.combined(), "requests through the combiner's doorbells");
                    assertEquals(0, cp.queued());
                    assertEquals(qp.counters().doorbells(), cp.doorbells(), "one provider doorbell per postlist");
                }
            }
        }
    }

    /**
     * One CQ shared by QPs of different kinds: half the threads own a QP each (exclusive path, fixed
     * owner route), the other half share one combining QP (owner taken from the id). Each thread
     * signals only every {@code signalEvery}-th request, so most are retired by a later completion.
     */
    @Test
    @Timeout(600)
    void sharedCqRoutedToOwners() throws Exception {
        int threads = 8;
        long perThread = 200_000 / SCALE / 32 * 32;
        int signalEvery = 32;
        try (Rig rig = new Rig(8 * DEPTH)) {
            List<SendPath> paths = new ArrayList<>();
            try (CompletionRouter router = new CompletionRouter(rig.cq, threads, 2 * DEPTH, 32)) {
                SendPath[] pathOf = new SendPath[threads];
                QueuePair shared = rig.qp();
                CombiningPoster comb = new CombiningPoster(shared, 64, threads, 0, null);
                paths.add(comb);
                router.route(shared.qpNum(), -1, comb);
                for (int t = 0; t < threads; t++) {
                    if (t < threads / 2) {
                        QueuePair own = rig.qp();
                        pathOf[t] = new ExclusivePoster(own, 16, threads, 0, null);
                        paths.add(pathOf[t]);
                        router.route(own.qpNum(), t, pathOf[t]);
                    } else {
                        pathOf[t] = comb;
                    }
                }
                long[] delivered = new long[threads];
                List<Runnable> work = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int owner = t;
                    work.add(() -> delivered[owner] = run(pathOf[owner], router, owner, rig, perThread, 8, signalEvery, DEADLINE_NANOS));
                }
                runAll(work);
                long signaled = 0;
                for (int t = 0; t < threads; t++) {
                    assertEquals(perThread / signalEvery, delivered[t], "completions delivered to owner " + t);
                    assertEquals(perThread, pathOf[t].retired(t), "requests retired to owner " + t);
                    signaled += delivered[t];
                }
                assertEquals(signaled, router.routed(), "every completion routed once");
                assertEquals(0, router.unrouted());
                for (SendPath p : paths) {
                    assertEquals(DEPTH, p.freeSlots(), "credits back on QP " + p.qp().qpNum());
                }
                for (int t = 0; t < threads; t++) {
                    assertTrue(router.ring(t).isEmpty());
                }
            } finally {
                for (SendPath p : paths) {
                    p.close();
                }
            }
        }
    }
}
