package dev.scalep.bench;

import dev.scalep.endpoints.ActiveMessage;
import dev.scalep.endpoints.ActiveMessages;
import dev.scalep.endpoints.Completion;
import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.endpoints.MessageStatus;
import dev.scalep.endpoints.Messages;
import dev.scalep.endpoints.RankEndpoint;
import dev.scalep.endpoints.Window;
import dev.scalep.endpoints.WorldEndpoints;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.WcStatus;
import org.HdrHistogram.Histogram;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * ucx_perftest's one-sided tests over scalep windows, between two ranks: rank 0 initiates, rank 1
 * is the target (and, in the put latency test, answers). Written with the public endpoint API only.
 * Each of {@code T} initiator threads has its own endpoint and its own slot of the target window
 * and runs {@code n / T} measured iterations after {@code w / T} warm-up ones.
 *
 * <p>What an iteration is, per test (as ucx_perftest defines them):
 * <ul>
 * <li>{@code ucp_put_bw}: a put of {@code -s} bytes; the puts stream (postlist and unsignaled
 *     completions as the endpoint options say) and one flush at the end counts in the time;
 * <li>{@code ucp_put_lat}: ping-pong of puts; each side waits for the other's put to land in its
 *     memory (an iteration stamp in the message's last 8 bytes) before putting back; latency is
 *     half the round trip;
 * <li>{@code ucp_get}: a get and a flush (the bytes are here);
 * <li>{@code ucp_fadd}, {@code ucp_cswap}: the atomic and a flush (its result is here);
 *     {@code ucp_swap}: the swap, which is a loop of compare-and-swaps on verbs;
 * <li>{@code ucp_add}: a non-fetching add; the adds stream and one flush at the end counts;
 * <li>{@code tag_lat}: ping-pong of tagged messages ({@code Messages}: send from the initiator's
 *     window, receive into the target window; eager up to the eager limit, rendezvous above);
 *     latency is half the round trip;
 * <li>{@code tag_bw}: rank 0 streams tagged sends (at most 16 rendezvous requests open), rank 1
 *     receives each, and a last zero-byte message back counts in the time;
 * <li>{@code ucp_am_lat}: ping-pong of active messages ({@code ActiveMessages}; rank 1's handler
 *     replies from inside itself, rank 0's counts the reply); latency is half the round trip;
 * <li>{@code ucp_am_bw}: rank 0 streams active messages, rank 1's handler counts them, and a last
 *     zero-byte active message back counts in the time. The payload comes from the initiator's
 *     window: the receive slots are sized for {@code -s} up to {@value #MAX_ACTIVE} bytes (eager);
 *     above that it goes by rendezvous into the thread's slot of the target window, rank 1's
 *     rendezvous buffer (the stream keeps at most 16 open; the latency test's reply is sent from
 *     outside the handler).
 * </ul>
 * The atomic tests check their effect on the target word afterwards (adds add up exactly).
 */
public final class Perftest {
    /** The tests, by ucx_perftest's names. */
    public enum Test {
        UCP_PUT_BW("ucp_put_bw", false), UCP_PUT_LAT("ucp_put_lat", true), UCP_GET("ucp_get", true),
        UCP_ADD("ucp_add", false), UCP_FADD("ucp_fadd", true), UCP_SWAP("ucp_swap", true), UCP_CSWAP("ucp_cswap", true),
        TAG_LAT("tag_lat", true), TAG_BW("tag_bw", false), UCP_AM_LAT("ucp_am_lat", true), UCP_AM_BW("ucp_am_bw", false);

        private final String label;
        private final boolean latency;

        Test(String label, boolean latency) {
            this.label = label;
            this.latency = latency;
        }

        /** ucx_perftest's name of the test. */
        public String label() {
            return label;
        }

        /** Whether each iteration is timed (latency tests) rather than the whole stream (bandwidth tests). */
        public boolean latency() {
            return latency;
        }

        /** Whether the test sends messages, tagged or active (both ranks take part). */
        public boolean tagged() {
            return this == TAG_LAT || this == TAG_BW || active();
        }

        /** Whether the test sends active messages. */
        public boolean active() {
            return this == UCP_AM_LAT || this == UCP_AM_BW;
        }

        /** Whether the test is an atomic (8-byte operands only). */
        public boolean atomic() {
            return this == UCP_ADD || this == UCP_FADD || this == UCP_SWAP || this == UCP_CSWAP;
        }

        /** The test named {@code s}; throws {@link IllegalArgumentException} listing the names. */
        public static Test parse(String s) {
            for (Test t : values()) {
                if (t.label.equals(s.toLowerCase(Locale.ROOT))) {
                    return t;
                }
            }
            StringBuilder b = new StringBuilder();
            for (Test t : values()) {
                b.append(b.isEmpty() ? "" : ", ").append(t.label);
            }
            throw new IllegalArgumentException("unknown test '" + s + "'; one of " + b);
        }
    }

    /**
     * What to run: {@code size} bytes, {@code iterations} measured and {@code warmup} untimed in all,
     * over {@code threads}; with {@code mapped}, the windows are reached through their mapping where
     * the device maps them ({@link WorldEndpoints#mapWindows}), as UCX's posix transport reaches a
     * peer's memory, and messages are written into the peer's mapped mailboxes
     * ({@link WorldEndpoints#mapMessages}); {@code rendezvousThreshold} is the message tests'
     * {@link Messages#rendezvousThreshold} (-1: the default, the eager limit).
     */
    public record Params(Test test, int size, long iterations, long warmup, int threads, boolean mapped,
                         long rendezvousThreshold) {
        public Params(Test test, int size, long iterations, long warmup, int threads, boolean mapped) {
            this(test, size, iterations, warmup, threads, mapped, -1);
        }

        /** Refuse what the test cannot do, before anything runs. */
        public Params {
            if (test.atomic() && size != Long.BYTES) {
                throw new IllegalArgumentException("-s " + size + ": " + test.label() + " operates on 64-bit words; use -s 8");
            }
            if (test == Test.UCP_PUT_LAT && size < Long.BYTES) {
                throw new IllegalArgumentException("-s " + size + ": ucp_put_lat needs at least 8 bytes (the arrival stamp)");
            }
            if (size < 1 || size > (1 << 30)) {
                throw new IllegalArgumentException("-s " + size + " must be between 1 and 1073741824 bytes");
            }
            if (threads < 1 || threads > 256) {
                throw new IllegalArgumentException("-T " + threads + " must be between 1 and 256");
            }
            if (iterations < threads) {
                throw new IllegalArgumentException("-n " + iterations + " must be at least one iteration per thread (-T " + threads + ")");
            }
            if (warmup < 0) {
                throw new IllegalArgumentException("-w " + warmup + " must not be negative");
            }
            if (rendezvousThreshold >= 0) {
                if (!test.tagged()) {
                    throw new IllegalArgumentException("--rndv-thresh: " + test.label() + " sends no messages (tagged and "
                            + "active-message tests only)");
                }
                long limit = eagerLimit(test, size);
                if (rendezvousThreshold > limit) {
                    throw new IllegalArgumentException("--rndv-thresh " + rendezvousThreshold + " is above the eager limit of "
                            + limit + " bytes of the receive slots this test uses at -s " + size);
                }
            } else if (rendezvousThreshold != -1) {
                throw new IllegalArgumentException("--rndv-thresh " + rendezvousThreshold + " must not be negative");
            }
        }
    }

    /**
     * The outcome as ucx_perftest reports it: latency (median and mean of the timed iterations, and
     * "overall": the run's time per iteration and thread) in microseconds, bandwidth in
     * MB/s (2^20 bytes), message rate in messages per second; {@code checked} is false when the
     * target's words did not add up.
     */
    public record Result(Test test, int size, long iterations, int threads, double seconds, double p50Us, double averageUs,
                         double overallUs, double bandwidthMBs, double messageRate, boolean checked, String detail) {
    }

    /** The largest eager payload of the active-message tests: a 64 KiB receive slot less the header (rendezvous above). */
    public static final int MAX_ACTIVE = 65536 - ActiveMessages.HEADER_BYTES;
    /** The largest eager payload of the tagged tests (rendezvous above), about where UCX's shared-memory transports switch. */
    public static final int MAX_TAG_EAGER = 8192;

    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    /**
     * The receive slot the active-message tests use for {@code size}-byte payloads: the payload
     * and the message header, rounded up to 64 bytes, at most 64 KiB (larger payloads go by
     * rendezvous into the target window).
     */
    public static int activeSlotBytes(int size) {
        return slotBytes(size, MAX_ACTIVE, ActiveMessages.HEADER_BYTES);
    }

    /** The eager limit of the receive slots a message test of {@code size} bytes uses (receive slot less the header). */
    public static long eagerLimit(Test test, int size) {
        return (test.active() ? activeSlotBytes(size) : tagSlotBytes(size)) - ActiveMessages.HEADER_BYTES;
    }

    /** Receive slot bytes for tagged messages of {@code size}: eager up to {@value #MAX_TAG_EAGER} bytes, rendezvous above. */
    public static int tagSlotBytes(int size) {
        return slotBytes(size, MAX_TAG_EAGER, Workload.TAG_HEADER);
    }

    /** A slot for the header and at most {@code max} bytes of payload, in whole cache lines. */
    private static int slotBytes(int size, int max, int header) {
        return (Math.min(size, max) + header + 63) & ~63;
    }
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private Perftest() {
    }

    /** Run {@code p} at sharing level {@code cfg}; every rank of the two calls it; both get the result. */
    public static Result run(World world, Device device, SharingConfig cfg, EndpointOptions opts, Params p)
            throws InterruptedException {
        if (world.size() != 2) {
            throw new IllegalArgumentException("perftest runs between exactly 2 ranks (rank 0 initiates, rank 1 is the target); "
                    + "this job has " + world.size());
        }
        int me = world.rank();
        int threads = p.threads();
        long slot = Math.max(64, (p.size() + 63L) & ~63L);
        try (WorldEndpoints we = WorldEndpoints.open(world, device, cfg, threads, opts)) {
            we.mapWindows(p.mapped());
            if (p.mapped() && p.test().tagged() && we.mapMessages() != 2) {
                throw new IllegalArgumentException("--transport shm: " + device.name() + " cannot map rank " + (1 - me)
                        + "'s mailboxes into this process (only the simulator's ranks on one machine can); use --transport nic");
            }
            Window target = we.allocateWindow(slot * threads);
            Window local = we.allocateWindow(slot * threads);
            Result result;
            try {
                if (p.mapped() && !target.mapped(1 - me)) {
                    throw new IllegalArgumentException("--transport shm: " + device.name() + " cannot map rank " + (1 - me)
                            + "'s window into this process (only the simulator's ranks on one machine can); use --transport nic");
                }
                world.barrier();
                double[] seconds = new double[threads];
                Histogram[] hist = new Histogram[threads];
                AtomicReference<Throwable> failure = new AtomicReference<>();
                CyclicBarrier measured = new CyclicBarrier(threads);
                List<Thread> workers = new ArrayList<>();
                // Without RDMA atomics (EFA) the atomics are emulated: the target's threads must
                // progress to serve them, so they run too, waiting in the endpoints' barrier.
                boolean emulated = p.test().atomic() && !device.capabilities().atomicCap().supported() && !p.mapped();
                boolean active = me == 0 || p.test() == Test.UCP_PUT_LAT || p.test().tagged() || emulated;
                for (int t = 0; active && t < threads; t++) {
                    int th = t;
                    hist[t] = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
                    long warm = p.warmup() / threads + (t < p.warmup() % threads ? 1 : 0);
                    long iters = p.iterations() / threads + (t < p.iterations() % threads ? 1 : 0);
                    workers.add(Thread.ofPlatform().name("perftest-" + me + "-" + t).start(() -> {
                        try (RankEndpoint re = we.acquire()) {
                            if (me == 0 || !emulated) {
                                Worker w = new Worker(re, p.test(), me, target, local, th * slot, p.size(), hist[th]);
                                if (p.rendezvousThreshold() >= 0) {
                                    re.messages().rendezvousThreshold(p.rendezvousThreshold());
                                }
                                if (p.test().active()) {
                                    w.registerActive();
                                    if (!re.barrier()) { // every handler is registered before any message is sent
                                        throw new IllegalStateException(p.test().label() + ": the opening barrier failed");
                                    }
                                }
                                w.run(warm, 0, true);
                                hist[th].reset();
                                measured.await(TIMEOUT_NANOS, TimeUnit.NANOSECONDS);
                                long t0 = System.nanoTime();
                                w.run(iters, warm, false);
                                seconds[th] = (System.nanoTime() - t0) / 1e9;
                            }
                            // Every thread of both ranks: the target's serve emulated atomics until all
                            // are done; after messages, the credits and completions of the last ones settle.
                            if ((emulated || p.test().tagged()) && !re.barrier()) {
                                throw new IllegalStateException(p.test().label() + ": the closing barrier failed or took 60 s");
                            }
                        } catch (Throwable x) {
                            failure.compareAndSet(null, x);
                            measured.reset();
                        }
                    }));
                }
                for (Thread w : workers) {
                    w.join();
                }
                Throwable f = failure.get();
                String error = f == null ? "" : String.valueOf(f.getMessage() != null ? f.getMessage() : f);
                world.barrier(); // the initiator's operations are complete at the target
                String detail = me == 1 ? check(p, target, threads, slot) : "";
                result = combine(world, p, seconds, hist, error, detail);
            } catch (Throwable t) {
                try { // the windows as below, without hiding why the run failed
                    closeWindows(world, local, target);
                } catch (RuntimeException e) {
                    t.addSuppressed(e);
                }
                throw t;
            }
            closeWindows(world, local, target);
            return result;
        }
    }

    /**
     * After both ranks' workers ended (each released its endpoint, which waited for what it left
     * in flight), close the windows: nothing names them any more.
     */
    private static void closeWindows(World world, Window local, Window target) {
        world.barrier();
        local.close();
        target.close();
    }

    /** On the target after an atomic test: each thread's word holds what its operations made of it. */
    private static String check(Params p, Window target, int threads, long slot) {
        if (p.test() != Test.UCP_ADD && p.test() != Test.UCP_FADD) {
            return "";
        }
        for (int t = 0; t < threads; t++) {
            long want = p.warmup() / threads + (t < p.warmup() % threads ? 1 : 0)
                    + p.iterations() / threads + (t < p.iterations() % threads ? 1 : 0);
            long got = target.local().get(ValueLayout.JAVA_LONG, t * slot);
            if (got != want) {
                return "thread " + t + "'s word on the target is " + got + " after " + want + " adds of 1";
            }
        }
        return "";
    }

    private static Result combine(World world, Params p, double[] seconds, Histogram[] hist, String error, String detail) {
        double slowest = 0;
        Histogram all = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        for (int t = 0; t < seconds.length; t++) {
            slowest = Math.max(slowest, seconds[t]);
            if (hist[t] != null) {
                all.add(hist[t]);
            }
        }
        byte[] e = (error + "\n" + detail).getBytes(StandardCharsets.UTF_8);
        ByteBuffer mine = ByteBuffer.allocate(24 + e.length);
        double unit = p.test().latency() ? 1e3 : 1e3 * Worker.PICOS; // latency tests record ns, bandwidth tests ps
        mine.putDouble(slowest).putDouble(all.getTotalCount() == 0 ? 0 : all.getValueAtPercentile(50) / unit)
                .putDouble(all.getTotalCount() == 0 ? 0 : all.getMean() / unit).put(e);
        byte[][] both = world.allgather(mine.array());
        ByteBuffer r0 = ByteBuffer.wrap(both[0]);
        double secs = r0.getDouble();
        double p50 = r0.getDouble();
        double mean = r0.getDouble();
        StringBuilder problems = new StringBuilder();
        for (byte[] b : both) {
            String[] parts = new String(b, 24, b.length - 24, StandardCharsets.UTF_8).split("\n", 2);
            for (String s : parts) {
                if (!s.isEmpty()) {
                    problems.append(problems.isEmpty() ? "" : "; ").append(s);
                }
            }
        }
        long n = p.iterations();
        double perThread = (double) n / p.threads();
        // Per-thread time per operation, as ucx_perftest's "overall" (half a round trip for put latency).
        double overallUs = secs / perThread * 1e6 / (p.test() == Test.UCP_PUT_LAT || p.test() == Test.TAG_LAT
                || p.test() == Test.UCP_AM_LAT ? 2 : 1);
        double rate = p.test().latency() ? p.threads() / (overallUs / 1e6) : n / secs;
        double bw = rate * p.size() / (1 << 20);
        if (!p.test().latency()) {
            mean = overallUs;
        }
        return new Result(p.test(), p.size(), n, p.threads(), secs, p50, mean, overallUs, bw, rate, problems.isEmpty(),
                problems.toString());
    }

    /** One initiator (or, in ucp_put_lat, answering) thread. */
    private static final class Worker {
        /**
         * The latency tests time every 257th iteration ({@link #sampled()}) for the median and mean:
         * a clock read costs about 20-30 ns here, more than a shared-memory get, and timing every
         * 16th still added 4-8 ns to each get's overall latency. The overall latency is the run's
         * time over its iterations. The period is a prime so that the timed iterations fall on every
         * phase of the runtime's own power-of-two cycles (the slots of the inbox ring and of the
         * posted receives, the place in a postlist): timed every 256th, they all fell on the same
         * phase, a slow one, and {@code tag_lat -s 8} reported a median of 0.34-0.35 us against an
         * overall 0.23-0.24 (0.21-0.22 and 0.23-0.24 with 257).
         */
        private static final int SAMPLE_PERIOD = 257;
        /** The bandwidth tests record picoseconds per operation ({@link #perOperation}): a stream's operation takes 10-200 ns. */
        static final int PICOS = 1000;
        /** Iterations until the next timed one ({@link #sampled()}). */
        private int untilSample = 1;
        /** Operations per call of the batch methods ({@link #stream}). */
        private static final int BATCH = 4096;
        /** Batches per flushed stream of the warm-up ({@link #stream}). */
        private static final int WARM_STREAM = 16;
        private final RankEndpoint re;
        private final Test test;
        private final int me;
        private final int peer;
        private final Window target;
        private final Window local;
        private final MemorySegment mine;
        private final MemorySegment landing;
        private final long off;
        private final int size;
        private final Histogram hist;
        private final Completion c = new Completion();
        private final MessageStatus status = new MessageStatus();
        private final int[] open = new int[16];
        /**
         * The put ping-pong polls its completions at every look for the peer's stamp through the
         * endpoint, at every 1024th when the put went to a mapped window (no completion; a poll
         * costs more than the look, and the peer's stamp comes within tens of looks).
         */
        private final int pollMask;
        private Messages messages;
        private ActiveMessages am;
        /** Active messages this thread's handler ran for, the count it waits for, and replies it owes. */
        private long amArrived;
        private long amExpected;
        private int amOwed;
        /** Rendezvous active messages of the stream not yet completed (their handles in {@link #open}). */
        private int amOpen;
        /** Rendezvous sends of the tagged stream not yet completed, at the front of {@link #open}. */
        private int tagOpen;

        Worker(RankEndpoint re, Test test, int me, Window target, Window local, long off, int size, Histogram hist) {
            this.re = re;
            this.test = test;
            this.me = me;
            this.peer = 1 - me;
            this.target = target;
            this.local = local;
            this.mine = local.local();
            this.landing = target.local();
            this.off = off;
            this.size = size;
            this.hist = hist;
            this.pollMask = target.mapped(peer) ? 1023 : 0;
        }

        /** {@code n} iterations, numbered from {@code first} (stamps of the put ping-pong); the warm-up's or timed. */
        void run(long n, long first, boolean warmup) {
            switch (test) {
                case UCP_PUT_BW -> stream(n, false, warmup);
                case UCP_ADD -> stream(n, true, warmup);
                case UCP_PUT_LAT -> pingPong(n, first);
                case TAG_LAT -> tagPingPong(n);
                case TAG_BW -> tagStream(n);
                case UCP_AM_LAT -> amPingPong(n);
                case UCP_AM_BW -> amStream(n);
                default -> blocking(n);
            }
        }

        /**
         * The stream in batches of {@link #BATCH}: a method the loop calls thousands of times during
         * the warm-up is compiled whole by C2 and runs compiled from the first timed operation on,
         * where one long loop left its method to on-stack replacement, which the JIT had not reached by
         * the end of the warm-up (the timed stream then ran C1's profiling code for its first 3
         * million operations: ucp_put_bw -n 1000000 measured 4 M msg/s, -n 20000000 15 M). The
         * warm-up ({@code warm}) is a series of streams of {@link #WARM_STREAM} batches, each flushed,
         * so that the code compiled for it has seen what the timed stream does: its first operation
         * after a flush (a window not yet touched since), and a full send queue. Compiled without the
         * first, the first timed put sent the code back to the interpreter to be compiled again
         * while the stream ran; warmed with a flush after every batch, the queue never filled in the
         * warm-up, and the first full queue of the timed stream did the same.
         */
        private void stream(long n, boolean add, boolean warm) {
            long b = 0;
            for (long i = 0; i < n; i += BATCH) {
                int k = (int) Math.min(BATCH, n - i);
                long t0 = System.nanoTime();
                streamBatch(k, add);
                perOperation(t0, k);
                if (warm && ++b % WARM_STREAM == 0) {
                    flush();
                }
            }
            flush();
        }

        private void streamBatch(int k, boolean add) {
            for (int j = 0; j < k; j++) {
                int rc;
                while ((rc = add ? re.add(peer, target, off, 1) : re.put(peer, target, off, local, off, size))
                        == Endpoint.BACK_PRESSURED) {
                    re.poll(c);
                }
                check(rc);
            }
        }

        /**
         * A bandwidth test's sample: the time per operation of the batch of {@code k} begun at
         * {@code t0}, in picoseconds ({@link #PICOS}). The percentile column of these tests is the
         * median over batches; ucx_perftest's is the median over single operations, which in a
         * steady stream lies a little below the mean (UCX 1.13 tag_bw -s 8: 0.119 us against 0.145).
         */
        private void perOperation(long t0, int k) {
            hist.recordValue(Math.min((System.nanoTime() - t0) * PICOS / k, hist.getHighestTrackableValue()));
        }

        /** Whether this iteration is timed: every {@link #SAMPLE_PERIOD}th, counted down without a division. */
        private boolean sampled() {
            if (--untilSample != 0) {
                return false;
            }
            untilSample = SAMPLE_PERIOD;
            return true;
        }

        /** The blocking operations in batches of {@link #BATCH}, as {@link #stream}. */
        private void blocking(long n) {
            for (long i = 0; i < n; i += BATCH) {
                blockingBatch(i, (int) Math.min(BATCH, n - i));
            }
        }

        private void blockingBatch(long from, int k) {
            for (long i = from, end = from + k; i < end; i++) {
                boolean timed = sampled();
                long t0 = timed ? System.nanoTime() : 0;
                int rc;
                while ((rc = once(i)) == Endpoint.BACK_PRESSURED) {
                    re.poll(c);
                }
                check(rc);
                if (test != Test.UCP_SWAP) {
                    flush();
                }
                if (timed) {
                    hist.recordValue(Math.min(System.nanoTime() - t0, hist.getHighestTrackableValue()));
                }
            }
        }

        private int once(long i) {
            return switch (test) {
                case UCP_GET -> re.get(peer, target, off, local, off, size);
                case UCP_FADD -> re.fetchAdd(peer, target, off, 1, local, off);
                case UCP_CSWAP -> re.compareAndSwap(peer, target, off, i, i + 1, local, off);
                default -> re.swap(peer, target, off, i, local, off);
            };
        }

        /** The put ping-pong in batches of {@link #BATCH} round trips, compiled as a method as {@link #stream}. */
        private void pingPong(long n, long first) {
            for (long i = 0; i < n; i += BATCH) {
                pingPongBatch(first + i + 1, (int) Math.min(BATCH, n - i));
            }
            flush();
        }

        /** Round trips {@code from} .. {@code from + k - 1} (their stamps). */
        private void pingPongBatch(long from, int k) {
            long stampAt = off + size - Long.BYTES;
            for (long i = from, end = from + k; i < end; i++) {
                boolean timed = sampled();
                long t0 = timed ? System.nanoTime() : 0;
                if (me == 0) {
                    send(i, stampAt);
                    await(i, stampAt);
                } else {
                    await(i, stampAt);
                    send(i, stampAt);
                }
                if (timed) {
                    hist.recordValue(Math.min((System.nanoTime() - t0) / 2, hist.getHighestTrackableValue()));
                }
            }
        }

        private Messages messages() {
            if (messages == null) {
                messages = re.messages();
            }
            return messages;
        }

        /** The tagged ping-pong in batches of {@link #BATCH} round trips, compiled as a method as {@link #stream}. */
        private void tagPingPong(long n) {
            Messages m = messages();
            for (long i = 0; i < n; i += BATCH) {
                tagPingPongBatch(m, i, (int) Math.min(BATCH, n - i));
            }
        }

        private void tagPingPongBatch(Messages m, long from, int k) {
            for (long i = from, end = from + k; i < end; i++) {
                boolean timed = sampled();
                long t0 = timed ? System.nanoTime() : 0;
                if (me == 0) {
                    tagSend(m, 0);
                    tagRecv(m);
                } else {
                    tagRecv(m);
                    tagSend(m, 0);
                }
                if (timed) {
                    hist.recordValue(Math.min((System.nanoTime() - t0) / 2, hist.getHighestTrackableValue()));
                }
            }
        }

        /**
         * The tagged stream in batches of {@link #BATCH}, compiled as a method as {@link #stream}: one
         * loop over all {@code n} messages was compiled only by on-stack replacement, so the timed
         * stream of a short run began in C1's code.
         */
        private void tagStream(long n) {
            Messages m = messages();
            for (long i = 0; i < n; i += BATCH) {
                if (me == 0) {
                    int k = (int) Math.min(BATCH, n - i);
                    long t0 = System.nanoTime();
                    tagSendBatch(m, k);
                    perOperation(t0, k);
                } else {
                    tagRecvBatch(m, (int) Math.min(BATCH, n - i));
                }
            }
            for (int k = 0; k < tagOpen; k++) {
                complete(m, open[k]);
            }
            tagOpen = 0;
            if (me == 0) {
                tagRecv(m); // the receiver's zero-byte answer: every message arrived
            } else {
                tagSend(m, -1);
                m.progress(); // a staged eager answer leaves at the next progress: now, not after the barrier
            }
        }

        /** {@code k} tagged sends, at most {@code open.length} rendezvous requests left open. */
        private void tagSendBatch(Messages m, int k) {
            int count = tagOpen;
            for (int j = 0; j < k; j++) {
                if (count == open.length) {
                    complete(m, open[0]);
                    System.arraycopy(open, 1, open, 0, --count);
                }
                int q = tagSend(m, 0);
                if (q != Messages.COMPLETED) {
                    open[count++] = q;
                }
            }
            tagOpen = count;
        }

        private void tagRecvBatch(Messages m, int k) {
            for (int j = 0; j < k; j++) {
                tagRecv(m);
            }
        }

        /** Register the handler (id 0) on this slot; the caller then waits in a barrier with every slot of both ranks. */
        void registerActive() {
            am = re.activeMessages();
            am.register(0, this::onActive);
            am.rendezvousBuffer(target, off, Math.max(size, 1)); // payloads above the eager limit land in this thread's slot
        }

        private void onActive(ActiveMessage m) {
            amArrived++;
            if (test == Test.UCP_AM_LAT && me == 1
                    && (amOwed > 0 || size > am.maxPayload() || m.reply(0, 0, 0, mine, off, size) != ActiveMessages.COMPLETED)) {
                amOwed++; // no credit towards rank 0 now, or a rendezvous reply (not from a handler): the loop replies
            }
        }

        /** The active-message ping-pong in batches of {@link #BATCH} round trips, compiled as a method as {@link #stream}. */
        private void amPingPong(long n) {
            for (long i = 0; i < n; i += BATCH) {
                amPingPongBatch(i, (int) Math.min(BATCH, n - i));
            }
        }

        private void amPingPongBatch(long from, int k) {
            for (long i = from, end = from + k; i < end; i++) {
                boolean timed = sampled();
                long t0 = timed ? System.nanoTime() : 0;
                if (me == 0) {
                    amSend(size);
                }
                amAwait(1);
                if (timed) {
                    hist.recordValue(Math.min((System.nanoTime() - t0) / 2, hist.getHighestTrackableValue()));
                }
            }
        }

        private void amStream(long n) {
            // In batches of BATCH, compiled as methods as the tagged stream's.
            if (me == 0) {
                for (long i = 0; i < n; i += BATCH) {
                    int k = (int) Math.min(BATCH, n - i);
                    long t0 = System.nanoTime();
                    amSendBatch(k);
                    perOperation(t0, k);
                }
                for (int k = 0; k < amOpen; k++) {
                    complete(messages(), open[k]);
                }
                amOpen = 0;
                amAwait(1); // the receiver's zero-byte answer: every message arrived
            } else {
                for (long i = 0; i < n; i += BATCH) {
                    amAwait(Math.min(BATCH, n - i));
                }
                amSend(0);
                am.progress(); // as the tagged answer: out now, not at the next stream's first progress
            }
        }

        private void amSendBatch(int k) {
            for (int j = 0; j < k; j++) {
                amSend(size);
            }
        }

        /** Progress until {@code more} messages beyond those waited for before arrived (counted from the run's start). */
        private void amAwait(long more) {
            amExpected += more;
            long spins = 0;
            while (amArrived < amExpected || amOwed > 0) {
                amProgress();
                if (++spins == 200_000_000L) {
                    throw new IllegalStateException(test.label() + ": " + (amExpected - amArrived)
                            + " active messages from rank " + peer + " did not arrive");
                }
            }
        }

        private void amProgress() {
            am.progress();
            int rc;
            while (amOwed > 0 && (rc = am.send(peer, 0, 0, 0, local, off, size)) != ActiveMessages.BACK_PRESSURED) {
                if (rc < 0) {
                    throw new IllegalStateException(test.label() + ": the reply was refused: " + Endpoint.outcomeName(-rc));
                }
                if (rc != ActiveMessages.COMPLETED) {
                    complete(messages(), rc); // a rendezvous reply: rank 0 has read it
                }
                amOwed--;
            }
        }

        /**
         * Send {@code len} bytes of this thread's part of the local window: eager up to the eager
         * limit, by rendezvous above it (the latency test waits for each; the stream keeps up to
         * {@code open.length} in flight).
         */
        private void amSend(long len) {
            int rc;
            long spins = 0;
            while ((rc = am.send(peer, 0, 0, 0, local, off, len)) == ActiveMessages.BACK_PRESSURED) {
                amProgress();
                if (++spins == 100_000_000L) {
                    throw new IllegalStateException(test.label() + ": active messages to rank " + peer + " stayed back-pressured");
                }
            }
            if (rc < 0) {
                throw new IllegalStateException(test.label() + ": the send was refused: " + Endpoint.outcomeName(-rc));
            }
            if (rc != ActiveMessages.COMPLETED) {
                if (test == Test.UCP_AM_LAT) {
                    complete(messages(), rc);
                    return;
                }
                if (amOpen == open.length) {
                    complete(messages(), open[0]);
                    System.arraycopy(open, 1, open, 0, --amOpen);
                }
                open[amOpen++] = rc;
            }
        }

        /** Send {@code size} bytes (or 0 when {@code zero} is -1) from this thread's part of the local window. */
        private int tagSend(Messages m, int zero) {
            int q;
            long len = zero < 0 ? 0 : size;
            long spins = 0;
            while ((q = m.send(peer, 1, local, off, len)) == Messages.BACK_PRESSURED) {
                if (++spins == 100_000_000L) {
                    throw new IllegalStateException(test.label() + ": sends to rank " + peer + " stayed back-pressured");
                }
            }
            if (q < 0) {
                throw new IllegalStateException(test.label() + ": the send was refused: " + Endpoint.outcomeName(-q));
            }
            if (test == Test.TAG_LAT && q != Messages.COMPLETED) {
                complete(m, q);
            }
            return q;
        }

        private void tagRecv(Messages m) {
            int q;
            while ((q = m.recv(peer, 1, Messages.ALL_BITS, target, off, size)) == Messages.BACK_PRESSURED) {
                Thread.onSpinWait();
            }
            complete(m, q);
        }

        private void complete(Messages m, int q) {
            if (!m.waitFor(q, status)) {
                throw new IllegalStateException(test.label() + ": a message to or from rank " + peer + " did not complete in 60 s");
            }
            if (status.error() != MessageStatus.OK) {
                throw new IllegalStateException(test.label() + ": " + status);
            }
        }

        private void send(long stamp, long stampAt) {
            LONG.set(mine, stampAt, stamp);
            int rc;
            while ((rc = re.put(peer, target, off, local, off, size)) == Endpoint.BACK_PRESSURED) {
                re.poll(c);
            }
            check(rc);
        }

        /**
         * Looks at the landing word in a tight loop before each further look is spaced by a spin-wait
         * hint (PAUSE). Without the hint the put ping-pong took 0.30-0.35 us per one-way trip on
         * the development VM against UCX's 0.28-0.31; with it, 0.18-0.24: a tight loop of loads
         * on the line the peer is about to write competes with that write (and, on a core shared
         * with another hardware thread, with the peer's or its sibling's work). UCX's loop calls
         * its progress between looks.
         */
        private static final int TIGHT_LOOKS = 8;

        private void await(long stamp, long stampAt) {
            long deadline = 0;
            int spins = 0;
            while ((long) LONG.getAcquire(landing, stampAt) != stamp) {
                if (spins >= TIGHT_LOOKS) {
                    Thread.onSpinWait();
                }
                if ((++spins & pollMask) == 0) {
                    re.poll(c); // completions of this side's puts, so its send queue drains
                }
                if (spins == 4096) {
                    spins = 0;
                    Thread.yield(); // the peer is late: on an oversubscribed machine, let it (or its NIC agent) run
                    long now = System.nanoTime();
                    if (deadline == 0) {
                        deadline = now + TIMEOUT_NANOS;
                    } else if (now > deadline) {
                        throw new IllegalStateException("ucp_put_lat: rank " + peer + "'s put " + stamp + " did not arrive in 60 s");
                    }
                }
            }
        }

        private void flush() {
            if (!re.flush()) {
                int status = re.firstErrorStatus(peer);
                throw new IllegalStateException(test.label() + ": an operation to rank " + peer + (status != 0
                        ? " failed with " + WcStatus.name(status) : " did not complete in 60 s"));
            }
        }

        private void check(int rc) {
            if (rc != Endpoint.OK) {
                throw new IllegalStateException(test.label() + ": the post was refused: " + Endpoint.outcomeName(rc));
            }
        }
    }
}
