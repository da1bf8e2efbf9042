package dev.scalep.bench.kernels;

import dev.scalep.endpoints.Collectives;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.endpoints.RankEndpoint;
import dev.scalep.endpoints.Window;
import dev.scalep.endpoints.WorldEndpoints;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The NAS Parallel Benchmarks' Integer Sort (IS) problem over tagged messages and collectives,
 * written with the public endpoint API only ({@link RankEndpoint}, {@link Collectives},
 * {@link Window}).
 *
 * <p><b>Keys.</b> {@code N = 2^totalLog} keys below {@code MAX_KEY = 2^maxKeyLog} from NAS's
 * generator ({@link NasRandom#isKeys}: seed 314159265, a = 5^13, each key the sum of four values
 * scaled by MAX_KEY/4). The sequence is cut into P × T contiguous slices; thread slot {@code t} of
 * rank {@code r} generates slice {@code t·P + r} (jumping the generator to it), so the P threads
 * of slot index {@code t} hold one contiguous part of the sequence, N/T keys.
 *
 * <p><b>Sort.</b> Collectives run among the same slot index of every rank, so each slot index
 * sorts its part across the P ranks, T sorts at once, as NAS's MPI version sorts across
 * processes: count the keys of each of the 2^bucketLog buckets (the top bits of a key),
 * allreduce the counts, give each rank a contiguous run of buckets holding about 1/P of the
 * part's keys, bucket the local keys into a window in rank order, exchange the per-rank counts
 * with an alltoall of 8-byte counts, send the keys with an alltoall by those counts (rendezvous
 * between windows above the eager limit), and counting-sort the received keys over the rank's key
 * range. A timed run sorts {@link #ITERATIONS} times (as NAS ranks its keys ten times), from
 * the first thread's start to the last thread's end; the rate is that many times N keys over it.
 *
 * <p><b>Verification</b> (untimed), per slot index: every rank's keys are in order and inside its
 * key range; the ranks' first and last keys (allgathered) are ordered across ranks (the last key
 * of rank r at most the first of the next rank holding keys); the part's count and two checksums
 * (the sum of the keys and the sum of a 64-bit mix of each) equal those of the generated slices
 * (allreduced). Then every rank adds up the parts' counts and checksums, which must equal N and
 * the checksums of the whole sequence generated in one serial pass (so the jumps of the
 * generator are checked too).
 */
public final class IntegerSort {
    /** Bytes of each slot's collectives scratch (allreduce stages the bucket counts there). */
    static final long SCRATCH = 64 * 1024;
    /** Sorts in one timed run (NAS's iterations). */
    public static final int ITERATIONS = 10;
    /** The endpoint options the kernel opens its world with: room for tagged messages' credits. */
    static final EndpointOptions OPTS = EndpointOptions.DEFAULTS.withDepths(256, 64).withBuffers(1024, 256);

    /** A problem class: {@code 2^totalLog} keys below {@code 2^maxKeyLog}, {@code 2^bucketLog} buckets (NAS's sizes). */
    public enum Size {
        S(16, 11, 9), W(20, 16, 10), A(23, 19, 10), B(25, 21, 10);

        final int totalLog;
        final int maxKeyLog;
        final int bucketLog;

        Size(int totalLog, int maxKeyLog, int bucketLog) {
            this.totalLog = totalLog;
            this.maxKeyLog = maxKeyLog;
            this.bucketLog = bucketLog;
        }

        /** Keys in all. */
        public long keys() {
            return 1L << totalLog;
        }

        /** Parse a class letter (S, W, A or B). */
        public static Size parse(String s) {
            try {
                return valueOf(s.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown class '" + s + "'; use S (2^16 keys), W (2^20), A (2^23) or B (2^25)");
            }
        }

        /** How it prints: class, keys and key range. */
        public String label() {
            return "class " + name() + " (2^" + totalLog + " keys below 2^" + maxKeyLog + ", 2^" + bucketLog + " buckets)";
        }
    }

    private IntegerSort() {
    }

    /** Registered memory of one rank, at most (the window: every slot's scratch, keys to send and room for its whole part). */
    public static long nativeBytes(Size size, int threads) {
        return threads * (SCRATCH + 4096) + 8 * size.keys();
    }

    /** Heap of one rank, at most (its keys, room for the whole part per slot, a histogram per slot). */
    public static long heapBytes(Size size, int threads) {
        return 8 * size.keys() + 4L * threads * (1L << size.maxKeyLog);
    }

    /** Check the problem against the thread count before any work: every slice holds at least one key. */
    public static void checkSize(Size size, int ranks, int threads) {
        if ((long) ranks * threads > size.keys()) {
            throw new IllegalArgumentException("class " + size.name() + " has " + size.keys() + " keys, fewer than the "
                    + (long) ranks * threads + " slices of " + ranks + " ranks x " + threads + " threads");
        }
    }

    /**
     * Run the kernel at sharing level {@code cfg} with {@code threads} threads per rank on problem
     * {@code size}. Every rank calls it; each returns the combined result.
     */
    public static KernelSupport.Result run(World world, Device device, String label, SharingConfig cfg, int threads, Size size)
            throws InterruptedException {
        return run(world, device, label, cfg, threads, size, false);
    }

    /**
     * As {@link #run(World, Device, String, SharingConfig, int, Size)}; with {@code mapped} the
     * messages and the window go through the device's mapping of the other ranks' memory
     * ({@link WorldEndpoints#mapMessages}, {@link WorldEndpoints#mapWindows}), not the level's QPs.
     */
    public static KernelSupport.Result run(World world, Device device, String label, SharingConfig cfg, int threads, Size size,
                                           boolean mapped) throws InterruptedException {
        int p = world.size();
        int me = world.rank();
        checkSize(size, p, threads);
        long n = size.keys();
        int maxKey = 1 << size.maxKeyLog;
        long slices = (long) p * threads;
        long maxSlice = (n + slices - 1) / slices;
        long maxPart = (n + threads - 1) / threads;
        // Per slot: collectives scratch, counts sent and received (P longs each), the allgathered
        // first/last/count (3 P longs), the bucketed keys to send, the keys received.
        long countsAt = SCRATCH;
        long gatherAt = countsAt + 16L * p;
        long sendAt = gatherAt + 24L * p;
        long recvAt = sendAt + align8(4 * maxSlice);
        long slotBytes = recvAt + align8(4 * maxPart);
        long[] serial = serialChecksums(n, maxKey);
        try (WorldEndpoints we = WorldEndpoints.open(world, device, cfg, threads, OPTS)) {
            if (mapped) {
                we.mapWindows(true);
                we.mapMessages();
            }
            Window win = we.allocateWindow(slotBytes * threads);
            Slot[] slot = new Slot[threads];
            for (int t = 0; t < threads; t++) {
                long g = (long) t * p + me;
                long from = n * g / slices;
                long to = n * (g + 1) / slices;
                slot[t] = new Slot(size, p, me, t, win, t * slotBytes, countsAt, gatherAt, sendAt, recvAt, maxPart, from,
                        (int) (to - from));
            }
            KernelSupport.Result result;
            try {
                world.barrier();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                CyclicBarrier start = new CyclicBarrier(threads + 1);
                long[] began = new long[threads];
                long[] done = new long[threads];
                List<Thread> workers = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    workers.add(Thread.ofPlatform().name("sort-" + me + "-" + t).start(() -> {
                        try (RankEndpoint re = we.acquire()) {
                            Slot s = slot[re.index()];
                            Collectives c = new Collectives(re, win, s.base, SCRATCH);
                            start.await();
                            // Then every slot of every rank, progressing while it waits (a thread blocked
                            // elsewhere would stall the messages of the threads sharing its QP).
                            if (!re.barrier(KernelSupport.TIMEOUT_NANOS)) {
                                throw new IllegalStateException("sort: the opening barrier of every thread failed or took 60 s");
                            }
                            began[s.t] = System.nanoTime();
                            for (int i = 0; i < ITERATIONS; i++) {
                                s.sort(c);
                            }
                            done[s.t] = System.nanoTime();
                            s.verify(c);
                            // Every thread keeps progressing until all are done (sharers of a QP move each other's messages).
                            if (!re.barrier(Gups.CLOSING_BARRIER_NANOS)) {
                                throw new IllegalStateException("sort: the threads' closing barrier failed or took "
                                        + Gups.CLOSING_BARRIER_NANOS / 1_000_000_000L + " s");
                            }
                        } catch (Throwable x) {
                            failure.compareAndSet(null, x);
                            start.reset();
                        }
                    }));
                }
                double seconds = KernelSupport.runWorkers("sort", label, threads, start, workers, failure, began, done);
                long wrong = 0;
                String firstBad = null;
                long count = 0;
                long sum = 0;
                long mix = 0;
                long messages = 0;
                for (Slot s : slot) {
                    wrong += s.wrong;
                    if (firstBad == null && s.firstBad != null) {
                        firstBad = "rank " + me + " slot " + s.t + ": " + s.firstBad;
                    }
                    count += s.partTotals[0];
                    sum += s.partTotals[1];
                    mix += s.partTotals[2];
                    messages += s.messages;
                }
                // Only rank 0 compares the whole (every rank holds the same parts' totals).
                if (me == 0 && (count != n || sum != serial[0] || mix != serial[1])) {
                    wrong++;
                    if (firstBad == null) {
                        firstBad = "the parts hold " + count + " keys (checksums " + sum + ", " + mix + ") where the sequence has "
                                + n + " (" + serial[0] + ", " + serial[1] + ")";
                    }
                }
                KernelSupport.Combined c = KernelSupport.combine(world, seconds, wrong, messages, firstBad);
                String detail = c.mismatches() == 0 ? n + " keys sorted" : c.mismatches() + " problems; first: " + c.firstBad();
                result = new KernelSupport.Result("sort", label, p, threads, c.seconds(), ITERATIONS * n / c.seconds() / 1e6, "Mkeys/s",
                        c.ops() / c.seconds(), c.mismatches() == 0, detail, null);
            } catch (RuntimeException | Error | InterruptedException e) {
                try {
                    world.barrier();
                    win.close();
                } catch (RuntimeException closing) {
                    e.addSuppressed(closing);
                }
                throw e;
            }
            world.barrier(); // no rank closes its window while another may still read it
            win.close();
            return result;
        }
    }

    private static long align8(long b) {
        return (b + 7) & ~7L;
    }

    /** A 64-bit mix of a key (splitmix64's finaliser), summed into the second checksum. */
    static long mix(int key) {
        long z = key * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** The sum and mixed sum of the whole sequence of {@code n} keys, generated in one pass. */
    static long[] serialChecksums(long n, int maxKey) {
        int[] chunk = new int[(int) Math.min(n, 1 << 16)];
        long sum = 0;
        long mix = 0;
        for (long at = 0; at < n; at += chunk.length) {
            int[] c = n - at < chunk.length ? new int[(int) (n - at)] : chunk;
            NasRandom.isKeys(at, maxKey, c);
            for (int k : c) {
                sum += k;
                mix += mix(k);
            }
        }
        return new long[]{sum, mix};
    }

    /** One thread slot's slice, buffers and outcome. */
    static final class Slot {
        final int t;
        final long base;
        private final int p;
        private final int me;
        private final int shift;
        private final int buckets;
        private final int maxKey;
        private final Window win;
        private final MemorySegment mem;
        private final long countsAt;
        private final long gatherAt;
        private final long sendAt;
        private final long recvAt;
        private final long capacity;
        private final int[] keys;
        private final long[] generated = new long[6];
        private final long[] bucketCount;
        private final long[] total;
        private final long[] bucketPtr;
        private final int[] firstBucket;
        private final long[] sendCount;
        private final long[] sendDispl;
        private final long[] recvCount;
        private final long[] recvDispl;
        private final long[] eight;
        private final long[] eightDispl;
        private final int[] hist;
        private final int[] sorted;
        private int received;
        private int outside;
        private int lo;
        private int hi;
        long messages;
        long wrong;
        String firstBad;
        /** The part's count, sum and mixed sum after the sort (the same on every rank of the slot index). */
        final long[] partTotals = new long[3];

        Slot(Size size, int p, int me, int t, Window win, long base, long countsAt, long gatherAt, long sendAt, long recvAt,
             long capacity, long from, int length) {
            this.t = t;
            this.p = p;
            this.me = me;
            this.base = base;
            this.win = win;
            this.mem = win.local();
            this.countsAt = base + countsAt;
            this.gatherAt = base + gatherAt;
            this.sendAt = base + sendAt;
            this.recvAt = base + recvAt;
            this.capacity = capacity;
            this.maxKey = 1 << size.maxKeyLog;
            this.shift = size.maxKeyLog - size.bucketLog;
            this.buckets = 1 << size.bucketLog;
            this.keys = new int[length];
            NasRandom.isKeys(from, maxKey, keys);
            long sum = 0;
            long mixed = 0;
            for (int k : keys) {
                sum += k;
                mixed += mix(k);
            }
            generated[3] = length;
            generated[4] = sum;
            generated[5] = mixed;
            this.bucketCount = new long[buckets];
            this.total = new long[buckets];
            this.bucketPtr = new long[buckets];
            this.firstBucket = new int[p + 1];
            this.sendCount = new long[p];
            this.sendDispl = new long[p];
            this.recvCount = new long[p];
            this.recvDispl = new long[p];
            this.eight = new long[p];
            this.eightDispl = new long[p];
            for (int r = 0; r < p; r++) {
                eight[r] = 8;
                eightDispl[r] = 8L * r;
            }
            this.hist = new int[maxKey];
            this.sorted = new int[(int) capacity]; // the most one rank can receive: the whole part
        }

        /** The timed part: bucket, exchange, sort locally. */
        void sort(Collectives c) {
            Arrays.fill(bucketCount, 0);
            for (int k : keys) {
                bucketCount[k >>> shift]++;
            }
            System.arraycopy(bucketCount, 0, total, 0, buckets);
            c.allreduce(total, 0, buckets, Collectives.ReduceOp.SUM);
            long all = 0;
            for (long b : total) {
                all += b;
            }
            // Contiguous runs of buckets, rank j's ending once the running total reaches (j+1)/P of the keys.
            long acc = 0;
            int j = 0;
            firstBucket[0] = 0;
            for (int b = 0; b < buckets; b++) {
                acc += total[b];
                while (j < p - 1 && acc >= (j + 1) * all / p) {
                    firstBucket[++j] = b + 1;
                }
            }
            while (j < p) {
                firstBucket[++j] = buckets;
            }
            long ptr = 0;
            for (int r = 0; r < p; r++) {
                sendDispl[r] = 4 * ptr;
                long n = 0;
                for (int b = firstBucket[r]; b < firstBucket[r + 1]; b++) {
                    bucketPtr[b] = ptr + n;
                    n += bucketCount[b];
                }
                sendCount[r] = 4 * n;
                ptr += n;
            }
            MemorySegment m = mem;
            long s0 = sendAt;
            for (int k : keys) {
                int b = k >>> shift;
                m.set(ValueLayout.JAVA_INT_UNALIGNED, s0 + 4 * bucketPtr[b]++, k);
            }
            for (int r = 0; r < p; r++) {
                m.set(ValueLayout.JAVA_LONG_UNALIGNED, countsAt + 8L * r, sendCount[r]);
            }
            c.alltoall(win, countsAt, eight, eightDispl, win, countsAt + 8L * p, eight, eightDispl);
            long in = 0;
            for (int r = 0; r < p; r++) {
                recvCount[r] = m.get(ValueLayout.JAVA_LONG_UNALIGNED, countsAt + 8L * (p + r));
                recvDispl[r] = in;
                in += recvCount[r];
            }
            if (in > 4 * capacity) {
                throw new IllegalStateException("sort: rank " + me + " slot " + t + " would receive " + in / 4
                        + " keys, more than the " + capacity + " of the whole part");
            }
            c.alltoall(win, sendAt, sendCount, sendDispl, win, recvAt, recvCount, recvDispl);
            messages += p > 1 ? 2L * (p - 1) + 32 - Integer.numberOfLeadingZeros(p - 1) : 0;
            received = (int) (in / 4);
            lo = firstBucket[me] << shift;
            hi = firstBucket[me + 1] << shift;
            // Counting sort over [lo, hi): histogram, prefix sums, then each key to its place.
            int range = hi - lo;
            Arrays.fill(hist, 0, range, 0);
            long r0 = recvAt;
            for (int i = 0; i < received; i++) {
                int k = m.get(ValueLayout.JAVA_INT_UNALIGNED, r0 + 4L * i) - lo;
                if (k >= 0 && k < range) {
                    hist[k]++;
                }
            }
            int at = 0;
            for (int k = 0; k < range; k++) {
                int h = hist[k];
                hist[k] = at;
                at += h;
            }
            for (int i = 0; i < received; i++) {
                int k = m.get(ValueLayout.JAVA_INT_UNALIGNED, r0 + 4L * i);
                int off = k - lo;
                if (off >= 0 && off < range) {
                    sorted[hist[off]++] = k;
                }
            }
            outside = received - at; // keys outside the rank's range: reported by the verification
        }

        /** Untimed: order, ranges, boundaries, counts and checksums of this slot index's part. */
        void verify(Collectives c) {
            if (outside > 0) {
                bad(outside, outside + " received keys outside the rank's range [" + lo + ", " + hi + ")");
            }
            int held = received - outside;
            long sum = 0;
            long mixed = 0;
            for (int i = 0; i < held; i++) {
                int k = sorted[i];
                sum += k;
                mixed += mix(k);
                if (i > 0 && sorted[i - 1] > k) {
                    bad(1, "key " + i + " (" + k + ") is below the one before it (" + sorted[i - 1] + ")");
                }
            }
            MemorySegment m = mem;
            long mine = gatherAt + 24L * me;
            m.set(ValueLayout.JAVA_LONG_UNALIGNED, mine, held);
            m.set(ValueLayout.JAVA_LONG_UNALIGNED, mine + 8, held > 0 ? sorted[0] : -1);
            m.set(ValueLayout.JAVA_LONG_UNALIGNED, mine + 16, held > 0 ? sorted[held - 1] : -1);
            c.allgather(win, gatherAt, 24);
            long last = -1;
            int lastRank = -1;
            for (int r = 0; r < p; r++) {
                long at = gatherAt + 24L * r;
                if (m.get(ValueLayout.JAVA_LONG_UNALIGNED, at) > 0) {
                    long first = m.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 8);
                    if (me == 0 && last > first) {
                        bad(1, "rank " + lastRank + "'s last key " + last + " is above rank " + r + "'s first key " + first);
                    }
                    last = m.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 16);
                    lastRank = r;
                }
            }
            generated[0] = held;
            generated[1] = sum;
            generated[2] = mixed;
            c.allreduce(generated, 0, 6, Collectives.ReduceOp.SUM);
            System.arraycopy(generated, 0, partTotals, 0, 3);
            if (me == 0 && (generated[0] != generated[3] || generated[1] != generated[4] || generated[2] != generated[5])) {
                bad(1, "the part holds " + generated[0] + " keys after the sort (checksums " + generated[1] + ", " + generated[2]
                        + ") where " + generated[3] + " were generated (" + generated[4] + ", " + generated[5] + ")");
            }
        }

        private void bad(long n, String why) {
            wrong += n;
            if (firstBad == null) {
                firstBad = why;
            }
        }
    }
}
