package dev.scalep.bench.jmh;

import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.Completion;
import dev.scalep.verbs.WcStatus;
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
import org.openjdk.jmh.infra.BenchmarkParams;

import java.util.concurrent.TimeUnit;

/**
 * The endpoint data path per sharing category: one operation is one 2-byte RDMA write through a
 * thread-bound {@link Endpoint} (p = 32 unless {@code -p postlist=1}, q = 64, inline, d = 256), polling
 * every 64 writes and whenever the queue is full. Each JMH thread acquires its own endpoint; run with {@code -t N}
 * for N threads. With {@code -prof gc}, {@code gc.alloc.rate.norm} is the data path's bytes per write.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class EndpointPostPollBenchmark {
    @Param({"mpi-everywhere", "2x-dynamic", "dynamic", "shared-dynamic", "static", "mpi-threads",
            "mpi-threads,qp=shared:combining"})
    public String category;

    @Param({"sim:mlx5"})
    public String device;

    /** p: requests per doorbell (1: every write rings it; 32: the sweep's default). */
    @Param({"32"})
    public int postlist;

    EndpointPair pair;

    @Setup(Level.Trial)
    public void open(BenchmarkParams params) {
        pair = EndpointPair.open(device, category, params.getThreads(), postlist);
    }

    @TearDown(Level.Trial)
    public void close() throws InterruptedException {
        pair.close();
    }

    /** One JMH thread's endpoint, acquired by that thread. */
    @State(Scope.Thread)
    public static class Sender extends EndpointPair.Slot {
        @Setup(Level.Trial)
        public void acquire(EndpointPostPollBenchmark b) {
            take(b.pair);
        }

        @TearDown(Level.Trial)
        public void release(EndpointPostPollBenchmark b) {
            giveBack(b.pair);
        }
    }

    @Benchmark
    public int write(Sender s) {
        return Ops.write(s.ep, s.c, s.id++, s.offset);
    }

    /** The measured loop body, shared by the endpoint benchmarks and {@code scalep drift}. */
    public static final class Ops {
        private Ops() {
        }

        public static int write(Endpoint ep, Completion c, long id, int offset) {
            int rc;
            while ((rc = ep.write(id, offset, 2, offset)) == Endpoint.BACK_PRESSURED) {
                reap(ep, c);
            }
            if (rc != 0) {
                throw new IllegalStateException("write failed: errno " + rc);
            }
            if ((id & 63) == 63) {
                reap(ep, c);
            }
            return rc;
        }

        public static void reap(Endpoint ep, Completion c) {
            while (ep.poll(c)) {
                if (!c.ok()) {
                    throw new IllegalStateException("completion error: " + WcStatus.name(c.status()) + " (" + c.status() + ")");
                }
            }
        }
    }
}
