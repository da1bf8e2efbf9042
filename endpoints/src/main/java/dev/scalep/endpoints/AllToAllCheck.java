package dev.scalep.endpoints;

import dev.scalep.spmd.World;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.WcStatus;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The N ranks × T threads check: every thread of every rank RDMA-writes a stamp naming
 * (source rank, thread, destination rank, round) into every other rank, and RDMA-reads the stamp
 * every other rank prepared for it; after a barrier each thread verifies what landed in its
 * buffers. All ranks call {@link #run} with the same arguments; each returns what it verified.
 */
public final class AllToAllCheck {
    private AllToAllCheck() {
    }

    /** What one rank verified: writes received and reads made, over all its threads and rounds. */
    public record Result(int ranks, int threads, int rounds, long writesVerified, long readsVerified) {
    }

    static long stamp(int src, int thread, int dst, int round) {
        return (0x5CL << 56) | ((long) (src & 0xFFFF) << 40) | ((long) (thread & 0xFF) << 32) | ((long) (dst & 0xFFFF) << 16)
                | (round & 0xFFFF);
    }

    /**
     * Run {@code rounds} rounds on {@code eps} (buffers of at least {@code 8 × ranks} bytes) with
     * one thread per endpoint; throws {@link IllegalStateException} naming the first wrong stamp, a
     * failed post or completion, or a peer that did not complete within {@code timeoutMillis}.
     */
    public static Result run(WorldEndpoints eps, int rounds, long timeoutMillis) throws InterruptedException {
        World w = eps.world();
        int p = w.size();
        int me = w.rank();
        int threads = eps.threads();
        if (p < 2) {
            throw new IllegalArgumentException("the all-to-all check needs at least 2 ranks; this world has " + p);
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CyclicBarrier phase = new CyclicBarrier(threads, w::barrier);
        long[] verified = new long[2];
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            ts.add(Thread.ofPlatform().name("alltoall-" + me + "-" + i).start(() -> {
                try {
                    long[] v = worker(eps, phase, rounds, timeoutMillis);
                    synchronized (verified) {
                        verified[0] += v[0];
                        verified[1] += v[1];
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                    phase.reset();
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        Throwable f = failure.get();
        if (f != null) {
            int lost = w.lostRank();
            throw new IllegalStateException("rank " + me + ": " + f.getMessage() + (lost >= 0 ? " (rank " + lost + " was lost)" : ""), f);
        }
        return new Result(p, threads, rounds, verified[0], verified[1]);
    }

    /** Each peer's endpoint as a failed drain left it: outstanding requests, first error completion, refused posts. */
    private static String state(RankEndpoint re, int me, int p) {
        StringBuilder b = new StringBuilder();
        for (int q = 0; q < p; q++) {
            if (q == me) {
                continue;
            }
            Endpoint e = re.to(q);
            b.append(b.isEmpty() ? "" : "; ").append("to rank ").append(q).append(": ").append(e.outstanding())
                    .append(" outstanding, first error ").append(WcStatus.name(e.firstErrorStatus())).append(", ")
                    .append(e.rejected()).append(" refused");
            if (e.rejected() > 0) {
                b.append(" (").append(Errno.name(e.firstPostError())).append(')');
            }
        }
        return b.toString();
    }

    private static long[] worker(WorldEndpoints eps, CyclicBarrier phase, int rounds, long timeoutMillis) throws Exception {
        World w = eps.world();
        int p = w.size();
        int me = w.rank();
        RankEndpoint re = eps.acquire();
        int t = re.index();
        long writes = 0;
        long reads = 0;
        boolean done = false;
        try {
            long need = 8L * p;
            if (re.to(me == 0 ? 1 : 0).sendBuffer().byteSize() < need) {
                throw new IllegalArgumentException("buffers of " + re.to(me == 0 ? 1 : 0).sendBuffer().byteSize()
                        + " bytes; the check needs 8 × ranks = " + need);
            }
            for (int k = 0; k < rounds; k++) {
                for (int q = 0; q < p; q++) {
                    if (q != me) {
                        re.to(q).sendBuffer().set(JAVA_LONG, 8L * q, stamp(me, t, q, k));
                    }
                }
                await(phase, timeoutMillis, "preparing round " + k); // every rank's stamps are ready
                for (int q = 0; q < p; q++) {
                    if (q == me) {
                        continue;
                    }
                    post(re, q, true, me, timeoutMillis);
                    post(re, q, false, me, timeoutMillis);
                }
                long began = System.nanoTime();
                if (!re.drain(TimeUnit.MILLISECONDS.toNanos(timeoutMillis))) {
                    throw new IllegalStateException("thread " + t + ": writes and reads of round " + k + " did not complete ("
                            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began) + " of " + timeoutMillis + " ms): "
                            + state(re, me, p));
                }
                await(phase, timeoutMillis, "round " + k); // every rank's writes have landed
                for (int q = 0; q < p; q++) {
                    if (q == me) {
                        continue;
                    }
                    Endpoint e = re.to(q);
                    long want = stamp(q, t, me, k);
                    check("write from rank " + q, e.targetBuffer(), 8L * q, want, t, k);
                    check("read from rank " + q, e.readBuffer(), 8L * q, want, t, k);
                    writes++;
                    reads++;
                }
                await(phase, timeoutMillis, "verifying round " + k); // nobody overwrites before all have read
            }
            done = true;
        } finally {
            if (done) {
                re.close();
            } else {
                closeAfterFailure(re);
            }
        }
        return new long[]{writes, reads};
    }

    /**
     * Release the endpoint of a thread that failed: with requests still outstanding the release is
     * refused, and that refusal must not replace the failure that left them outstanding.
     */
    private static void closeAfterFailure(RankEndpoint re) {
        try {
            re.close();
        } catch (IllegalStateException ignored) {
            // the endpoint stays acquired; WorldEndpoints.close() tears its manager down
        }
    }

    /** A write of my stamp for rank q into q's target buffer at 8·me, or a read of q's stamp for me from its send buffer. */
    private static void post(RankEndpoint re, int q, boolean write, int me, long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        Completion c = new Completion();
        for (;;) {
            Endpoint e = re.to(q);
            int rc = write ? e.write(q, 8 * q, 8, 8 * me) : e.read(q, 8 * q, 8, 8 * me);
            if (rc == Endpoint.OK) {
                return;
            }
            if (rc != Endpoint.BACK_PRESSURED) {
                throw new IllegalStateException((write ? "write" : "read") + " to rank " + q + " failed: errno " + rc);
            }
            while (re.poll(c)) {
                if (c.status() != 0) {
                    throw new IllegalStateException("completion with status " + c.status() + " from rank " + q);
                }
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("rank " + q + " did not take a request within " + timeoutMillis + " ms");
            }
        }
    }

    private static void check(String what, MemorySegment buf, long off, long want, int t, int k) {
        long got = buf.get(JAVA_LONG, off);
        if (got != want) {
            throw new IllegalStateException(what + " at thread " + t + ", round " + k + ": found 0x" + Long.toHexString(got)
                    + ", expected 0x" + Long.toHexString(want));
        }
    }

    private static void await(CyclicBarrier b, long timeoutMillis, String what) throws Exception {
        try {
            b.await(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (BrokenBarrierException | TimeoutException e) {
            throw new IllegalStateException("another thread failed or stalled while " + what, e);
        }
    }
}
