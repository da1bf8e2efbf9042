package dev.scalep.bench.jmh;

import dev.scalep.endpoints.ActiveMessages;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.endpoints.MessageStatus;
import dev.scalep.endpoints.Messages;
import dev.scalep.endpoints.RankEndpoint;
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

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

/**
 * The two-sided eager path per message: one invocation moves {@value #BATCH} 8-byte messages from
 * one thread to itself through the device (a world of one rank: the loopback QP, the path a
 * message to another rank takes too). {@code tag}: {@value #BATCH} receives posted, {@value #BATCH}
 * tagged sends, each receive waited for (send, the receive hook, matching, the copy out, credits);
 * {@code am}: {@value #BATCH} active messages, then progress until the handler ran for each
 * (send, the hook, dispatch). With {@code mapped}, the messages are written straight into the
 * mailbox ({@link WorldEndpoints#mapMessages}): no device in between. With {@code -prof gc},
 * {@code gc.alloc.rate.norm} is the bytes the path allocates per message. Single-threaded ({@code -t 1}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class MessagesBenchmark {
    static final int BATCH = 16;

    @Param({"tag", "am"})
    public String op;

    @Param({"sim:mlx5", "sim:efa"})
    public String device;

    @Param({"static"})
    public String category;

    /** Through the mapped mailbox ({@link WorldEndpoints#mapMessages}) instead of the loopback QP. */
    @Param({"false", "true"})
    public boolean mapped;

    private WorldEndpoints eps;
    private RankEndpoint ep;
    private Messages messages;
    private ActiveMessages am;
    private Arena arena;
    private MemorySegment buf;
    private final MessageStatus status = new MessageStatus();
    private final int[] requests = new int[BATCH];
    private int handler;
    private long handled;

    @Setup(Level.Trial)
    public void open() {
        if (!op.equals("tag") && !op.equals("am")) {
            throw new IllegalArgumentException("op: tag or am; not " + op);
        }
        World w = LocalWorld.create(1, 60_000).get(0);
        EndpointOptions opts = EndpointOptions.DEFAULTS.withDepths(256, 128).withBuffers(1024, 256);
        eps = WorldEndpoints.open(w, Devices.byName(device), SharingConfig.parse(category), 1, opts);
        if (mapped && eps.mapMessages() != 1) {
            throw new IllegalStateException(device + " does not map this rank's mailbox");
        }
        ep = eps.acquire();
        messages = ep.messages();
        am = ep.activeMessages();
        handler = am.register(m -> handled += m.length());
        arena = Arena.ofConfined();
        buf = arena.allocate(8L * (BATCH + 1), 64);
    }

    @TearDown(Level.Trial)
    public void close() {
        if (!ep.barrier()) {
            throw new IllegalStateException("the closing barrier failed");
        }
        ep.close();
        eps.close();
        arena.close();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long batch() {
        return op.equals("tag") ? tagged() : active();
    }

    private long tagged() {
        for (int i = 0; i < BATCH; i++) {
            int q = messages.recv(0, 5, Messages.ALL_BITS, buf, 8L * (i + 1), 8);
            if (q < 0) {
                throw new IllegalStateException("recv refused: " + q);
            }
            requests[i] = q;
        }
        for (int i = 0; i < BATCH; i++) {
            buf.set(ValueLayout.JAVA_LONG, 0, i);
            int rc;
            while ((rc = messages.send(0, 5, buf, 0, 8)) == Messages.BACK_PRESSURED) {
                messages.progress();
            }
            if (rc != Messages.COMPLETED) {
                throw new IllegalStateException("eager send: " + rc);
            }
        }
        long sum = 0;
        for (int i = 0; i < BATCH; i++) {
            if (!messages.waitFor(requests[i], status) || status.error() != MessageStatus.OK) {
                throw new IllegalStateException("receive " + i + ": " + status);
            }
            sum += buf.get(ValueLayout.JAVA_LONG, 8L * (i + 1));
        }
        return sum;
    }

    private long active() {
        long want = handled + 8L * BATCH;
        for (int i = 0; i < BATCH; i++) {
            int rc;
            while ((rc = am.send(0, handler, i, 0, buf, 0, 8)) == ActiveMessages.BACK_PRESSURED) {
                am.progress();
            }
            if (rc != ActiveMessages.COMPLETED) {
                throw new IllegalStateException("active message: " + rc);
            }
        }
        for (long spins = 0; handled < want; spins++) {
            if (spins == 100_000_000L) {
                throw new IllegalStateException("active messages were not dispatched");
            }
            am.progress();
        }
        return handled;
    }
}
