package dev.scalep.bench.jmh;

import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.endpoints.RankEndpoint;
import dev.scalep.endpoints.Window;
import dev.scalep.endpoints.WorldEndpoints;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.LocalWorld;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Devices;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.concurrent.TimeUnit;

/**
 * The window data path per operation: one invocation issues {@value #BATCH} 8-byte operations of
 * one kind ({@code put}, {@code get}, {@code fetchAdd}, {@code compareAndSwap}, {@code add}) from
 * one thread to its rank's own window through the device (a world of one rank: the loopback QP,
 * the path every remote operation takes too), then flushes. With {@code -prof gc},
 * {@code gc.alloc.rate.norm} is the data path's bytes per operation (a flush included, 1/32 of it
 * each). On {@code sim:efa}, which has no RDMA atomics, the atomics run through the emulation
 * (request, the rank serving it in its own flush, reply). Single-threaded ({@code -t 1}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class WindowOpsBenchmark {
    static final int BATCH = 32;

    @Param({"put", "get", "fetchAdd", "compareAndSwap", "add"})
    public String op;

    @Param({"sim:mlx5", "sim:efa"})
    public String device;

    @Param({"static"})
    public String category;

    /** Whether the window is reached through its mapping ({@link WorldEndpoints#mapWindows}) where the device maps it. */
    @Param({"false", "true"})
    public boolean mapped;

    private WorldEndpoints eps;
    private RankEndpoint ep;
    private Window win;
    private Window results;
    private int kind;

    @Setup(Level.Trial)
    public void open() {
        World w = LocalWorld.create(1, 60_000).get(0);
        EndpointOptions opts = EndpointOptions.DEFAULTS.withFeatures(BATCH, BATCH, 0).withDepths(4 * BATCH, BATCH)
                .withBuffers(1024, 64);
        eps = WorldEndpoints.open(w, Devices.byName(device), SharingConfig.parse(category), 1, opts);
        eps.mapWindows(mapped);
        win = eps.allocateWindow(8L * BATCH);
        results = eps.allocateWindow(8L * BATCH);
        ep = eps.acquire();
        kind = switch (op) {
            case "put" -> 0;
            case "get" -> 1;
            case "fetchAdd" -> 2;
            case "compareAndSwap" -> 3;
            case "add" -> 4;
            default -> throw new IllegalArgumentException("op: put, get, fetchAdd, compareAndSwap or add; not " + op);
        };
    }

    @TearDown(Level.Trial)
    public void close() {
        ep.close();
        results.close();
        win.close();
        eps.close();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int batch() {
        int rc = 0;
        for (int i = 0; i < BATCH; i++) {
            long at = 8L * i;
            while ((rc = issue(at)) == Endpoint.BACK_PRESSURED) {
                ep.progress();
            }
            if (rc != Endpoint.OK) {
                throw new IllegalStateException(op + " failed: " + Endpoint.outcomeName(rc));
            }
        }
        if (!ep.flush(0)) {
            throw new IllegalStateException(op + ": flush failed (status " + ep.firstErrorStatus(0) + ")");
        }
        return rc;
    }

    /**
     * One operation and a flush, as a blocking get or atomic does (and ucx_perftest's latency tests):
     * the flush's own cost is in each operation.
     */
    @Benchmark
    public int blocking() {
        int rc;
        while ((rc = issue(0)) == Endpoint.BACK_PRESSURED) {
            ep.progress();
        }
        if (rc != Endpoint.OK || !ep.flush(0)) {
            throw new IllegalStateException(op + " failed: " + Endpoint.outcomeName(rc) + ", status " + ep.firstErrorStatus(0));
        }
        return rc;
    }

    private int issue(long at) {
        return switch (kind) {
            case 0 -> ep.put(0, win, at, results, at, 8);
            case 1 -> ep.get(0, win, at, results, at, 8);
            case 2 -> ep.fetchAdd(0, win, at, 1, results, at);
            case 3 -> ep.compareAndSwap(0, win, at, 0, 0, results, at);
            default -> ep.add(0, win, at, 1);
        };
    }
}
