package dev.scalep.bench.jmh;

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
 * is one 2-byte RDMA write (p = 32 unless {@code -p postlist=1}, q = 64, inline), as in {@link EndpointPostPollBenchmark}.
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

    /** p: requests per doorbell (1: every write rings it; 32: the sweep's default). */
    @Param({"32"})
    public int postlist;

    EndpointPair pair;

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
        pair = EndpointPair.open(device, level(mode), params.getThreads(), postlist);
    }

    @TearDown(Level.Trial)
    public void close() throws InterruptedException {
        pair.close();
    }

    /** One JMH thread's endpoint, acquired by that thread. */
    @State(Scope.Thread)
    public static class Sender extends EndpointPair.Slot {
        @Setup(Level.Trial)
        public void acquire(SharedQpBenchmark b) {
            take(b.pair);
        }

        @TearDown(Level.Trial)
        public void release(SharedQpBenchmark b) {
            giveBack(b.pair);
        }
    }

    @Benchmark
    public int write(Sender s) {
        return EndpointPostPollBenchmark.Ops.write(s.ep, s.c, s.id++, s.offset);
    }
}
