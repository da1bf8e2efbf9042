package dev.scalep.bench.kernels;

import dev.scalep.endpoints.Endpoint;
import dev.scalep.policies.SharingConfig;
import dev.scalep.endpoints.Completion;

import dev.scalep.verbs.WcStatus;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/** Shared plumbing of the application kernels: sharing-level lists, blocking post/await over an {@link Endpoint}. */
public final class KernelSupport {
    /** Longest a kernel waits for one completion or one neighbour before failing. */
    static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private KernelSupport() {
    }

    /**
     * Parse {@code --categories} values: category names separated by commas, or axes forms
     * ({@code mpi-threads,qp=shared:combining}) separated by ';'. Returns label → configuration in
     * the given order. Throws {@link IllegalArgumentException} naming a bad level.
     */
    public static Map<String, SharingConfig> levels(List<String> args) {
        return dev.scalep.bench.Levels.parse(args);
    }

    /** Fail on a post error other than back-pressure. */
    static void check(int rc, String what) {
        if (rc != 0 && rc != Endpoint.BACK_PRESSURED) {
            throw new IllegalStateException(what + " failed: errno " + rc + " (" + dev.scalep.verbs.Errno.name(rc) + ")");
        }
    }

    /**
     * Wait for {@code n} successful completions of this endpoint (every request of a kernel is
     * signaled). Throws on an error completion or after {@link #TIMEOUT_NANOS}.
     */
    static void await(Endpoint ep, Completion c, int n) {
        long deadline = 0;
        int spins = 0;
        while (n > 0) {
            if (ep.poll(c)) {
                if (!c.ok()) {
                    throw new IllegalStateException("completion error: " + WcStatus.name(c.status()) + " (" + c.status() + ") for wr " + c.wrId()
                            + " on endpoint " + ep.index());
                }
                if (!c.isRecv()) {
                    n--;
                }
                continue;
            }
            if (++spins == 1024) {
                spins = 0;
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + TIMEOUT_NANOS;
                } else if (now > deadline) {
                    throw new IllegalStateException("endpoint " + ep.index() + ": " + n
                            + " completions did not arrive within " + TimeUnit.NANOSECONDS.toSeconds(TIMEOUT_NANOS) + " s");
                }
                Thread.yield();
            }
        }
    }

    /** Post through {@code op} until it is not refused for back-pressure; {@code op} returns the post's rc. */
    interface Post {
        int post();
    }

    static void post(Endpoint ep, Completion c, Post op, String what) {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        int rc;
        while ((rc = op.post()) == Endpoint.BACK_PRESSURED) {
            // A kernel keeps at most a few requests outstanding; a full queue means a sharer's backlog.
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(what + ": send queue stayed full for 60 s");
            }
            Thread.onSpinWait();
        }
        check(rc, what);
    }

    /**
     * Release the started {@code workers} through {@code start} (the caller is its last party), wait
     * for them and fail with the first recorded {@code failure}, naming {@code kernel} and
     * {@code label}. Each worker stamps {@code began} after the barrier and {@code done} when it
     * finishes; returns the span from first start to last finish in seconds.
     */
    static double runWorkers(String kernel, String label, int threads, CyclicBarrier start, List<Thread> workers,
                             AtomicReference<Throwable> failure, long[] began, long[] done) throws InterruptedException {
        try {
            start.await(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            for (Thread th : workers) {
                th.join(TimeUnit.SECONDS.toMillis(70));
            }
            Throwable f = failure.get();
            throw new IllegalStateException(kernel + " " + label + " failed to start: " + (f != null ? f : e), f != null ? f : e);
        }
        for (Thread th : workers) {
            th.join(TimeUnit.MINUTES.toMillis(10));
            if (th.isAlive()) {
                failure.compareAndSet(null, new IllegalStateException(th.getName() + " did not finish"));
            }
        }
        Throwable f = failure.get();
        if (f != null) {
            throw new IllegalStateException(kernel + " " + label + " x" + threads + " failed: " + f.getMessage(), f);
        }
        long end = 0;
        for (long d : done) {
            end = Math.max(end, d);
        }
        long t0 = Long.MAX_VALUE;
        for (long b : began) {
            t0 = Math.min(t0, b);
        }
        // Each thread stamps its own start: the span is first start to last finish.
        return Math.max(1e-9, (end - t0) / 1e9);
    }

    /**
     * One category's outcome over all ranks: {@code threads} per rank, {@code seconds} of the slowest
     * rank, {@code rate} in {@code rateUnit}; {@code notes} lists substitutions.
     */
    public record Result(String kernel, String level, int ranks, int threads, double seconds, double rate, String rateUnit,
                         double opsPerSec, boolean verified, String detail, String notes) {
    }

    /**
     * Every rank's outcome combined, as each rank sees it: slowest span, sum of mismatches, first
     * failure detail. {@code mismatches} and {@code detail} are this rank's.
     */
    record Combined(double seconds, long mismatches, long ops, String firstBad) {
    }

    static Combined combine(dev.scalep.spmd.World w, double seconds, long mismatches, long ops, String firstBad) {
        if (w.size() == 1) {
            return new Combined(seconds, mismatches, ops, firstBad);
        }
        byte[] bad = firstBad == null ? new byte[0] : firstBad.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(24 + bad.length);
        b.putDouble(seconds).putLong(mismatches).putLong(ops).put(bad);
        double slowest = 0;
        long wrong = 0;
        long total = 0;
        String first = null;
        for (byte[] e : w.allgather(b.array())) {
            ByteBuffer x = ByteBuffer.wrap(e);
            slowest = Math.max(slowest, x.getDouble());
            wrong += x.getLong();
            total += x.getLong();
            if (first == null && x.hasRemaining()) {
                byte[] s = new byte[x.remaining()];
                x.get(s);
                first = new String(s, StandardCharsets.UTF_8);
            }
        }
        return new Combined(slowest, wrong, total, first);
    }
}
