package dev.scalep.bench.jmh;

import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointManager;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.policies.SharingConfig;
import dev.scalep.threading.Completion;
import dev.scalep.verbs.Devices;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.BenchmarkParams;

import java.util.concurrent.TimeUnit;

/**
 * Shared QP modes side by side with two threads: {@code dedicated} (a QP and CQ per thread, the
 * static category), {@code locked} (one QP behind a lock, the research's MPI+threads) and
 * {@code combining} (one QP, posts combined by whichever thread holds the doorbell). One operation
 * is one 2-byte RDMA write (p = 32, q = 64, inline), as in {@link EndpointPostPollBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(2)
public class SharedQpBenchmark {
    @Param({"dedicated", "locked", "combining"})
    public String mode;

    @Param({"sim:mlx5"})
    public String device;

    EndpointManager sender;
    EndpointManager receiver;
    /** Endpoints still held by JMH threads: JMH may run this state's teardown before another thread's {@link Sender} teardown. */
    final java.util.concurrent.atomic.AtomicInteger held = new java.util.concurrent.atomic.AtomicInteger();

    static String level(String mode) {
        return switch (mode) {
            case "dedicated" -> "static";
            case "locked" -> "mpi-threads,qp=shared:locked";
            case "combining" -> "mpi-threads,qp=shared:combining";
            default -> throw new IllegalArgumentException("mode: dedicated, locked or combining: " + mode);
        };
    }

    @Setup(Level.Trial)
    public void open(BenchmarkParams params) {
        EndpointOptions o = EndpointOptions.DEFAULTS.withFeatures(32, 64, 2);
        SharingConfig cfg = SharingConfig.parse(level(mode));
        sender = EndpointManager.open(Devices.byName(device), cfg, params.getThreads(), o);
        receiver = EndpointManager.open(Devices.byName(device), cfg, params.getThreads(), o);
        sender.connect(receiver);
    }

    @TearDown(Level.Trial)
    public void close() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (held.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        sender.close();
        receiver.close();
    }

    @State(Scope.Thread)
    public static class Sender {
        Endpoint ep;
        final Completion c = new Completion();
        long id;
        int offset;

        @Setup(Level.Trial)
        public void acquire(SharedQpBenchmark b) {
            ep = b.sender.acquire();
            b.held.incrementAndGet();
            offset = (ep.index() & 7) * 2;
        }

        @TearDown(Level.Trial)
        public void release(SharedQpBenchmark b) {
            if (!ep.drain(TimeUnit.SECONDS.toNanos(30))) {
                throw new IllegalStateException("endpoint " + ep.index() + " did not drain: " + ep.outstanding() + " outstanding");
            }
            try {
                b.sender.release(ep);
            } finally {
                b.held.decrementAndGet();
            }
        }
    }

    @Benchmark
    public int write(Sender s) {
        return EndpointPostPollBenchmark.Ops.write(s.ep, s.c, s.id++, s.offset);
    }
}
