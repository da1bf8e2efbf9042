package dev.scalep.bench.kernels;

import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.endpoints.RankEndpoint;
import dev.scalep.endpoints.Window;
import dev.scalep.endpoints.WorldEndpoints;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.Device;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The HPC Challenge RandomAccess (GUPS) problem over windows, written with the public endpoint API
 * only: a table of {@code 2^log} 64-bit words distributed in equal blocks over the ranks (rank
 * {@code r} holds global words {@code r·2^log/P ..}), word {@code i} starting as {@code i}; four
 * updates per table word, {@code table[v & (2^log - 1)] ^= v} for the values {@code v} of the HPCC
 * stream ({@link HpccStream}), the stream cut into one contiguous slice per thread of every rank.
 *
 * <p>Two variants. {@link Variant#ATOMIC}: the XOR is a remote compare-and-swap loop, exact (the
 * first attempt guesses the word's initial value, a failed attempt returns the word's value for
 * the next). {@link Variant#GET_PUT}: a get, the XOR, a put, without atomicity; concurrent updates
 * of one word can be lost, which HPCC accepts up to 1 % of the table. The atomic variant keeps
 * {@link #BATCH} updates of a thread in flight (HPCC's look-ahead), flushing between steps. The
 * get-put variant loses an update whenever two updates of one word are in flight at once, which
 * grows with B in flight per thread and G threads in all and falls with the table's size (the
 * stream's consecutive indices are related, so more than a uniform stream would: measured 4 % of
 * 2^16 words at B = 64, G = 2); it keeps B = words / (8192·G) in flight, at most {@link #BATCH}
 * and at least 1.
 * Updates of this rank's own words go through the endpoints too (the device's atomics are atomic
 * only against each other, not against the CPU).
 *
 * <p>Verification replays the whole stream on every rank and applies the updates of its own block
 * to a copy of its initial words; a word of the table that differs from the replay is wrong.
 */
public final class Gups {
    /** Updates of one thread in flight at once. */
    static final int BATCH = 64;
    /** HPCC's tolerance for the non-atomic variant: wrong words per table word. */
    static final double TOLERANCE = 0.01;

    /** How an update reaches the table. */
    public enum Variant {
        /** XOR through remote compare-and-swap; exact. */
        ATOMIC,
        /** A get and a put of the XOR-ed word; up to 1 % lost updates allowed. */
        GET_PUT;

        /** Parse {@code atomic} or {@code get-put}. */
        public static Variant parse(String s) {
            return switch (s.toLowerCase(Locale.ROOT)) {
                case "atomic" -> ATOMIC;
                case "get-put", "getput" -> GET_PUT;
                default -> throw new IllegalArgumentException("unknown GUPS variant '" + s + "'; use atomic or get-put");
            };
        }

        /** The name {@link #parse} takes. */
        public String label() {
            return this == ATOMIC ? "atomic" : "get-put";
        }
    }

    private Gups() {
    }

    /** Check the table size against the world before any work: {@code 2^log} words in equal power-of-two blocks. */
    public static void checkSize(int log, int ranks) {
        if (Integer.bitCount(ranks) != 1) {
            throw new IllegalArgumentException("GUPS needs a power-of-two number of ranks (the table splits in equal "
                    + "power-of-two blocks); this job has " + ranks);
        }
        int logRanks = Integer.numberOfTrailingZeros(ranks);
        if (log < logRanks || log > 40) {
            throw new IllegalArgumentException("--size " + log + " (table of 2^" + log + " words) must be between "
                    + logRanks + " (one word per rank) and 40");
        }
    }

    /**
     * Run the kernel at sharing level {@code cfg} with {@code threads} threads per rank on a table
     * of {@code 2^log} words. Every rank calls it; each returns the combined result.
     */
    public static KernelSupport.Result run(World world, Device device, String label, SharingConfig cfg, int threads, int log,
                                           Variant variant) throws InterruptedException {
        return run(world, device, label, cfg, threads, log, variant, false);
    }

    /**
     * As {@link #run(World, Device, String, SharingConfig, int, int, Variant)}; with {@code mapped}
     * the table is reached through its mapping where the device maps it
     * ({@link WorldEndpoints#mapWindows}): CPU atomics and copies, not the sharing level's QPs.
     */
    public static KernelSupport.Result run(World world, Device device, String label, SharingConfig cfg, int threads, int log,
                                           Variant variant, boolean mapped) throws InterruptedException {
        int ranks = world.size();
        int me = world.rank();
        checkSize(log, ranks);
        if (threads < 1) {
            throw new IllegalArgumentException("--threads must be >= 1: " + threads);
        }
        long words = 1L << log;
        int logLocal = log - Integer.numberOfTrailingZeros(ranks);
        long localWords = 1L << logLocal;
        long base = (long) me << logLocal;
        long updates = 4 * words;
        long slices = (long) ranks * threads;
        // On a device without RDMA atomics each update is a request message; the emulation's
        // credits keep those in flight to one rank within the receives (BACK_PRESSURED beyond).
        EndpointOptions opts = EndpointOptions.DEFAULTS.withFeatures(1, 1, 0).withDepths(2 * BATCH, BATCH)
                .withBuffers(64, 64);
        try (WorldEndpoints we = WorldEndpoints.open(world, device, cfg, threads, opts)) {
            we.mapWindows(mapped);
            Window table = we.allocateWindow(localWords * Long.BYTES);
            // Per thread: BATCH result words (what a CAS found, or what a get fetched), then BATCH put sources.
            Window scratch = we.allocateWindow((long) threads * 2 * BATCH * Long.BYTES);
            KernelSupport.Result result;
            try {
                MemorySegment local = table.local();
                for (long i = 0; i < localWords; i++) {
                    local.setAtIndex(ValueLayout.JAVA_LONG, i, base + i);
                }
                world.barrier();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                CyclicBarrier start = new CyclicBarrier(threads + 1);
                long[] began = new long[threads];
                long[] done = new long[threads];
                long[] attempts = new long[threads];
                List<Thread> workers = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int slot = t;
                    long g = (long) me * threads + t;
                    long from = updates * g / slices;
                    long to = updates * (g + 1) / slices;
                    workers.add(Thread.ofPlatform().name("gups-" + me + "-" + t).start(() -> {
                        try (RankEndpoint re = we.acquire()) {
                            start.await();
                            began[slot] = System.nanoTime();
                            int inFlight = variant == Variant.ATOMIC ? BATCH
                                    : (int) Math.max(1, Math.min(BATCH, words / (8192 * slices)));
                            Updater u = new Updater(re, table, scratch, slot, words - 1, logLocal, variant, inFlight);
                            attempts[slot] = u.run(from, to);
                            done[slot] = System.nanoTime();
                            // Every thread of every rank keeps progressing until all are done: on a
                            // device without RDMA atomics another thread's updates need this one's.
                            // Bounded, but generously: the slowest thread may still have a whole slice
                            // of round trips ahead (an emulated machine takes minutes for it).
                            if (!re.barrier(CLOSING_BARRIER_NANOS)) {
                                throw new IllegalStateException("gups: the threads' closing barrier failed or took "
                                        + CLOSING_BARRIER_NANOS / 1_000_000_000L + " s");
                            }
                        } catch (Throwable x) {
                            failure.compareAndSet(null, x);
                            start.reset();
                        }
                    }));
                }
                double seconds = KernelSupport.runWorkers("gups", label, threads, start, workers, failure, began, done);
                world.barrier(); // every rank's updates are complete at their targets (each thread flushed)
                long wrong = verify(local, base, words, logLocal, me);
                long ops = 0;
                for (long a : attempts) {
                    ops += a;
                }
                KernelSupport.Combined c = KernelSupport.combine(world, seconds, wrong, ops,
                        wrong == 0 ? null : "rank " + me + ": " + wrong + " of " + localWords + " words wrong");
                double allowed = variant == Variant.ATOMIC ? 0 : Math.floor(TOLERANCE * words);
                boolean ok = c.mismatches() <= allowed;
                String detail = c.mismatches() + " of " + words + " words wrong"
                        + (variant == Variant.ATOMIC ? " (the atomic variant must be exact)" : " (HPCC allows " + (long) allowed + ")");
                result = new KernelSupport.Result("gups", label, ranks, threads, c.seconds(), updates / c.seconds() / 1e9,
                        "GUP/s", c.ops() / c.seconds(), ok, detail, null);
            } catch (RuntimeException | Error | InterruptedException e) {
                // A failed run must be reported as itself, not as the window close it leaves busy.
                try {
                    world.barrier();
                    scratch.close();
                    table.close();
                } catch (RuntimeException closing) {
                    e.addSuppressed(closing);
                }
                throw e;
            }
            world.barrier(); // no rank closes its windows while another may still read them
            scratch.close();
            table.close();
            return result;
        }
    }

    /** How long a thread that finished its slice waits in the closing barrier for the others. */
    static final long CLOSING_BARRIER_NANOS = 600_000_000_000L;

    /** Replay the stream and count the words of this rank's block that differ from it. */
    static long verify(MemorySegment local, long base, long words, int logLocal, int me) {
        long localWords = 1L << logLocal;
        long[] expect = new long[Math.toIntExact(localWords)];
        for (int i = 0; i < expect.length; i++) {
            expect[i] = base + i;
        }
        long mask = words - 1;
        long v = HpccStream.start(0);
        for (long n = 0; n < 4 * words; n++) {
            v = HpccStream.next(v);
            long idx = v & mask;
            if ((idx >>> logLocal) == me) {
                expect[(int) (idx - base)] ^= v;
            }
        }
        long wrong = 0;
        for (int i = 0; i < expect.length; i++) {
            if (local.getAtIndex(ValueLayout.JAVA_LONG, i) != expect[i]) {
                wrong++;
            }
        }
        return wrong;
    }

    /** One thread's slice of the stream, {@link #BATCH} updates at a time. */
    private static final class Updater {
        private final RankEndpoint re;
        private final Window table;
        private final Window scratch;
        private final MemorySegment results;
        private final long resultBase;
        private final long sourceBase;
        private final long mask;
        private final int logLocal;
        private final Variant variant;
        private final int inFlight;
        private final long[] value = new long[BATCH];
        private final long[] guess = new long[BATCH];
        private final int[] rank = new int[BATCH];
        private final long[] offset = new long[BATCH];
        private final boolean[] pending = new boolean[BATCH];

        Updater(RankEndpoint re, Window table, Window scratch, int slot, long mask, int logLocal, Variant variant, int inFlight) {
            this.re = re;
            this.table = table;
            this.scratch = scratch;
            this.results = scratch.local();
            this.resultBase = (long) slot * 2 * BATCH * Long.BYTES;
            this.sourceBase = resultBase + (long) BATCH * Long.BYTES;
            this.mask = mask;
            this.logLocal = logLocal;
            this.variant = variant;
            this.inFlight = inFlight;
        }

        /** Apply updates [from, to) of the stream; returns the remote operations it took. */
        long run(long from, long to) {
            long v = HpccStream.start(from);
            long ops = 0;
            long n = from;
            while (n < to) {
                int k = (int) Math.min(inFlight, to - n);
                for (int i = 0; i < k; i++) {
                    v = HpccStream.next(v);
                    long idx = v & mask;
                    value[i] = v;
                    guess[i] = idx; // a word's initial value is its index
                    rank[i] = (int) (idx >>> logLocal);
                    offset[i] = (idx & ((1L << logLocal) - 1)) * Long.BYTES;
                    pending[i] = true;
                }
                ops += variant == Variant.ATOMIC ? atomicBatch(k) : getPutBatch(k);
                n += k;
            }
            return ops;
        }

        private static final int CAS = 0;
        private static final int GET = 1;
        private static final int PUT = 2;

        private long atomicBatch(int k) {
            long ops = 0;
            int left = k;
            while (left > 0) {
                for (int i = 0; i < k; i++) {
                    if (pending[i]) {
                        post(CAS, i);
                        ops++;
                    }
                }
                flushAll();
                for (int i = 0; i < k; i++) {
                    if (pending[i]) {
                        long found = results.get(ValueLayout.JAVA_LONG, resultBase + (long) i * Long.BYTES);
                        if (found == guess[i]) {
                            pending[i] = false;
                            left--;
                        } else {
                            guess[i] = found;
                        }
                    }
                }
            }
            return ops;
        }

        private long getPutBatch(int k) {
            for (int i = 0; i < k; i++) {
                post(GET, i);
            }
            flushAll();
            for (int i = 0; i < k; i++) {
                long word = results.get(ValueLayout.JAVA_LONG, resultBase + (long) i * Long.BYTES);
                results.set(ValueLayout.JAVA_LONG, sourceBase + (long) i * Long.BYTES, word ^ value[i]);
                post(PUT, i);
            }
            flushAll();
            return 2L * k;
        }

        private int attempt(int op, int i) {
            long result = resultBase + (long) i * Long.BYTES;
            return switch (op) {
                case CAS -> re.compareAndSwap(rank[i], table, offset[i], guess[i], guess[i] ^ value[i], scratch, result);
                case GET -> re.get(rank[i], table, offset[i], scratch, result, Long.BYTES);
                default -> re.put(rank[i], table, offset[i], scratch, sourceBase + (long) i * Long.BYTES, Long.BYTES);
            };
        }

        private void post(int op, int i) {
            long deadline = 0;
            int rc;
            while ((rc = attempt(op, i)) == Endpoint.BACK_PRESSURED) {
                // The batch outgrew the send queue: wait for what is in flight, then retry.
                flushAll();
                if (deadline == 0) {
                    deadline = System.nanoTime() + KernelSupport.TIMEOUT_NANOS;
                } else if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("gups: the send queue stayed full for 60 s");
                }
            }
            if (rc != Endpoint.OK) {
                KernelSupport.check(rc, "gups update of rank " + rank[i]);
            }
        }

        private void flushAll() {
            if (!re.flush()) {
                StringBuilder why = new StringBuilder();
                for (int r = 0; r < re.ranks(); r++) {
                    int st = re.firstErrorStatus(r);
                    if (st != 0) {
                        why.append(why.isEmpty() ? "" : ", ").append("to rank ").append(r).append(": ")
                                .append(WcStatus.name(st));
                    }
                }
                throw new IllegalStateException("gups: an update " + (why.isEmpty()
                        ? "did not complete in 60 s (" + pendingSummary() + ")" : "failed (" + why + ")"));
            }
        }

        private String pendingSummary() {
            StringBuilder b = new StringBuilder();
            for (int r = 0; r < re.ranks(); r++) {
                b.append(r == 0 ? "" : ", ").append(re.pending(r)).append(" pending to rank ").append(r);
            }
            return b.toString();
        }
    }
}
