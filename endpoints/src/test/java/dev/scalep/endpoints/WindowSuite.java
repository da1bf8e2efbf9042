package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.WcStatus;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.HashSet;
import java.util.Set;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The behavioural suite of windows and one-sided operations, run by one rank of a world with
 * {@code threads} threads: in one JVM by {@link WindowTest} (ranks are threads, {@code LocalWorld})
 * and across processes by {@link WindowMain} under {@code mpirun}. Every check throws
 * {@link AssertionError} with what differed; a rank's threads meet at a barrier whose action is the
 * world's barrier, so "every thread of every rank got here" is one call.
 */
final class WindowSuite {
    static final EndpointOptions OPTS = EndpointOptions.DEFAULTS.withDepths(64, 16).withBuffers(1024, 64);
    /** Bytes each (source rank, thread) pair owns in a window. */
    static final int CHUNK = 3000;

    private final World world;
    private final WorldEndpoints eps;
    private final int threads;
    private final CyclicBarrier rankBarrier;
    /** The first failure of a thread of the scenario running, seen by the others' wait loops. */
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    WindowSuite(World world, WorldEndpoints eps, int threads) {
        this.world = world;
        this.eps = eps;
        this.threads = threads;
        this.rankBarrier = new CyclicBarrier(threads, world::barrier);
    }

    /** Every scenario on a fresh {@link WorldEndpoints} of this rank; returns the names of what ran. */
    static List<String> runAll(World world, Device device, String level, int threads) throws Exception {
        List<String> ran = new ArrayList<>();
        boolean mapped = mapped(level, world.rank());
        level = level.replaceFirst("\\+mapped.*$", "");
        try (WorldEndpoints eps = WorldEndpoints.open(world, device, SharingConfig.parse(level), threads, OPTS)) {
            eps.mapWindows(mapped);
            WindowSuite s = new WindowSuite(world, eps, threads);
            s.windowsAreMappedWhereAsked(mapped);
            s.putsAndGetsOfEveryThreadReachEveryRank();
            ran.add("put-get");
            s.longTransfersAreSplitAndArriveWhole();
            ran.add("split");
            s.notifiedPutsArriveWithTheirBytes();
            ran.add("notify");
            s.rangesAreCheckedAgainstTheTargetRanksPart();
            ran.add("ranges");
            s.closeWaitsForOperationsInFlightAndFailsWhileAnEndpointIsBusy();
            ran.add("close");
            s.aReleaseWaitsForItsOperationsSoTheWindowCloses();
            ran.add("release");
            s.exposedMemoryWorksAndUnreachableMemoryIsRefused(device);
            ran.add("expose");
            // on a device without RDMA atomics (sim:efa) the same calls run through the emulation
            s.concurrentAtomicsOnOneWordAreExact(device.capabilities().atomicCap().supported() ? 200 : 60);
            ran.add("atomics");
            s.atomicsCheckAlignmentRangeAndState();
            ran.add("atomic-errors");
            s.theBarrierCompletesEveryThreadsOperationsFirst();
            ran.add("barrier");
        }
        addsFarBeyondTheReceiveDepthAddUpWithoutReceiverNotReady(world, device, level, threads, mapped);
        ran.add("add-flood");
        return ran;
    }

    /**
     * A level with {@code +mapped} runs the suite with {@link WorldEndpoints#mapWindows} on every
     * rank; {@code +mapped:even} on the even ranks only, so that mapped operations (CPU stores and
     * atomic instructions) and operations through the endpoints (the NIC's, or the emulation's)
     * meet on the same words.
     */
    static boolean mapped(String level, int rank) {
        return level.endsWith("+mapped") || level.endsWith("+mapped:even") && rank % 2 == 0;
    }

    /** The precondition of the mapped levels: the simulator maps every rank's part, and nothing unless asked. */
    void windowsAreMappedWhereAsked(boolean mapped) {
        Window w = eps.allocateWindow(64);
        for (int r = 0; r < world.size(); r++) {
            check(w.mapped(r) == mapped, "rank " + world.rank() + ": rank " + r + "'s part mapped " + w.mapped(r) + ", asked " + mapped);
        }
        w.close();
    }

    /**
     * On endpoints whose QPs fail a send that finds no receive (rnr_retry 0: RNR_RETRY_EXC_ERR
     * instead of a retry), thread 0 of every rank issues 40 times the receive depth of
     * non-fetching adds of 1 to one word of rank 0, never flushing in between (a call that
     * returns BACK_PRESSURED is progressed and retried), while every other thread waits in the
     * endpoints' barrier, which progresses. On sim:efa the adds are emulated requests into the
     * target's receives: the emulation's credits must keep them (and their replies) within the
     * receives posted, or a send fails. The word must count every add exactly.
     */
    static void addsFarBeyondTheReceiveDepthAddUpWithoutReceiverNotReady(World world, Device device, String level,
                                                                          int threads, boolean mapped) throws Exception {
        ConnectionOptions c = OPTS.connection();
        EndpointOptions noRnr = OPTS.withConnection(c.withTimers(c.minRnrTimer(), c.timeout(), c.retryCount(), 0));
        int p = world.size();
        long n = 40L * noRnr.recvDepth();
        try (WorldEndpoints eps = WorldEndpoints.open(world, device, SharingConfig.parse(level), threads, noRnr)) {
            eps.mapWindows(mapped);
            Window word = eps.allocateWindow(64);
            WindowSuite s = new WindowSuite(world, eps, threads);
            s.inThreads((t, ep) -> {
                if (t == 0) {
                    for (long i = 0; i < n; i++) {
                        int rc;
                        while ((rc = ep.add(0, word, 0, 1)) == Endpoint.BACK_PRESSURED) {
                            ep.progress();
                        }
                        check(rc == Endpoint.OK, "add " + i + " outcome " + Endpoint.outcomeName(rc));
                    }
                }
                check(ep.barrier(), "rank " + world.rank() + " thread " + t + ": the barrier after the adds (first error "
                        + WcStatus.name(ep.firstErrorStatus(0)) + ")");
            });
            if (world.rank() == 0) {
                long got = (long) VH.getVolatile(word.local(), 0L);
                check(got == n * p, "rank 0's word counts " + got + " adds of " + n * p);
            }
            world.barrier();
            word.close();
        }
    }

    /**
     * {@link RankEndpoint#barrier()} among every thread of every rank: each round, every thread puts
     * the round number into its slot on every rank and adds 1 to a counter on rank 0, neither
     * flushed, then enters the barrier; after it every slot of every rank shows the round and rank
     * 0's counter counts every thread's adds (on sim:efa the adds are emulated, so the barrier must
     * have kept progressing while it waited). A second barrier ends the round before the next
     * overwrites the slots.
     */
    void theBarrierCompletesEveryThreadsOperationsFirst() throws Exception {
        int p = world.size();
        int me = world.rank();
        int rounds = 4;
        try (Window slots = eps.allocateWindow(8L * p * threads + 8L * threads);
             Window counter = eps.allocateWindow(64)) {
            inThreads((t, ep) -> {
                long src = 8L * p * threads + 8L * t;
                for (long round = 1; round <= rounds; round++) {
                    slots.local().set(ValueLayout.JAVA_LONG, src, round);
                    for (int r = 0; r < p; r++) {
                        int rc;
                        while ((rc = ep.put(r, slots, 8L * (me * threads + t), slots, src, 8)) == Endpoint.BACK_PRESSURED) {
                            ep.progress();
                        }
                        check(rc == Endpoint.OK, "put outcome " + Endpoint.outcomeName(rc));
                    }
                    int rc;
                    while ((rc = ep.add(0, counter, 0, 1)) == Endpoint.BACK_PRESSURED) {
                        ep.progress();
                    }
                    check(rc == Endpoint.OK, "add outcome " + Endpoint.outcomeName(rc));
                    check(ep.barrier(), "barrier of round " + round);
                    for (int i = 0; i < p * threads; i++) {
                        long got = (long) VH.getVolatile(slots.local(), 8L * i);
                        check(got == round, "rank " + me + " thread " + t + " round " + round + ": slot of rank "
                                + i / threads + " thread " + i % threads + " holds " + got);
                    }
                    if (me == 0) {
                        long c = (long) VH.getVolatile(counter.local(), 0L);
                        check(c == round * p * threads, "round " + round + ": rank 0's counter " + c + ", expected "
                                + round * p * threads);
                    }
                    for (Endpoint e : ep.distinct()) {
                        check(e.outstanding() == 0 && e.staged() == 0, "endpoint quiet after the barrier");
                    }
                    check(ep.barrier(), "second barrier of round " + round);
                }
            });
        }
    }

    private static final VarHandle VH = ValueLayout.JAVA_LONG.varHandle();

    /** Run {@code body(t)} in {@code threads} threads, each with an acquired {@link RankEndpoint}; rethrow the first failure. */
    void inThreads(ThreadBody body) throws Exception {
        failure.set(null);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            ts.add(Thread.ofPlatform().name("rank" + world.rank() + "-t" + t).start(() -> {
                try (RankEndpoint ep = eps.acquire()) {
                    body.run(me, ep);
                } catch (Throwable e) {
                    if (failure.compareAndSet(null, e)) { // said at once: the rank's other threads may never end
                        System.err.println("rank " + world.rank() + " " + Thread.currentThread().getName() + " failed:");
                        e.printStackTrace();
                    }
                    rankBarrier.reset(); // wake the rank's other threads instead of leaving them waiting
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError("rank " + world.rank() + ": " + failure.get(), failure.get());
        }
    }

    interface ThreadBody {
        void run(int thread, RankEndpoint ep) throws Exception;
    }

    /** Every thread of every rank at this point (the rank's threads, then the world). */
    void sync() throws InterruptedException, BrokenBarrierException, TimeoutException {
        rankBarrier.await(60, TimeUnit.SECONDS);
    }

    static byte pattern(int srcRank, int thread, int dstRank, int i) {
        return (byte) (srcRank * 31 + thread * 7 + dstRank * 13 + i);
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    /**
     * Thread t of rank r puts CHUNK bytes into every rank's window (its own included, through its
     * loopback) at slot (r, t), flushes, and after everyone's puts, every rank finds the bytes of
     * every (rank, thread) in place; then each thread gets its own slot back from every rank into
     * another window and compares.
     */
    void putsAndGetsOfEveryThreadReachEveryRank() throws Exception {
        int p = world.size();
        int me = world.rank();
        long size = (long) p * threads * CHUNK;
        try (Window target = eps.allocateWindow(size);
             Window source = eps.allocateWindow((long) threads * p * CHUNK);
             Window back = eps.allocateWindow((long) threads * p * CHUNK)) {
            check(target.size() == size && target.size((me + 1) % p) == size, "window sizes");
            check(target.id() != source.id() && source.id() != back.id(), "distinct window ids");
            inThreads((t, ep) -> {
                for (int r = 0; r < p; r++) {
                    long src = ((long) t * p + r) * CHUNK;
                    for (int i = 0; i < CHUNK; i++) {
                        source.local().set(ValueLayout.JAVA_BYTE, src + i, pattern(me, t, r, i));
                    }
                    int rc;
                    while ((rc = ep.put(r, target, ((long) me * threads + t) * CHUNK, source, src, CHUNK))
                            == Endpoint.BACK_PRESSURED) {
                        Thread.onSpinWait();
                    }
                    check(rc == Endpoint.OK, "put outcome " + Endpoint.outcomeName(rc));
                }
                check(ep.flush(), "flush after puts");
                for (int r = 0; r < p; r++) {
                    check(ep.pending(r) == 0, "nothing pending to rank " + r + " after flush: " + ep.pending(r));
                }
                sync();
                for (int r = 0; r < p; r++) {
                    long at = ((long) r * threads + t) * CHUNK;
                    for (int i = 0; i < CHUNK; i++) {
                        byte got = target.local().get(ValueLayout.JAVA_BYTE, at + i);
                        check(got == pattern(r, t, me, i), "rank " + me + " byte " + i + " from rank " + r + " thread " + t
                                + ": " + got + ", expected " + pattern(r, t, me, i));
                    }
                }
                sync();
                for (int r = 0; r < p; r++) {
                    long dst = ((long) t * p + r) * CHUNK;
                    int rc;
                    while ((rc = ep.get(r, target, ((long) me * threads + t) * CHUNK, back, dst, CHUNK))
                            == Endpoint.BACK_PRESSURED) {
                        Thread.onSpinWait();
                    }
                    check(rc == Endpoint.OK, "get outcome " + Endpoint.outcomeName(rc));
                    check(ep.flush(r), "flush(" + r + ") after get");
                    for (int i = 0; i < CHUNK; i++) {
                        byte got = back.local().get(ValueLayout.JAVA_BYTE, dst + i);
                        check(got == pattern(me, t, r, i), "get from rank " + r + " byte " + i + ": " + got);
                    }
                }
                sync();
            });
        }
    }

    /**
     * With a 1000-byte largest request, a 10,007-byte put and get travel in 11 requests each and
     * arrive whole: to the next rank and to this rank itself.
     */
    void longTransfersAreSplitAndArriveWhole() throws Exception {
        int p = world.size();
        int me = world.rank();
        int len = 10_007;
        int saved = eps.maxChunk;
        eps.maxChunk = 1000;
        // slot of (source rank, thread, kind): kind 0 from the previous rank, kind 1 from itself
        try (Window w = eps.allocateWindow((long) p * threads * len * 2); Window mine = eps.allocateWindow((long) threads * len * 2)) {
            inThreads((t, ep) -> {
                int next = (me + 1) % p;
                for (int i = 0; i < len; i++) {
                    mine.local().set(ValueLayout.JAVA_BYTE, (long) t * len + i, pattern(me, t, next, i));
                }
                long toNext = (((long) me * threads + t) * 2) * len;
                long toSelf = toNext + len;
                check(ep.put(next, w, toNext, mine, (long) t * len, len) == Endpoint.OK, "long put");
                check(ep.put(me, w, toSelf, mine, (long) t * len, len) == Endpoint.OK, "long put to itself");
                check(ep.flush(next) && ep.flush(me), "flush long puts");
                sync();
                int prev = (me + p - 1) % p;
                for (int i = 0; i < len; i++) {
                    check(w.local().get(ValueLayout.JAVA_BYTE, (((long) prev * threads + t) * 2) * len + i)
                            == pattern(prev, t, me, i), "split put byte " + i);
                    check(w.local().get(ValueLayout.JAVA_BYTE, toSelf + i) == pattern(me, t, next, i),
                            "split put to itself byte " + i);
                }
                long back = (long) (threads + t) * len;
                for (int r : new int[]{next, me}) {
                    check(ep.get(r, w, r == me ? toSelf : toNext, mine, back, len) == Endpoint.OK, "long get from " + r);
                    check(ep.flush(r), "flush long get");
                    for (int i = 0; i < len; i++) {
                        check(mine.local().get(ValueLayout.JAVA_BYTE, back + i) == pattern(me, t, next, i),
                                "split get from rank " + r + " byte " + i);
                    }
                    mine.local().asSlice(back, len).fill((byte) 0);
                }
                sync();
            });
        } finally {
            eps.maxChunk = saved;
        }
    }

    /**
     * Each thread of each rank sends {@code N} notified puts to every rank, itself included (value =
     * source rank, thread and sequence); the target's threads together see each value exactly once,
     * and the bytes of a put are in place when its notification is seen.
     */
    void notifiedPutsArriveWithTheirBytes() throws Exception {
        int p = world.size();
        int me = world.rank();
        int n = 40;
        int expected = p * threads * n;
        AtomicInteger seen = new AtomicInteger();
        boolean[] got = new boolean[p * threads * n];
        try (Window w = eps.allocateWindow((long) p * threads * n * 8); Window src = eps.allocateWindow((long) threads * n * 8)) {
            inThreads((t, ep) -> {
                Notification note = new Notification();
                for (int i = 0; i < n; i++) {
                    int value = (me * threads + t) * n + i;
                    src.local().set(ValueLayout.JAVA_LONG, ((long) t * n + i) * 8, 0x5ca1e000_00000000L | value);
                    for (int r = 0; r < p; r++) {
                        int rc;
                        while ((rc = ep.putNotify(r, w, (long) value * 8, src, ((long) t * n + i) * 8, 8, value))
                                == Endpoint.BACK_PRESSURED) {
                            drainNotes(ep, note, w, got, seen);
                        }
                        check(rc == Endpoint.OK, "putNotify outcome " + Endpoint.outcomeName(rc));
                    }
                    drainNotes(ep, note, w, got, seen);
                }
                check(ep.flush(), "flush notified puts");
                long spins = 0;
                while (seen.get() < expected) {
                    drainNotes(ep, note, w, got, seen);
                    if (++spins % 1024 == 0) {
                        Thread.yield();
                    }
                    check(spins < 200_000_000L, "notifications: " + seen.get() + " of " + expected);
                    check(failure.get() == null, "another thread of this rank failed");
                }
                sync();
            });
            for (int s = 0; s < p; s++) {
                for (int i = 0; i < threads * n; i++) {
                    check(got[s * threads * n + i], "notification " + (s * threads * n + i) + " seen: "
                            + got[s * threads * n + i]);
                }
            }
        }
    }

    /**
     * Three or more ranks in a cycle of flushes: rank r sends more notified puts to rank r+1 than
     * it has receives ({@code OPTS}' receive depth) without polling, then waits in
     * {@code flush(r + 1)}, so each rank waits on its endpoint to the next while its endpoint to
     * the one before holds that rank's puts. A flush gives back the receives of every endpoint of
     * its thread, so every flush returns true well inside its bound and every notification then
     * arrives; a flush that progressed only the endpoint it waits for left all of them waiting.
     * One thread per rank; returns the notifications this rank saw.
     */
    static int flushesInACycleOfRanksDoNotWaitForEachOther(World world, Device device, String level) throws Exception {
        int p = world.size();
        int me = world.rank();
        int next = (me + 1) % p;
        int n = 2 * OPTS.recvDepth() + 3;
        try (WorldEndpoints eps = WorldEndpoints.open(world, device, SharingConfig.parse(level), 1, OPTS);
             Window w = eps.allocateWindow(8L * n); Window src = eps.allocateWindow(8L * n)) {
            try (RankEndpoint ep = eps.acquire()) {
                for (int i = 0; i < n; i++) {
                    src.local().set(ValueLayout.JAVA_LONG, 8L * i, 0x5ca1e000_00000000L | i);
                    int rc;
                    while ((rc = ep.putNotify(next, w, 8L * i, src, 8L * i, 8, i)) == Endpoint.BACK_PRESSURED) {
                        check(ep.flush(next, 20_000_000_000L), "rank " + me + ": flush to rank " + next + " through back-pressure");
                    }
                    check(rc == Endpoint.OK, "putNotify outcome " + Endpoint.outcomeName(rc));
                }
                check(ep.flush(next, 20_000_000_000L), "rank " + me + ": flush to rank " + next + " in a cycle of flushes ("
                        + ep.pending(next) + " of " + n + " notified puts not complete)");
                Notification note = new Notification();
                boolean[] got = new boolean[n];
                AtomicInteger seen = new AtomicInteger();
                for (long spins = 0; seen.get() < n; spins++) {
                    check(spins < 200_000_000L, "rank " + me + ": notifications " + seen.get() + " of " + n);
                    drainNotes(ep, note, w, got, seen);
                }
                check(ep.barrier(), "rank " + me + ": barrier after the cycle");
                return seen.get();
            }
        }
    }

    private static void drainNotes(RankEndpoint ep, Notification note, Window w, boolean[] got, AtomicInteger seen) {
        while (ep.pollNotification(note)) {
            int v = note.value();
            check(note.hasValue() && note.length() == 8, "notification " + note);
            long word = w.local().get(ValueLayout.JAVA_LONG, (long) v * 8);
            check(word == (0x5ca1e000_00000000L | v), "bytes of notified put " + v + ": " + Long.toHexString(word));
            synchronized (got) {
                check(!got[v], "notification " + v + " twice");
                got[v] = true;
            }
            seen.incrementAndGet();
        }
    }

    /**
     * Ranks expose parts of different sizes (rank r: 4096 + 64 r bytes); an operation past the
     * target's part throws naming rank, window, offset, length and size, and nothing is posted
     * (the endpoint has nothing pending); so does a negative offset, a rank outside the world, the
     * same mistakes on this rank's own part, and a closed window.
     */
    void rangesAreCheckedAgainstTheTargetRanksPart() throws Exception {
        int p = world.size();
        int me = world.rank();
        MemorySegment mem = eps.allocate(4096 + 64L * me);
        Window w = eps.exposeWindow(mem);
        Window local = eps.allocateWindow(8192);
        inThreads((t, ep) -> {
            int r = (me + 1) % p;
            long size = 4096 + 64L * r;
            check(w.size(r) == size, "size of rank " + r + "'s part: " + w.size(r));
            IllegalArgumentException e = expect(IllegalArgumentException.class,
                    () -> ep.put(r, w, size - 8, local, 0, 16));
            String m = e.getMessage();
            check(m.contains("rank " + r) && m.contains("window " + w.id()) && m.contains("offset " + (size - 8))
                    && m.contains("length 16") && m.contains(size + " bytes"), "message: " + m);
            expect(IllegalArgumentException.class, () -> ep.get(r, w, -1, local, 0, 8));
            expect(IllegalArgumentException.class, () -> ep.put(r, w, 0, local, 8190, 8));
            long mySize = 4096 + 64L * me;
            e = expect(IllegalArgumentException.class, () -> ep.get(me, w, mySize - 8, local, 0, 16));
            check(e.getMessage().contains("rank " + me) && e.getMessage().contains(mySize + " bytes"), e.getMessage());
            expect(IllegalArgumentException.class, () -> ep.put(p, w, 0, local, 0, 8));
            expect(IllegalArgumentException.class, () -> ep.put(-1, w, 0, local, 0, 8));
            check(ep.pending(r) == 0 && ep.pending(me) == 0, "nothing posted by refused calls: " + ep.pending(r));
            check(ep.put(r, w, size - 16, local, 0, 16) == Endpoint.OK, "the last 16 bytes are in range");
            check(ep.put(me, w, mySize - 16, local, 0, 16) == Endpoint.OK, "the last 16 bytes of its own part");
            check(ep.flush(r) && ep.flush(me), "flush in-range puts");
            sync();
        });
        w.close();
        check(!w.isOpen(), "closed");
        inThreads((t, ep) -> {
            int r = (me + 1) % p;
            IllegalStateException e = expect(IllegalStateException.class, () -> ep.put(r, w, 0, local, 0, 8));
            check(e.getMessage().contains("window " + w.id() + " is closed"), e.getMessage());
            expect(IllegalStateException.class, () -> ep.get(me, w, 0, local, 0, 8));
            check(ep.pending(r) == 0 && ep.pending(me) == 0, "nothing posted on a closed window");
        });
        local.close();
    }

    /**
     * Thread 0 leaves a put in flight (staged, not flushed) while rank's closing thread closes the
     * window: the close fails on every rank naming the busy endpoint, the window stays registered
     * and refuses new operations; once thread 0 flushes, close succeeds. Where every rank's put goes
     * through a mapped window it is complete at return, nothing is in flight, and the close succeeds.
     */
    void closeWaitsForOperationsInFlightAndFailsWhileAnEndpointIsBusy() throws Exception {
        int p = world.size();
        int me = world.rank();
        Window w = eps.allocateWindow(4096);
        Window src = eps.allocateWindow(4096);
        CyclicBarrier pair = new CyclicBarrier(2);
        AtomicReference<Throwable> closeFailure = new AtomicReference<>();
        Thread busy = Thread.ofPlatform().name("rank" + me + "-busy").start(() -> {
            try (RankEndpoint ep = eps.acquire()) {
                int r = (me + 1) % p;
                check(ep.put(r, w, 0, src, 0, 8) == Endpoint.OK, "put");
                pair.await(60, TimeUnit.SECONDS); // put staged, not flushed
                pair.await(60, TimeUnit.SECONDS); // the close failed
                check(ep.flush(), "flush");
                pair.await(60, TimeUnit.SECONDS);
            } catch (Throwable e) {
                closeFailure.compareAndSet(null, e);
                pair.reset();
            }
        });
        pair.await(60, TimeUnit.SECONDS);
        boolean allMapped = true;
        for (byte[] b : world.allgather(new byte[]{(byte) (w.mapped((me + 1) % p) ? 1 : 0)})) {
            allMapped &= b[0] == 1;
        }
        if (allMapped) {
            w.close(200_000_000L);
            check(!w.isOpen(), "closed");
        } else {
            IllegalStateException e = expect(IllegalStateException.class, () -> {
                w.close(200_000_000L);
                return null;
            });
            check(e.getMessage().contains("not closed") && e.getMessage().contains("endpoint 0")
                    && e.getMessage().contains("flush"), e.getMessage());
            check(!w.isOpen(), "a failed close still refuses new operations");
        }
        pair.await(60, TimeUnit.SECONDS);
        pair.await(60, TimeUnit.SECONDS);
        busy.join();
        if (closeFailure.get() != null) {
            throw new AssertionError(closeFailure.get());
        }
        w.close();
        w.close(); // idempotent
        src.close();
    }

    /**
     * Every thread puts into every rank (its own included) and adds 1 to a word of every rank
     * (not on sim:efa, whose adds are emulated and are served by a slot of the target rank that
     * may already be released), flushes nothing, and releases its endpoint
     * (as a thread that leaves its loop by an exception does): the release waits for them, so the
     * window closes at once on every rank, and before it closes every rank finds every thread's
     * bytes and adds in place.
     */
    void aReleaseWaitsForItsOperationsSoTheWindowCloses() throws Exception {
        int p = world.size();
        int me = world.rank();
        boolean nicAtomics = eps.atomics();
        Window w = eps.allocateWindow(8L * p * threads + 8);
        Window src = eps.allocateWindow(8L * threads);
        inThreads((t, ep) -> {
            src.local().set(ValueLayout.JAVA_LONG, 8L * t, 1000L * me + t + 1);
            for (int r = 0; r < p; r++) {
                int rc;
                while ((rc = ep.put(r, w, 8L * (me * threads + t), src, 8L * t, 8)) == Endpoint.BACK_PRESSURED) {
                    ep.progress();
                }
                check(rc == Endpoint.OK, "put outcome " + Endpoint.outcomeName(rc));
                // Emulated atomics (no NIC atomics) are served in the progress of a slot of the target
                // rank, and a released slot no longer progresses: one thread's release may not wait for
                // a sibling that has already gone. So the emulation is left to the other scenarios here.
                if (nicAtomics) {
                    while ((rc = ep.add(r, w, 8L * p * threads, 1)) == Endpoint.BACK_PRESSURED) {
                        ep.progress();
                    }
                    check(rc == Endpoint.OK, "add outcome " + Endpoint.outcomeName(rc));
                }
            }
            // not flushed: the release waits for them (at levels whose threads share a QP another
            // thread's progress may complete some of them first)
        });
        world.barrier();
        for (int r = 0; r < p; r++) {
            for (int t = 0; t < threads; t++) {
                long got = (long) VH.getVolatile(w.local(), 8L * (r * threads + t));
                check(got == 1000L * r + t + 1, "rank " + me + ": the put of rank " + r + " thread " + t + " holds " + got);
            }
        }
        long adds = (long) VH.getVolatile(w.local(), 8L * p * threads);
        long want = nicAtomics ? (long) p * threads : 0;
        check(adds == want, "rank " + me + ": " + adds + " adds arrived of " + want);
        w.close(1_000_000_000L);
        src.close(1_000_000_000L);
    }

    /**
     * A window over {@link WorldEndpoints#allocate} memory works like an allocated one; memory the
     * simulator's other processes cannot map is refused on every rank with how to get such memory.
     */
    void exposedMemoryWorksAndUnreachableMemoryIsRefused(Device device) throws Exception {
        int p = world.size();
        int me = world.rank();
        MemorySegment mem = eps.allocate(1024);
        try (Window w = eps.exposeWindow(mem); Window src = eps.allocateWindow(1024)) {
            inThreads((t, ep) -> {
                int r = (me + 1) % p;
                src.local().set(ValueLayout.JAVA_LONG, t * 8L, 1000L * me + t);
                check(ep.put(r, w, t * 8L, src, t * 8L, 8) == Endpoint.OK, "put");
                check(ep.flush(r), "flush");
                sync();
                int prev = (me + p - 1) % p;
                check(mem.get(ValueLayout.JAVA_LONG, t * 8L) == 1000L * prev + t, "exposed memory holds the put");
                sync();
            });
        }
        if (device.name().startsWith("sim:")) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment plain = a.allocate(4096, 4096);
                IllegalArgumentException e = expect(IllegalArgumentException.class, () -> eps.exposeWindow(plain));
                check(e.getMessage().contains("WorldEndpoints.allocate") && e.getMessage().contains("rank " + me),
                        e.getMessage());
            }
        }
    }

    /**
     * Every thread of every rank, rank 0's own threads included (through their loopback, next to
     * the other ranks' NIC atomics on the same words), hammers four words of rank 0's window
     * {@code n} times each:
     * fetch-and-add 1 on word 0 (the fetched values of all of them together are exactly
     * 0 to total - 1, each once), a non-fetching add of 3 on word 1, a compare-and-swap increment loop
     * on word 2, and a swap of a unique value into word 3 (the previous values and the final one
     * are exactly the initial 0 and every swapped value, each once: a chain, nothing lost).
     */
    void concurrentAtomicsOnOneWordAreExact(int n) throws Exception {
        int p = world.size();
        int me = world.rank();
        int workers = p * threads;
        long[][] fetched = new long[threads][n];
        long[][] swapped = new long[threads][n];
        try (Window w = eps.allocateWindow(64); Window res = eps.allocateWindow(64L * threads);
             Window flags = eps.allocateWindow(8L * p * threads); Window view = eps.allocateWindow(viewBytes(p))) {
            inThreads((t, ep) -> {
                long r0 = 64L * t;
                for (int i = 0; i < n; i++) {
                    int rc;
                    while ((rc = ep.fetchAdd(0, w, 0, 1, res, r0)) == Endpoint.BACK_PRESSURED) {
                        Thread.onSpinWait();
                    }
                    check(rc == Endpoint.OK, "fetchAdd " + Endpoint.outcomeName(rc));
                    check(ep.flush(0), "flush fetchAdd");
                    fetched[t][i] = res.local().get(ValueLayout.JAVA_LONG, r0);
                    while ((rc = ep.add(0, w, 8, 3)) == Endpoint.BACK_PRESSURED) {
                        Thread.onSpinWait();
                    }
                    check(rc == Endpoint.OK, "add " + Endpoint.outcomeName(rc));
                    long seen = 0;
                    for (;;) {
                        while ((rc = ep.compareAndSwap(0, w, 16, seen, seen + 1, res, r0 + 8)) == Endpoint.BACK_PRESSURED) {
                            Thread.onSpinWait();
                        }
                        check(rc == Endpoint.OK, "compareAndSwap " + Endpoint.outcomeName(rc));
                        check(ep.flush(0), "flush compareAndSwap");
                        long was = res.local().get(ValueLayout.JAVA_LONG, r0 + 8);
                        if (was == seen) {
                            break;
                        }
                        seen = was;
                    }
                    long mine = ((long) me << 40) | ((long) t << 20) | (i + 1);
                    check(ep.swap(0, w, 24, mine, res, r0 + 16) == Endpoint.OK, "swap");
                    swapped[t][i] = res.local().get(ValueLayout.JAVA_LONG, r0 + 16);
                }
                check(ep.flush(), "flush atomics");
                quiesce(t, ep, flags, view);
                sync();
            });
            byte[] mine = new byte[threads * n * 16];
            ByteBuffer b = ByteBuffer.wrap(mine);
            for (int t = 0; t < threads; t++) {
                for (int i = 0; i < n; i++) {
                    b.putLong(fetched[t][i]).putLong(swapped[t][i]);
                }
            }
            byte[][] all = world.allgather(mine);
            long total = (long) workers * n;
            long lastWord = w.local().get(ValueLayout.JAVA_LONG, 24);
            if (me == 0) {
                check(w.local().get(ValueLayout.JAVA_LONG, 0) == total, "fetch-and-add word: "
                        + w.local().get(ValueLayout.JAVA_LONG, 0) + ", expected " + total);
                check(w.local().get(ValueLayout.JAVA_LONG, 8) == 3 * total, "add word: "
                        + w.local().get(ValueLayout.JAVA_LONG, 8) + ", expected " + 3 * total);
                check(w.local().get(ValueLayout.JAVA_LONG, 16) == total, "compare-and-swap word: "
                        + w.local().get(ValueLayout.JAVA_LONG, 16) + ", expected " + total);
                BitSet seenFetch = new BitSet();
                Set<Long> previous = new HashSet<>();
                Set<Long> values = new HashSet<>();
                for (int r = 0; r < p; r++) {
                    ByteBuffer in = ByteBuffer.wrap(all[r]);
                    for (int t = 0; t < threads; t++) {
                        for (int i = 0; i < n; i++) {
                            long f = in.getLong();
                            check(f >= 0 && f < total && !seenFetch.get((int) f), "fetched " + f + " twice or out of 0.." + total);
                            seenFetch.set((int) f);
                            check(previous.add(in.getLong()), "a swap's previous value seen twice");
                            values.add(((long) r << 40) | ((long) t << 20) | (i + 1));
                        }
                    }
                }
                check(seenFetch.cardinality() == total, "fetched values: " + seenFetch.cardinality() + " of " + total);
                previous.add(lastWord);
                values.add(0L);
                check(previous.equals(values), "swap chain: previous values and the final word are not exactly 0 and every swapped value");
            }
        }
    }

    private long viewBytes(int p) {
        return threads * (8L + 8L * p * threads);
    }

    /**
     * Keep serving until every thread of every rank is done with its atomics: on a device without
     * RDMA atomics (EFA) the target's threads apply them as they progress, and a reply may reach
     * any thread sharing the initiator's QP, so none may stop (wait in a barrier) while another
     * still has one in flight. Each thread, once its own flush returned (every reply taken), puts a
     * 1 into its flag on rank 0 and gets all the flags back, progressing, until all are 1; puts and
     * gets need nothing of the target's threads. Bounded by a count of rounds, not by time.
     */
    void quiesce(int t, RankEndpoint ep, Window flags, Window view) throws Exception {
        int p = world.size();
        int me = world.rank();
        int all = p * threads;
        long base = t * (8L + 8L * all);
        view.local().set(ValueLayout.JAVA_LONG, base, 1L);
        int rc;
        while ((rc = ep.put(0, flags, 8L * (me * threads + t), view, base, 8)) == Endpoint.BACK_PRESSURED) {
            ep.progress();
        }
        check(rc == Endpoint.OK && ep.flush(0), "quiesce put " + Endpoint.outcomeName(rc));
        for (long round = 0; ; round++) {
            check(round < 10_000_000L, "quiesce: not every thread of every rank finished its atomics");
            while ((rc = ep.get(0, flags, 0, view, base + 8, 8L * all)) == Endpoint.BACK_PRESSURED) {
                ep.progress();
            }
            check(rc == Endpoint.OK && ep.flush(0), "quiesce get " + Endpoint.outcomeName(rc));
            int set = 0;
            for (int i = 0; i < all; i++) {
                set += (int) view.local().get(ValueLayout.JAVA_LONG, base + 8 + 8L * i);
            }
            if (set == all) {
                return;
            }
            ep.progress();
            if ((round & 63) == 63) {
                Thread.yield();
            }
        }
    }

    /** A misaligned word, a word past the part and a closed window are refused at the call; nothing is posted. */
    void atomicsCheckAlignmentRangeAndState() throws Exception {
        int p = world.size();
        int me = world.rank();
        Window w = eps.allocateWindow(64);
        try (Window res = eps.allocateWindow(64)) {
            inThreads((t, ep) -> {
                int r = (me + 1) % p;
                IllegalArgumentException e = expect(IllegalArgumentException.class, () -> ep.fetchAdd(r, w, 4, 1, res, 0));
                check(e.getMessage().contains("not 8-byte aligned") && e.getMessage().contains("rank " + r), e.getMessage());
                expect(IllegalArgumentException.class, () -> ep.compareAndSwap(r, w, 3, 0, 1, res, 0));
                expect(IllegalArgumentException.class, () -> ep.add(r, w, 60, 1));
                e = expect(IllegalArgumentException.class, () -> ep.add(r, w, 64, 1));
                check(e.getMessage().contains("offset 64 length 8") && e.getMessage().contains("64 bytes"), e.getMessage());
                expect(IllegalArgumentException.class, () -> ep.fetchAdd(r, w, 0, 1, res, 60));
                e = expect(IllegalArgumentException.class, () -> ep.compareAndSwap(me, w, 12, 0, 1, res, 0));
                check(e.getMessage().contains("not 8-byte aligned") && e.getMessage().contains("rank " + me), e.getMessage());
                expect(IllegalArgumentException.class, () -> ep.add(me, w, 64, 1));
                check(ep.pending(r) == 0 && ep.pending(me) == 0, "nothing posted");
                sync();
            });
            w.close();
            inThreads((t, ep) -> {
                int r = (me + 1) % p;
                expect(IllegalStateException.class, () -> ep.add(r, w, 0, 1));
                expect(IllegalStateException.class, () -> ep.fetchAdd(r, w, 0, 1, res, 0));
                expect(IllegalStateException.class, () -> ep.add(me, w, 0, 1));
                check(ep.pending(r) == 0 && ep.pending(me) == 0, "nothing posted on a closed window");
            });
        }
    }

    /**
     * On a device without RDMA atomics (EFA) whose receive slots cannot hold an emulation message,
     * every atomic is refused at the call, saying why.
     */
    void atomicsAreRefusedWithoutRoomForTheEmulation() throws Exception {
        int p = world.size();
        int me = world.rank();
        try (Window w = eps.allocateWindow(64)) {
            inThreads((t, ep) -> {
                int r = (me + 1) % p;
                UnsupportedOperationException e = expect(UnsupportedOperationException.class, () -> ep.add(r, w, 0, 1));
                check(e.getMessage().contains("no RDMA atomics") && e.getMessage().contains("receive slots of 48 bytes"),
                        e.getMessage());
                expect(UnsupportedOperationException.class, () -> ep.fetchAdd(r, w, 0, 1, w, 8));
                expect(UnsupportedOperationException.class, () -> ep.compareAndSwap(r, w, 0, 0, 1, w, 8));
                expect(UnsupportedOperationException.class, () -> ep.swap(me, w, 0, 1, w, 8));
                check(ep.pending(r) == 0, "nothing posted");
            });
            world.barrier();
        }
    }

    interface Call {
        Object call() throws Exception;
    }

    static <T extends Throwable> T expect(Class<T> type, Call c) {
        try {
            c.call();
        } catch (Throwable e) {
            if (type.isInstance(e)) {
                return type.cast(e);
            }
            throw new AssertionError("expected " + type.getSimpleName() + ", got " + e, e);
        }
        throw new AssertionError("expected " + type.getSimpleName() + ", nothing thrown");
    }
}
