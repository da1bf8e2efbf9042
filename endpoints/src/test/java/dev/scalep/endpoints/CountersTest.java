package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.threading.PathCounters;
import dev.scalep.threading.SendPath;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.counters.Counters;
import dev.scalep.verbs.counters.CountersFile;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The runtime counters move by exactly what a bounded workload implies: N writes with postlist k
 * and one signaled every q are N WRs, N/k doorbells (all in the postlist bucket of k), N/q signaled
 * requests and N/q completions; on a shared QP every doorbell is one lock acquisition (locked) or
 * every request is posted in a combiner pass (combining). A reader of the process's counters file
 * (as {@code scalep stat} reads it) sees the same values.
 */
@Timeout(120)
class CountersTest {
    static final int N = 4096;
    static final int K = 8;
    static final int Q = 16;
    static final EndpointOptions OPTS = EndpointOptions.DEFAULTS.withDepths(256, 16).withBuffers(4096, 256)
            .withFeatures(K, Q, 0);

    /** {@code threads} threads each write N messages, poll every completion delivered to them, drain. */
    private static long[] run(EndpointManager a, int threads) throws Exception {
        long[] delivered = new long[threads];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CyclicBarrier go = new CyclicBarrier(threads);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int me = t;
            ts[t] = Thread.ofPlatform().name("writer-" + t).start(() -> {
                try (Endpoint e = a.acquire()) {
                    Completion c = new Completion();
                    go.await();
                    int off = me * 16;
                    for (int m = 0; m < N; m++) {
                        int rc;
                        while ((rc = e.write(m, off, 16, off)) == Endpoint.BACK_PRESSURED) {
                            delivered[me] += take(e, c);
                            Thread.yield();
                        }
                        assertEquals(Endpoint.OK, rc);
                    }
                    int rc;
                    while ((rc = e.flush()) == Endpoint.BACK_PRESSURED) {
                        // the queue the threads share is full (Endpoint.flush: poll, then flush again)
                        delivered[me] += take(e, c);
                        Thread.yield();
                    }
                    assertEquals(Endpoint.OK, rc);
                    while (e.outstanding() > 0) {
                        delivered[me] += take(e, c);
                        Thread.onSpinWait();
                    }
                    // At 0 every completion of this thread's is in its ring, even on a shared QP where
                    // another thread's later completion retired its requests while its own was held for
                    // it (Endpoint.outstanding): one more take gets them all, N / q.
                    delivered[me] += take(e, c);
                    assertEquals(N / a.signalEvery(), delivered[me], "writer " + me + "'s completions once none is outstanding");
                } catch (Throwable x) {
                    failure.compareAndSet(null, x);
                }
            });
        }
        for (Thread t : ts) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError("writer failed", failure.get());
        }
        return delivered;
    }

    /** Take every completion waiting on {@code e}, each successful; returns how many. */
    private static int take(Endpoint e, Completion c) {
        int n = 0;
        while (e.poll(c)) {
            assertTrue(c.ok(), c::toString);
            n++;
        }
        return n;
    }

    private static Map<String, Long> fromFile(EndpointManager a) throws Exception {
        Path p = Counters.path();
        assertNotNull(p, "the process has a counters file");
        CountersFile.Snapshot s = CountersFile.read(p);
        assertNotNull(s);
        assertTrue(s.alive());
        Map<String, Long> out = new HashMap<>();
        for (CountersFile.Counter c : s.counters()) {
            out.put(c.label(), c.value());
        }
        return out;
    }

    /** The file's sum of one counter over every QP, open and closed (what {@code scalep stat} totals). */
    private static long qpTotal(String name) throws Exception {
        long sum = 0;
        for (CountersFile.Counter c : CountersFile.read(Counters.path()).counters()) {
            if (c.typeId() == Counters.TYPE_QP && c.name().equals(name)) {
                sum += c.value();
            }
        }
        return sum;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    void aPerThreadQpCountsEachPostAndCompletion(String dev) throws Exception {
        Device d = Devices.byName(dev);
        long totalBefore;
        try (EndpointManager a = EndpointManager.open(d, SharingConfig.parse("static"), 1, OPTS);
             EndpointManager b = EndpointManager.open(d, SharingConfig.parse("static"), 1, OPTS)) {
            a.connect(b);
            long[] delivered = run(a, 1);
            long q = a.signalEvery(); // an unordered device signals every request
            Map<String, Long> t = a.counterTotals();
            assertEquals(N, t.get("ep.wrs"));
            assertEquals(N / q, t.get("ep.signaled"));
            assertEquals(N / q, t.get("ep.completions"));
            assertEquals(N / q, delivered[0]);
            assertEquals(0L, t.get("ep.failed-posts"));
            assertEquals(N, t.get("qp.wrs"));
            assertEquals(N / K, t.get("qp.doorbells"));
            assertEquals(N / K, t.get("qp.postlist-8-15"));
            assertEquals(0L, t.get("qp.postlist-1") + t.get("qp.postlist-2-3") + t.get("qp.postlist-4-7")
                    + t.get("qp.postlist-16-31") + t.get("qp.postlist-32-63") + t.get("qp.postlist-64+"));
            assertEquals(0L, t.get("qp.failed-wrs"));
            assertEquals(0L, t.get("qp.lock-acquired"));
            assertEquals(N / q, t.get("cq.completions"));
            assertEquals(0L, t.get("cq.routed-away"));
            assertEquals(0L, t.get("cq.unrouted"));
            long bf = t.get("qp.blueflame-writes");
            assertEquals(a.qps.get(0).counters().blueFlameWrites(), bf);

            Counters.publish(); // the QP's and CQ's counters reach the file through the publisher
            Map<String, Long> file = fromFile(a);
            String ep = "m" + a.serial() + ".ep0 ";
            assertEquals(N, file.get(ep + "wrs"));
            assertEquals(N / q, file.get(ep + "completions"));
            String qp = a.paths.get(0).counters().group().object() + " ";
            assertEquals(N / K, file.get(qp + "doorbells"));
            assertEquals(N, file.get(qp + "wrs"));
            totalBefore = qpTotal("wrs");
        }
        // closed objects' counts move into the file's closed.qp total: the process's total does not go back
        assertTrue(qpTotal("wrs") >= totalBefore, "the total of WRs went back when the managers closed");
        assertTrue(CountersFile.read(Counters.path()).counters().stream()
                .anyMatch(c -> c.label().equals("closed.qp wrs") && c.value() >= N));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    void aLockedSharedQpCountsOneAcquisitionPerDoorbell(String dev) throws Exception {
        Device d = Devices.byName(dev);
        try (EndpointManager a = EndpointManager.open(d, SharingConfig.parse("mpi-threads"), 2, OPTS);
             EndpointManager b = EndpointManager.open(d, SharingConfig.parse("mpi-threads"), 2, OPTS)) {
            a.connect(b);
            assertTrue(a.paths.getFirst().getClass().getSimpleName().equals("LockedPoster"), a.paths.toString());
            long[] delivered = run(a, 2);
            long q = a.signalEvery();
            Map<String, Long> t = a.counterTotals();
            assertEquals(2L * N, t.get("ep.wrs"));
            assertEquals(2L * N, t.get("qp.wrs"));
            assertEquals(2L * N / K, t.get("qp.doorbells"));
            assertEquals(2L * N / K, t.get("qp.postlist-8-15"));
            assertEquals(2L * N / K, t.get("qp.lock-acquired"));
            assertTrue(t.get("qp.lock-contended") <= t.get("qp.lock-acquired"));
            assertTrue(t.get("qp.handoffs") >= 1 && t.get("qp.handoffs") < t.get("qp.lock-acquired"), t.toString());
            assertEquals(0L, t.get("qp.combiner-passes"));
            assertEquals(2L * N / q, t.get("ep.signaled"));
            assertEquals(2L * N / q, t.get("cq.completions"));
            assertEquals(2L * N / q, delivered[0] + delivered[1]);
            assertEquals(2L * N / q, t.get("ep.completions"));
            assertTrue(t.get("cq.routed-away") <= t.get("cq.completions"));
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    void aCombiningSharedQpPostsEveryRequestInACombinerPass(String dev) throws Exception {
        Device d = Devices.byName(dev);
        SharingConfig cfg = SharingConfig.parse("mpi-threads,qp=shared:combining");
        try (EndpointManager a = EndpointManager.open(d, cfg, 2, OPTS);
             EndpointManager b = EndpointManager.open(d, cfg, 2, OPTS)) {
            a.connect(b);
            assertTrue(a.paths.getFirst().getClass().getSimpleName().equals("CombiningPoster"), a.paths.toString());
            run(a, 2);
            Map<String, Long> t = a.counterTotals();
            SendPath path = a.paths.getFirst();
            assertEquals(2L * N, t.get("qp.wrs"));
            assertEquals(2L * N, t.get("qp.combined-wrs"));
            long passes = t.get("qp.combiner-passes");
            assertTrue(passes >= 1 && passes <= t.get("qp.doorbells"), t.toString());
            assertTrue(t.get("qp.lock-acquired") >= passes);
            // every post call either took the role or handed its requests over
            assertTrue(t.get("qp.lock-acquired") + t.get("qp.lock-contended") >= 2L * N / K, t.toString());
            assertEquals(path.counters().group().value(PathCounters.DOORBELLS), t.get("qp.doorbells"));
            long buckets = 0;
            for (int i = 0; i < PathCounters.BUCKETS; i++) {
                buckets += path.counters().group().value(PathCounters.POSTLIST_FIRST + i);
            }
            assertEquals(t.get("qp.doorbells"), buckets, "every doorbell is in one postlist bucket");
        }
    }
}
