package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.threading.SendPath;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.management.ManagementFactory;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import com.sun.management.ThreadMXBean;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The write+poll data path allocates nothing once warm, also when two threads share one QP through
 * the combining hand-off (Agrona ring of binary records) or the lock, and their completions travel
 * through the router's pooled JCTools rings: each thread's own allocation over 50,000 operations
 * stays under 4 KiB in at least one of three consecutive windows (the JMH {@code -prof gc} figure measures the same thing with less control).
 */
class SharedPathAllocationTest {
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', value = {
            "sim:mlx5|mpi-threads,qp=shared:combining", "sim:mlx5|mpi-threads", "sim:mlx5|static",
            "sim:efa|mpi-threads,qp=shared:combining", "sim:efa|mpi-threads", "sim:efa|static"})
    @Timeout(120)
    void twoThreadsPostAndPollWithoutAllocating(String devName, String level) throws Exception {
        Device d = Devices.byName(devName);
        EndpointOptions o = EndpointOptions.DEFAULTS.withDepths(128, 8).withBuffers(1024, 64).withFeatures(8, 8, 16);
        int threads = 2;
        int ops = 50_000;
        try (EndpointManager a = EndpointManager.open(d, SharingConfig.parse(level), threads, o);
             EndpointManager b = EndpointManager.open(d, SharingConfig.parse(level), threads, o)) {
            a.connect(b);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicLongArray allocated = new AtomicLongArray(threads);
            CyclicBarrier start = new CyclicBarrier(threads);
            Thread[] ts = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                int me = t;
                ts[t] = Thread.ofPlatform().start(() -> {
                    try {
                        Endpoint e = a.acquire();
                        Completion c = new Completion();
                        var mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
                        long tid = Thread.currentThread().threadId();
                        start.await(30, TimeUnit.SECONDS);
                        for (int m = 0; m < 100_000; m++) { // warm-up: the JIT compiles the path (C2) before the count
                            post(e, c, m);
                        }
                        // The least of three windows: an allocation per operation shows in every window, a
                        // one-off (a rare branch deoptimized and recompiled late) in one only.
                        long least = Long.MAX_VALUE;
                        for (int w = 0; w < 3 && least >= 4096; w++) {
                            long before = mx.getThreadAllocatedBytes(tid);
                            for (int m = 0; m < ops; m++) {
                                post(e, c, m);
                            }
                            least = Math.min(least, mx.getThreadAllocatedBytes(tid) - before);
                        }
                        allocated.set(me, least);
                        assertTrue(e.drain(30_000_000_000L), "drain");
                        a.release(e);
                    } catch (Throwable x) {
                        failure.compareAndSet(null, x);
                        start.reset();
                    }
                });
            }
            for (Thread t : ts) {
                t.join();
            }
            assertNull(failure.get(), () -> String.valueOf(failure.get()));
            for (int t = 0; t < threads; t++) {
                System.out.printf("%s %s thread %d: %d bytes over %d writes+polls (%.4f B/op)%n", devName, level, t,
                        allocated.get(t), ops, (double) allocated.get(t) / ops);
                assertTrue(allocated.get(t) < 4096, "thread " + t + " allocated " + allocated.get(t) + " bytes over " + ops + " ops");
            }
        }
    }

    private static void post(Endpoint e, Completion c, int m) {
        int rc;
        while ((rc = e.write(m, 0, 8, 0)) == SendPath.EAGAIN) {
            drainCompletions(e, c);
        }
        if (rc != 0) {
            throw new AssertionError("write rc " + rc);
        }
        drainCompletions(e, c);
    }

    private static void drainCompletions(Endpoint e, Completion c) {
        while (e.poll(c)) {
            if (!c.ok()) {
                throw new AssertionError("error completion " + c);
            }
        }
    }
}
