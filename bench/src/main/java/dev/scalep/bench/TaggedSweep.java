package dev.scalep.bench;

import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.endpoints.MessageStatus;
import dev.scalep.endpoints.Messages;
import dev.scalep.endpoints.RankEndpoint;
import dev.scalep.endpoints.WorldEndpoints;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.counters.Counters;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.agrona.concurrent.IdleStrategy;

/**
 * The sweep's {@code --op tag}: tagged messages through the public {@link Messages} API at a sharing
 * level. Each thread slot streams {@code n} eager messages of one tag to the slot of the same index
 * on the receiving rank, which keeps {@link #POSTED} receives posted and posts one again as each
 * completes; a message carries its index in the stream (sizes of at least 8 bytes) and the receiver
 * checks it arrived in order (non-overtaking), and how long it is. On two ranks rank 0 sends and
 * rank 1 receives, and a round ends for a sender thread when its receiver's zero-byte answer
 * arrives (every message was matched); on one rank each slot sends to itself (the loopback) and
 * receives in the same loop. Rounds are timed as {@link SweepRunner}'s: from the first sender
 * thread's start to the last one's end, after untimed warm-up rounds until the JIT is quiet and the
 * rate steady ({@link SteadyWarmup}, decided by rank 0, agreed by every rank); the sending rank's
 * counters (every endpoint, send path and CQ of the rank, credit messages included) are read
 * before each round and after its last sender thread ended it, as {@link SweepRunner} reads its
 * sender's. After the last round every slot of every rank meets in {@link RankEndpoint#barrier()}
 * (the last credits settle), and the ranks compare the messages received with those sent.
 */
final class TaggedSweep {
    /** The tag of the stream; the answer that ends a round on two ranks uses the next. */
    static final int TAG = 0x5EE9;
    /** Receives each receiving slot keeps posted. */
    static final int POSTED = 32;
    private static final long TIMEOUT_NANOS = TimeUnit.MINUTES.toNanos(5);
    private static final long STUCK_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** What a round is, as the ranks agree on it before it opens ({@link #agree}). */
    private static final int WARM = 0;
    private static final int TIMED = 1;
    private static final int STOP = 2;
    private static final int FAILED = 3;
    /** A round's message count that tells the worker threads to leave. */
    private static final long NO_ROUND = -1;

    private TaggedSweep() {
    }

    /**
     * The kind of the next round: rank 0's {@code mine} (it decides warm-up and repeats), or
     * {@link #STOP} when any rank says {@link #FAILED}. Every rank calls it once per round, so the
     * ranks' collectives stay paired whatever happened in the round.
     */
    private static int agree(World world, int mine) {
        byte[][] all = world.allgather(ByteBuffer.allocate(4).putInt(mine).array());
        for (byte[] b : all) {
            if (ByteBuffer.wrap(b).getInt() == FAILED) {
                return STOP;
            }
        }
        return ByteBuffer.wrap(all[0]).getInt();
    }

    /** Open a round (or the stop) to the worker threads: false, with the failure recorded, when the barrier broke. */
    private static boolean open(CyclicBarrier start, AtomicReference<Throwable> failure) throws InterruptedException {
        try {
            start.await(5, TimeUnit.MINUTES);
            return true;
        } catch (BrokenBarrierException | TimeoutException e) {
            failure.compareAndSet(null, e);
            return false;
        }
    }

    static List<Measurement> run(World world, Device device, SweepPoint p, Workload w, int repeats, long warmup,
                                 Consumer<Measurement> each) throws InterruptedException {
        SharingConfig cfg = SharingConfig.parse(p.sharing());
        EndpointOptions opts = SweepRunner.options(p, device.capabilities(), w);
        int threads = p.threads();
        int me = world.rank();
        int ranks = world.size();
        int maxRounds = repeats + (warmup > 0 ? SteadyWarmup.MAX_ROUNDS : 0);
        boolean sends = me == 0;
        long stride = (w.size() + 63L) & ~63L;
        List<Measurement> out = new ArrayList<>();
        int point = SweepEvents.nextPoint(); // names this configuration's rounds in a JFR recording
        try (WorldEndpoints we = WorldEndpoints.open(world, device, cfg, threads, opts)) {
            ResourceUsage resources = we.resources();
            MemorySegment mem = we.allocate(threads * (POSTED + 1) * stride);
            long[][] begin = new long[maxRounds][threads];
            long[][] finish = new long[maxRounds][threads];
            // messages per thread of each round, set by this rank's coordinator before it opens the round; NO_ROUND ends
            long[] plan = new long[maxRounds + 1];
            CyclicBarrier start = new CyclicBarrier(threads + 1);
            AtomicInteger arrived = new AtomicInteger();
            AtomicInteger ended = new AtomicInteger();
            AtomicLongArray received = new AtomicLongArray(threads);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            world.barrier(); // every rank's endpoints are up
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int idx = t;
                workers.add(Thread.ofPlatform().name("tagged-" + me + "-" + t).start(() -> {
                    try (RankEndpoint re = we.acquire()) {
                        Stream s = new Stream(re, re.messages(), ranks - 1 - me, ranks, mem.asSlice(idx * (POSTED + 1) * stride,
                                (POSTED + 1) * stride), stride, w.size(), received, idx, we.waitIdle());
                        for (int r = 0; ; r++) {
                            start.await(5, TimeUnit.MINUTES); // the coordinator set plan[r] before its await
                            long n = plan[r];
                            if (n == NO_ROUND) {
                                break;
                            }
                            int round = r;
                            begin[r][idx] = System.nanoTime();
                            SweepEvents.round(point, round, idx, () -> s.round(n, sends, me == ranks - 1));
                            finish[r][idx] = System.nanoTime();
                            // keep progressing until every thread of the rank ended the round: at levels whose
                            // threads share a QP, the others need it
                            arrived.incrementAndGet();
                            do { // at least once: the coordinator may end the round before this thread looks
                                s.m.progress();
                                Thread.yield();
                            } while (ended.get() <= r && failure.get() == null);
                        }
                        if (!re.barrier()) {
                            throw new IllegalStateException("the closing barrier of every slot failed or took 60 s");
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        start.reset();
                    }
                }));
            }
            long perThread = 0;
            try {
                // Every rank's coordinator runs the same rounds: rank 0 decides whether another warm-up round
                // runs (SteadyWarmup, as SweepRunner's), the ranks agree on each round before it opens, and before
                // a timed one every rank's compilers go idle and the ranks meet: with two fixed warm-up rounds a receiving
                // rank still compiled its receive path in the first timed round, and the first level of a sweep
                // was measured at half its later rate. A failure on any rank stops every rank at the next round.
                SteadyWarmup steady = warmup > 0 ? new SteadyWarmup() : null;
                boolean warming = steady != null;
                int rep = 0;
                for (int r = 0; ; r++) {
                    int want = failure.get() != null ? FAILED : rep == repeats ? STOP : warming ? WARM : TIMED;
                    int kind = agree(world, want); // only rank 0's warming and rep decide; the others follow
                    if (kind == STOP && failure.get() != null) {
                        break; // the finally breaks the start barrier for the threads still waiting at it
                    }
                    if (kind == TIMED) { // every rank's compilers idle before the round opens on any of them
                        Warmup.awaitJitIdle(); // a late compile would share a core with the round
                        world.barrier();
                    }
                    try { // whatever fails here, every rank still agrees on the next round
                        plan[r] = kind == WARM ? warmup : kind == TIMED ? p.messages() : NO_ROUND;
                        // the sender threads wait at the start barrier: its counters are still
                        Map<String, Long> before = Counters.ENABLED && sends && kind == TIMED ? we.counterTotals() : null;
                        if (!open(start, failure)) {
                            continue; // FAILED at the next round
                        }
                        if (kind == STOP) {
                            break;
                        }
                        perThread += plan[r];
                        long deadline = System.nanoTime() + TIMEOUT_NANOS;
                        while (arrived.get() < threads * (r + 1) && failure.get() == null) {
                            if (System.nanoTime() > deadline) {
                                failure.compareAndSet(null, new IllegalStateException("a round did not end within 5 minutes"));
                            }
                            Thread.sleep(0, 100_000);
                        }
                        // every thread's round ended (a sender's when its receiver's answer arrived); they only progress now
                        CounterDelta moved = before == null ? null : CounterDelta.between(before, we.counterTotals());
                        ended.set(r + 1);
                        if (failure.get() != null) {
                            continue;
                        }
                        long first = Long.MAX_VALUE;
                        long last = Long.MIN_VALUE;
                        for (int t = 0; t < threads; t++) {
                            first = Math.min(first, begin[r][t]);
                            last = Math.max(last, finish[r][t]);
                        }
                        if (kind == WARM) {
                            if (sends) { // rank 0 decides; the other ranks follow what agree() tells them
                                warming = steady.another(warmup * threads, last - first);
                            }
                            continue;
                        }
                        rep++;
                        if (sends) {
                            Measurement m = new Measurement(p, rep, (last - first) / 1e9, p.messages() * threads, resources, "",
                                    p.unsignaled(), ranks, w.size(), moved, steady == null ? 0 : steady.rounds(), 0,
                                    0); // no control loop, and no round measured again (the ranks agree on each round)
                            out.add(m);
                            SweepEvents.row(point, r, m);
                            each.accept(m);
                        }
                    } catch (RuntimeException e) {
                        failure.compareAndSet(null, e);
                    }
                }
            } finally {
                ended.set(Integer.MAX_VALUE);
                start.reset(); // a worker still waiting for a round that will not open leaves (its failure is not the first)
                for (Thread th : workers) {
                    th.join(); // every wait in them is bounded; a receiving rank's threads may still be at work here
                }
            }
            // every rank learns what every rank received, so that all of them fail alike
            long got = 0;
            for (int t = 0; t < threads; t++) {
                got += received.get(t);
            }
            String error = failure.get() == null ? "" : String.valueOf(failure.get());
            byte[][] all = world.allgather(ByteBuffer.allocate(8).putLong(failure.get() == null ? got : -1).array());
            long expected = perThread * threads;
            long atReceiver = ByteBuffer.wrap(all[ranks - 1]).getLong();
            if (!error.isEmpty()) {
                throw new IllegalStateException("sweep point " + p.label() + " x" + threads + " failed: " + error,
                        failure.get());
            }
            if (atReceiver < 0) {
                throw new IllegalStateException("sweep point " + p.label() + " x" + threads + " failed at rank " + (ranks - 1));
            }
            if (atReceiver != expected) {
                throw new IllegalStateException("sweep point " + p.label() + " x" + threads + ": rank " + (ranks - 1)
                        + " received " + atReceiver + " tagged messages of the " + expected + " sent");
            }
            return out;
        }
    }

    /** One slot's stream: its sends (index in the first 8 bytes) and its ring of posted receives. */
    private static final class Stream {
        final Messages m;
        private final RankEndpoint re;
        private final int peer;
        private final boolean answer;
        private final MemorySegment mem;
        private final long stride;
        private final int size;
        private final AtomicLongArray received;
        private final int idx;
        private final int[] ring = new int[POSTED];
        /** The world's wait policy: every idle look yields where the node is oversubscribed. */
        private final IdleStrategy idleStrategy;
        private final MessageStatus status = new MessageStatus();
        private long sent;
        private long taken;

        Stream(RankEndpoint re, Messages m, int peer, int ranks, MemorySegment mem, long stride, int size, AtomicLongArray received, int idx,
               IdleStrategy idleStrategy) {
            if (m.eagerLimit() < size) {
                throw new IllegalStateException("--op tag: " + size + " bytes are above the eager limit of "
                        + m.eagerLimit());
            }
            this.re = re;
            this.m = m;
            this.peer = peer;
            this.answer = ranks > 1;
            this.mem = mem;
            this.stride = stride;
            this.size = size;
            this.received = received;
            this.idx = idx;
            this.idleStrategy = idleStrategy;
        }

        /** Send and/or receive n messages; on two ranks the receiver answers at the end and the sender waits for it. */
        void round(long n, boolean send, boolean receive) {
            long sendEnd = sent + n;
            long takeEnd = taken + n;
            long posted = taken; // receives posted up to this index (ring slot = index mod POSTED)
            long idle = 0;
            long stuckSince = 0;
            while ((send && sent < sendEnd) || (receive && taken < takeEnd)) {
                boolean moved = false;
                while (receive && posted < takeEnd && posted - taken < POSTED) {
                    int q = m.recv(peer, TAG, Messages.ALL_BITS, mem, (1 + posted % POSTED) * stride, size);
                    if (q == Messages.BACK_PRESSURED) {
                        break;
                    }
                    check(q, "recv");
                    ring[(int) (posted % POSTED)] = q;
                    posted++;
                    moved = true;
                }
                if (send && sent < sendEnd) {
                    if (size >= 8) {
                        mem.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, sent);
                    }
                    int q = m.send(peer, TAG, mem, 0, size);
                    if (q != Messages.BACK_PRESSURED) {
                        check(q, "send");
                        if (q != Messages.COMPLETED) {
                            complete(q, "send");
                        }
                        sent++;
                        moved = true;
                    }
                }
                if (receive && taken < posted && m.test(ring[(int) (taken % POSTED)], status)) {
                    taken(status);
                    moved = true;
                }
                // a look that moved nothing already progressed (send and test do); the idle strategy decides
                // whether to give the processor up: the peer rank, a sharer or the NIC agent may need it
                idleStrategy.idle(moved ? 1 : 0);
                if (moved) {
                    idle = 0;
                    stuckSince = 0;
                } else if (++idle % 4096 == 0) {
                    m.progress();
                    long now = System.nanoTime();
                    if (stuckSince == 0) {
                        stuckSince = now;
                    } else if (now - stuckSince > STUCK_NANOS) {
                        throw new IllegalStateException("tagged stream to or from rank " + peer + " made no progress in 60 s ("
                                + sent + " sent, " + taken + " received; the endpoint's first error status: "
                                + re.firstErrorStatus(peer) + ")");
                    }
                }
            }
            if (!answer) {
                return;
            }
            if (receive) { // every message matched: tell the sender
                int q;
                while ((q = m.send(peer, TAG + 1, mem, 0, 0)) == Messages.BACK_PRESSURED) {
                    m.progress();
                }
                check(q, "answer");
                if (q != Messages.COMPLETED) {
                    complete(q, "answer");
                }
                // an eager answer is only staged: post it now, for this thread may next wait at the start
                // barrier without progressing, and the sender waits for the answer to end its round
                m.progress();
            } else {
                int q;
                while ((q = m.recv(peer, TAG + 1, Messages.ALL_BITS, mem, 0, 0)) == Messages.BACK_PRESSURED) {
                    m.progress();
                }
                check(q, "recv of the answer");
                complete(q, "the receiver's answer");
            }
        }

        private void taken(MessageStatus st) {
            if (st.error() != MessageStatus.OK || st.length() != size) {
                throw new IllegalStateException("tagged message " + taken + " from rank " + peer + ": " + st);
            }
            if (size >= 8) {
                long k = mem.get(ValueLayout.JAVA_LONG_UNALIGNED, (1 + taken % POSTED) * stride);
                if (k != taken) {
                    throw new IllegalStateException("tagged message " + taken + " from rank " + peer
                            + " carries index " + k + ": out of order or lost");
                }
            }
            taken++;
            received.lazySet(idx, taken);
        }

        private void complete(int q, String what) {
            if (!m.waitFor(q, status)) {
                throw new IllegalStateException(what + " with rank " + peer + " did not complete in 60 s");
            }
            if (status.error() != MessageStatus.OK) {
                throw new IllegalStateException(what + " with rank " + peer + ": " + status);
            }
        }

        private void check(int q, String what) {
            if (q < 0) {
                throw new IllegalStateException("tagged " + what + " to rank " + peer + " refused: errno " + -q);
            }
        }
    }
}
