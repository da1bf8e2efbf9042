package dev.scalep.endpoints;

import dev.scalep.policies.Category;
import dev.scalep.policies.SharingConfig;
import dev.scalep.threading.SendPath;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.counters.Counters;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every category and axes sweeps, on sim:mlx5 and sim:efa, with 1, 2, 4 and 16 threads: RDMA
 * writes land intact in the right peer buffer, signaled completions reach their owner once, and
 * device resources return to the baseline after close. {@code -Dscalep.ep.devices=rxe0/rxe1} runs
 * the matrix on real verbs instead (one manager on each device; the rxe VM of
 * {@code verbs/src/test/rxe/run} does, with {@code -Dscalep.ep.threads=2}).
 */
class EndpointBehaviourTest {
    static final String[] LEVELS = {
            "mpi-everywhere", "2x-dynamic", "dynamic", "shared-dynamic", "static", "mpi-threads",
            "static,qp=shared:combining,cq=shared", "dynamic,cq=shared", "static,qp=2way:locked",
            "static,qp=2way:combining,cq=per-qp,buf=shared"};

    /** Thread counts of the matrix; {@code -Dscalep.ep.threads=N} runs one count only. */
    static final int[] THREADS = Integer.getInteger("scalep.ep.threads", 0) > 0
            ? new int[]{Integer.getInteger("scalep.ep.threads")} : new int[]{1, 2, 4, 16};

    static Stream<Arguments> matrix() {
        List<Arguments> out = new ArrayList<>();
        for (String dev : System.getProperty("scalep.ep.devices", "sim:mlx5,sim:efa").split(",")) {
            for (String level : LEVELS) {
                for (int n : THREADS) {
                    if (fits(level, n)) { // x-way levels run at multiples of x (the divisibility rule)
                        out.add(Arguments.of(dev, level, n));
                    }
                }
            }
        }
        return out.stream();
    }

    static boolean fits(String level, int threads) {
        try {
            SharingConfig.parse(level).checkThreads(threads);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** The device of a parameter naming one device, or a pair {@code dev/peer} (one manager on each). */
    static Device device(String devNames) {
        return Devices.byName(devNames.split("/")[0]);
    }

    /** The peer's device of such a parameter: the second of a pair, else the same device. */
    static Device peerDevice(String devNames) {
        String[] names = devNames.split("/");
        return Devices.byName(names[names.length - 1]);
    }

    @Test
    void xWaySharingThatDoesNotDivideTheThreadsIsRefusedBeforeAnyVerbsCall() {
        for (String dev : new String[]{"sim:mlx5", "sim:efa"}) {
            Device d = Devices.byName(dev);
            ResourceUsage before = d.resources();
            for (String level : new String[]{"qp=3way", "qp=5way", "mpi-everywhere,ctx=3way,pd=3way"}) {
                IllegalArgumentException e = Assertions.assertThrows(IllegalArgumentException.class,
                        () -> EndpointManager.open(d, SharingConfig.parse(level), 4, EndpointOptions.DEFAULTS));
                Assertions.assertTrue(e.getMessage().contains("with 4 threads")
                        && e.getMessage().contains("2way, 4way"), e.getMessage());
            }
            Assertions.assertEquals(before, d.resources(), "nothing was allocated");
        }
    }

    @ParameterizedTest(name = "{0} {1} threads={2}")
    @MethodSource("matrix")
    @Timeout(120)
    void writesLandAndCompleteOnce(String devNames, String level, int threads) throws Exception {
        Device dev = device(devNames);
        Device peerDev = peerDevice(devNames);
        ResourceUsage base = dev.resources();
        ResourceUsage peerBase = peerDev.resources();
        SharingConfig cfg = SharingConfig.parse(level);
        EndpointOptions opts = EndpointOptions.DEFAULTS.withDepths(64, 8).withBuffers(1024, 64).withFeatures(4, 4, 16);
        int perThread = threads >= 16 ? 200 : 500;
        try (EndpointManager a = EndpointManager.open(dev, cfg, threads, opts);
             EndpointManager b = EndpointManager.open(peerDev, cfg, threads, opts)) {
            a.connect(b);
            AtomicReference<Throwable> fail = new AtomicReference<>();
            // Every thread holds its endpoint until all have acquired and finished: a thread that released
            // early would hand its endpoint to a late starter, and two threads would write as one.
            CyclicBarrier acquired = new CyclicBarrier(threads);
            CyclicBarrier done = new CyclicBarrier(threads);
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                ts.add(Thread.ofPlatform().name("ep-" + t).start(() -> {
                    try {
                        Endpoint e = a.acquire();
                        acquired.await(20, TimeUnit.SECONDS);
                        int i = e.index();
                        for (int k = 0; k < 64; k++) {
                            e.sendBuffer().set(ValueLayout.JAVA_BYTE, k, (byte) (i * 7 + k));
                        }
                        Completion c = new Completion();
                        long seen = 0;
                        long lastId = -1;
                        BitSet ids = new BitSet();
                        for (int m = 0; m < perThread; m++) {
                            int off = (m % 8) * 8;
                            int rc;
                            while ((rc = e.write(m, off, 8, (m % 16) * 8)) == SendPath.EAGAIN) {
                                while (e.poll(c)) {
                                    if (!c.ok() || ids.get((int) c.wrId())) {
                                        throw new AssertionError("error or duplicate completion " + c);
                                    }
                                    ids.set((int) c.wrId());
                                    seen++;
                                }
                            }
                            assertEquals(0, rc);
                        }
                        assertTrue(e.drain(20_000_000_000L), "drain");
                        assertEquals(0, e.outstanding());
                        done.await(20, TimeUnit.SECONDS);
                        a.release(e);
                    } catch (Throwable x) {
                        fail.compareAndSet(null, x);
                        acquired.reset();
                        done.reset();
                    }
                }));
            }
            for (Thread t : ts) {
                t.join();
            }
            assertNull(fail.get(), () -> String.valueOf(fail.get()));
            for (int t = 0; t < threads; t++) {
                Endpoint target = b.endpoint(t);
                for (int k = 0; k < 128; k++) {
                    int src = (k % 64);
                    assertEquals((byte) (t * 7 + src), target.targetBuffer().get(ValueLayout.JAVA_BYTE, k),
                            "peer " + t + " byte " + k);
                }
            }
        }
        assertEquals(base, dev.resources(), "resources back to baseline");
        assertEquals(peerBase, peerDev.resources(), "peer resources back to baseline");
    }

    static Stream<Arguments> oneThreadLevels() {
        List<Arguments> out = new ArrayList<>();
        for (String dev : System.getProperty("scalep.ep.devices", "sim:mlx5,sim:efa").split(",")) {
            for (String level : LEVELS) {
                if (fits(level, 1)) {
                    out.add(Arguments.of(dev, level));
                }
            }
        }
        return out.stream();
    }

    /**
     * A post that finds no credits progresses the CQ on the endpoint's behalf and tries once more,
     * so a thread that writes faster than it polls keeps posting while its completions fit in its
     * ring. On the simulated devices, which complete a write while it is posted: with a send queue
     * of 16 and postlists of 8, none of 32 writes nobody polls for is back-pressured or left
     * staged after its postlist filled (before, the third postlist was kept back-pressured until
     * the next write), and the endpoint counts no back-pressured post. On real verbs, whose
     * completions come later, a back-pressured write retried without polling goes through once
     * they have come. Then each signaled write completes once when the owner polls, in order where
     * the device keeps order.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("oneThreadLevels")
    @Timeout(120)
    void aPostWithoutCreditsProgressesTheCqAndTriesAgain(String devNames, String level) throws Exception {
        Device dev = device(devNames);
        Device peerDev = peerDevice(devNames);
        boolean atPost = dev.name().startsWith("sim:"); // completes a write while it is posted
        int depth = 16;
        int postlist = 8;
        EndpointOptions opts = EndpointOptions.DEFAULTS.withFeatures(postlist, 4, 0).withDepths(depth, 4)
                .withBuffers(1024, 64);
        try (EndpointManager a = EndpointManager.open(dev, SharingConfig.parse(level), 1, opts);
             EndpointManager b = EndpointManager.open(peerDev, SharingConfig.parse(level), 1, opts)) {
            a.connect(b);
            Endpoint e = a.acquire();
            long writes = 2L * depth;
            for (long id = 0; id < writes; id++) {
                int rc;
                for (long tries = 0; (rc = e.write(id, 0, 8, 0)) == Endpoint.BACK_PRESSURED; tries++) {
                    assertFalse(atPost, "write " + id + " back-pressured on " + dev.name());
                    assertTrue(tries < POLLS, "write " + id + " stayed back-pressured though retried " + POLLS + " times");
                }
                assertEquals(Endpoint.OK, rc, "write " + id + " " + Endpoint.outcomeName(rc));
                if (atPost && (id + 1) % postlist == 0) {
                    assertEquals(0, e.staged(), "after write " + id + " its postlist went out");
                }
            }
            if (atPost && Counters.ENABLED) {
                assertEquals(0L, a.counterTotals().get("ep.back-pressured"), "no post stayed back-pressured");
            }
            long q = a.signalEvery(); // 4, or 1 where the device signals every request (EFA)
            Completion c = new Completion();
            BitSet seen = new BitSet();
            long got = 0;
            for (long polls = 0; got < writes / q && polls < POLLS; polls++) {
                while (e.poll(c)) {
                    assertTrue(c.ok(), () -> "completion " + c);
                    assertTrue(c.wrId() < writes && !seen.get((int) c.wrId()), "completion of write " + c.wrId());
                    if (dev.capabilities().inOrder()) {
                        assertEquals(q * got + q - 1, c.wrId(), "every " + q + "th write signaled, completed in order");
                    }
                    seen.set((int) c.wrId());
                    got++;
                }
            }
            assertEquals(writes / q, got, "the signaled writes of the " + writes);
            assertTrue(e.drain(20_000_000_000L), "drain");
            assertEquals(0, e.outstanding());
            a.release(e);
        }
    }

    /**
     * A request accepted ({@code OK}) while the send queue is full stays staged, and the owner's
     * polling posts it once completions made room, with no other request or flush behind it (a
     * ping-pong waits for its peer by polling alone: before, a put accepted this way waited for
     * the next request, which waited for the answer to it, and the ping-pong hung). Postlist 1:
     * the peer takes none of the sends (its receives run out, the sends wait for receives) until
     * a send is refused BACK_PRESSURED; then both sides only poll, the peer reposting its
     * receives, and every accepted send must arrive, in a bounded number of polls.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("oneThreadLevels")
    @Timeout(120)
    void aSendAcceptedWhileTheSendQueueIsFullGoesOutWhenTheOwnerPolls(String devNames, String level) throws Exception {
        Device dev = device(devNames);
        Device peerDev = peerDevice(devNames);
        EndpointOptions opts = EndpointOptions.DEFAULTS.withFeatures(1, 4, 0).withDepths(16, 4).withBuffers(1024, 64);
        try (EndpointManager a = EndpointManager.open(dev, SharingConfig.parse(level), 1, opts);
             EndpointManager b = EndpointManager.open(peerDev, SharingConfig.parse(level), 1, opts)) {
            a.connect(b);
            Endpoint e = a.acquire();
            Endpoint peer = b.acquire();
            int accepted = 0;
            int rc;
            while ((rc = e.send(accepted, 0, 8)) == Endpoint.OK) {
                accepted++;
                assertTrue(accepted < 1000, "1000 sends into 4 receives nobody reposts were never back-pressured");
            }
            assertEquals(Endpoint.BACK_PRESSURED, rc, "send " + Endpoint.outcomeName(rc));
            Completion c = new Completion();
            int received = 0;
            for (long polls = 0; received < accepted && polls < 5_000_000; polls++) {
                while (peer.poll(c)) {
                    assertTrue(c.ok() && c.isRecv(), () -> "peer: " + c);
                    received++;
                    assertEquals(0, peer.repost((int) c.wrId()));
                }
                while (e.poll(c)) {
                    assertTrue(c.ok(), () -> "sender: " + c);
                }
            }
            assertEquals(accepted, received, "sends accepted (OK) and received; still staged: " + e.staged());
            assertTrue(e.drain(20_000_000_000L), "drain");
            b.release(peer);
            a.release(e);
        }
    }

    /**
     * Polls the run tests make at most while waiting for completions: each returns as soon as they
     * arrived (at once on the simulator); the bound is for rxe in a TCG virtual machine.
     */
    private static final long POLLS = 100_000_000L;

    /**
     * Two levels whose endpoints own a QP (runs of writes are counted, not staged), and a QP shared
     * by the managers' two endpoints (they are not; one of them is used).
     */
    /** The run tests' options: postlist 8, one signaled request in 4, inline up to 16; depths 64 and 8. */
    private static final EndpointOptions RUN_OPTIONS =
            EndpointOptions.DEFAULTS.withFeatures(8, 4, 16).withDepths(64, 8).withBuffers(1024, 64);

    /** As {@link #RUN_OPTIONS} with 16 receives posted, for the tests that send. */
    private static final EndpointOptions RUN_OPTIONS_RQ16 =
            EndpointOptions.DEFAULTS.withFeatures(8, 4, 16).withDepths(64, 16).withBuffers(1024, 64);

    /**
     * Poll {@code e} and its peer until {@code completions} of {@code e}'s arrived and the peer
     * received {@code receives} 8-byte sends whose bytes read {@code sent} (reposting each), at most
     * {@link #POLLS} rounds; asserts the receives, returns {@code e}'s completions' ids in order.
     */
    private static List<Long> pollSendsAndReceives(Endpoint e, Endpoint peer, int completions, int receives, long sent) {
        List<Long> done = new ArrayList<>();
        int received = 0;
        Completion c = new Completion();
        for (long polls = 0; (done.size() < completions || received < receives) && polls < POLLS; polls++) {
            while (e.poll(c)) {
                assertTrue(c.ok(), () -> "completion " + c);
                done.add(c.wrId());
            }
            while (peer.poll(c)) {
                assertTrue(c.ok() && c.isRecv(), () -> "peer: " + c);
                assertEquals(8, c.byteLen());
                assertEquals(sent, peer.recvSlot((int) c.wrId()).get(ValueLayout.JAVA_LONG, 0), "sent bytes");
                assertEquals(0, peer.repost((int) c.wrId()));
                received++;
            }
        }
        assertEquals(receives, received, "every send received");
        return done;
    }

    static Stream<Arguments> runMatrix() {
        List<Arguments> out = new ArrayList<>();
        for (String dev : System.getProperty("scalep.ep.devices", "sim:mlx5,sim:efa").split(",")) {
            for (String level : new String[]{"mpi-everywhere", "static", "mpi-threads,qp=shared:locked"}) {
                out.add(Arguments.of(dev, level));
            }
        }
        return out.stream();
    }

    /**
     * The two connected managers of a run test, on the device(s) named {@code a/b} (or one name for
     * both), with two threads where the level shares QPs ({@link #runThreads}); closed together.
     */
    record RunPair(Device dev, EndpointManager a, EndpointManager b) implements AutoCloseable {
        static RunPair open(String devNames, String level, EndpointOptions opts) {
            Device dev = device(devNames);
            int threads = runThreads(level);
            EndpointManager a = EndpointManager.open(dev, SharingConfig.parse(level), threads, opts);
            EndpointManager b = null;
            try {
                b = EndpointManager.open(peerDevice(devNames), SharingConfig.parse(level), threads,
                        opts);
                a.connect(b);
                return new RunPair(dev, a, b);
            } catch (RuntimeException x) {
                if (b != null) {
                    b.close();
                }
                a.close();
                throw x;
            }
        }

        /** The peer's manager first, then this side's, as try-with-resources over both would. */
        @Override
        public void close() {
            try {
                b.close();
            } finally {
                a.close();
            }
        }
    }

    /** Threads of the managers of a {@link #runMatrix} level: two where the QP is shared, so that it is. */
    private static int runThreads(String level) {
        return level.contains("qp=shared") ? 2 : 1;
    }

    /**
     * Writes with the same offsets and consecutive ids form a run that {@link Endpoint#write}
     * counts and stages only when the postlist fills or another call looks at what is staged.
     * Seen from outside it must be what staging each write would give: the staged count after
     * every call, a full postlist posted at once, every q-th request signaled (counted from the
     * first write, across runs and the requests between them), and the requests in call order
     * (a later write to the same bytes lands last, where the device keeps order). Postlist 8, one
     * signaled request in 4 (on EFA, which signals every request: each once).
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("runMatrix")
    @Timeout(60)
    void writesOfARunAreStagedSignaledAndOrderedAsEachWriteAlone(String devNames, String level) throws Exception {
        try (RunPair pair = RunPair.open(devNames, level, RUN_OPTIONS)) {
            Device dev = pair.dev();
            EndpointManager a = pair.a();
            EndpointManager b = pair.b();
            Endpoint e = a.acquire();
            Endpoint peer = b.endpoint(e.index());
            e.sendBuffer().set(ValueLayout.JAVA_LONG, 0, 0xaaaaL);
            e.sendBuffer().set(ValueLayout.JAVA_LONG, 8, 0xbbbbL);
            long wqes = e.qp().counters().wqes();
            for (int id = 0; id < 21; id++) {
                assertEquals(Endpoint.OK, e.write(id, 0, 8, 0));
                assertEquals((id + 1) % 8, e.staged(), "staged after write " + id);
                assertEquals((id + 1) / 8 * 8, e.qp().counters().wqes() - wqes, "posted after write " + id);
            }
            assertEquals(Endpoint.OK, e.write(21, 8, 8, 0), "other offsets: after the run, to the same bytes");
            assertEquals(6, e.staged());
            assertEquals(Endpoint.OK, e.write(22, 0, 8, 8));
            assertEquals(Endpoint.OK, e.write(23, 0, 8, 8), "fills the postlist");
            assertEquals(0, e.staged());
            assertEquals(24, e.qp().counters().wqes() - wqes);
            List<Long> signaled = new ArrayList<>();
            Completion c = new Completion();
            for (long polls = 0; signaled.size() < 6 && polls < POLLS; polls++) {
                while (e.poll(c)) {
                    assertTrue(c.ok(), () -> "completion " + c);
                    signaled.add(c.wrId());
                }
            }
            if (dev.capabilities().unsignaled()) {
                assertEquals(List.of(3L, 7L, 11L, 15L, 19L, 23L), signaled, "every fourth request signaled");
            } else { // EFA: every request signaled, completions in any order (SRD)
                for (long polls = 0; signaled.size() < 24 && polls < POLLS; polls++) {
                    while (e.poll(c)) {
                        assertTrue(c.ok(), () -> "completion " + c);
                        signaled.add(c.wrId());
                    }
                }
                assertEquals(24, signaled.size(), "every request signaled: " + signaled);
                assertEquals(24, signaled.stream().distinct().filter(id -> id >= 0 && id < 24).count(), "each once");
            }
            assertTrue(e.drain(20_000_000_000L), "drain");
            assertEquals(0, e.outstanding());
            if (dev.capabilities().inOrder()) {
                assertEquals(0xbbbbL, peer.targetBuffer().get(ValueLayout.JAVA_LONG, 0), "write 21 landed after 0..20");
            }
            assertEquals(0xaaaaL, peer.targetBuffer().get(ValueLayout.JAVA_LONG, 8));
            a.release(e);
        }
    }

    /**
     * A request that differs from the run in its length alone, or in its remote offset alone, ends
     * the run: it goes out with its own. Writes 0 and 1 put 8 bytes at the peer's offset 0, write 2
     * sixteen, so bytes 8..15 land only if write 2 was not taken for the run's third; writes 3 and 4
     * go to offset 32, write 5 to 48, where it lands only if it was not taken for the run's. (A
     * local offset, the operation and the id that differ end a run in the tests around this one.)
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("runMatrix")
    @Timeout(60)
    void aRequestOfAnotherLengthOrRemoteOffsetEndsTheRun(String devNames, String level) throws Exception {
        try (RunPair pair = RunPair.open(devNames, level, RUN_OPTIONS)) {
            EndpointManager a = pair.a();
            Endpoint e = a.acquire();
            Endpoint peer = pair.b().endpoint(e.index());
            e.sendBuffer().set(ValueLayout.JAVA_LONG, 0, 0x1111L);
            e.sendBuffer().set(ValueLayout.JAVA_LONG, 8, 0x2222L);
            assertEquals(Endpoint.OK, e.write(0, 0, 8, 0));
            assertEquals(Endpoint.OK, e.write(1, 0, 8, 0));
            assertEquals(Endpoint.OK, e.write(2, 0, 16, 0));
            assertEquals(Endpoint.OK, e.write(3, 0, 8, 32));
            assertEquals(Endpoint.OK, e.write(4, 0, 8, 32));
            assertEquals(Endpoint.OK, e.write(5, 0, 8, 48));
            assertEquals(6, e.staged());
            assertEquals(Endpoint.OK, e.flush());
            assertTrue(e.drain(20_000_000_000L), "drain");
            assertEquals(0, e.outstanding());
            assertEquals(0x1111L, peer.targetBuffer().get(ValueLayout.JAVA_LONG, 0));
            assertEquals(0x2222L, peer.targetBuffer().get(ValueLayout.JAVA_LONG, 8), "write 2's sixteen bytes landed");
            assertEquals(0x1111L, peer.targetBuffer().get(ValueLayout.JAVA_LONG, 32));
            assertEquals(0x1111L, peer.targetBuffer().get(ValueLayout.JAVA_LONG, 48), "write 5 landed at its own offset");
            a.release(e);
        }
    }

    /**
     * Reads and sends form runs as writes do: a run of reads, then a run of sends (a different
     * operation ends the run of reads), then a write (which ends the run of sends), each staged
     * and posted in call order. The reads bring the peer's bytes, the peer receives every send
     * with its bytes, and the ids that complete are the signaled ones (every request on EFA).
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("runMatrix")
    @Timeout(60)
    void readsAndSendsFormRunsAsWritesDo(String devNames, String level) throws Exception {
        try (RunPair pair = RunPair.open(devNames, level, RUN_OPTIONS_RQ16)) {
            Device dev = pair.dev();
            EndpointManager a = pair.a();
            EndpointManager b = pair.b();
            Endpoint e = a.acquire();
            Endpoint peer = b.acquire();
            assertEquals(e.index(), peer.index());
            peer.sendBuffer().set(ValueLayout.JAVA_LONG, 16, 0xccccL);
            e.sendBuffer().set(ValueLayout.JAVA_LONG, 24, 0xddddL);
            long wqes = e.qp().counters().wqes();
            for (int id = 0; id < 6; id++) {
                assertEquals(Endpoint.OK, e.read(id, 16, 8, 16));
            }
            assertEquals(6, e.staged());
            for (int id = 6; id < 11; id++) {
                assertEquals(Endpoint.OK, e.send(id, 24, 8));
            }
            assertEquals(3, e.staged(), "a postlist of 8 went out at the eighth request");
            assertEquals(8, e.qp().counters().wqes() - wqes);
            assertEquals(Endpoint.OK, e.write(11, 24, 8, 32));
            assertEquals(4, e.staged());
            assertEquals(Endpoint.OK, e.flush());
            assertEquals(12, e.qp().counters().wqes() - wqes);
            int expected = dev.capabilities().unsignaled() ? 3 : 12; // 3, 7 and the flush's 11
            List<Long> done = pollSendsAndReceives(e, peer, expected, 5, 0xddddL);
            if (dev.capabilities().unsignaled()) {
                assertEquals(List.of(3L, 7L, 11L), done);
            } else {
                done.sort(null);
                assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L), done);
            }
            assertTrue(e.drain(20_000_000_000L), "drain");
            assertEquals(0xccccL, e.readBuffer().get(ValueLayout.JAVA_LONG, 16), "the reads brought the peer's bytes");
            assertEquals(0xddddL, peer.targetBuffer().get(ValueLayout.JAVA_LONG, 32), "the write landed");
            b.release(peer);
            a.release(e);
        }
    }

    /**
     * After a full postlist of a run goes out, the next request is taken as the start of a new run
     * only if it continues it; anything else finds nothing staged and goes out as itself. Postlist
     * 8, one signaled request in 4: writes 0..7 fill a postlist (posted, nothing staged, so the
     * endpoint could be released); write 8 has the next id but other offsets (its bytes land at
     * 16), writes 9..15 continue it; a flush then has nothing to post; a read with the next id
     * brings the peer's bytes; writes 17..24 with the next ids are a postlist again, and a send
     * right after it is the only request staged. Each request lands, and only the signaled ones
     * complete (every request on EFA).
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("runMatrix")
    @Timeout(60)
    void whatFollowsAFullPostlistIsStagedAsItselfWhetherOrNotItContinuesTheRun(String devNames, String level)
            throws Exception {
        try (RunPair pair = RunPair.open(devNames, level, RUN_OPTIONS_RQ16)) {
            Device dev = pair.dev();
            EndpointManager a = pair.a();
            EndpointManager b = pair.b();
            Endpoint e = a.acquire();
            Endpoint peer = b.acquire();
            e.sendBuffer().set(ValueLayout.JAVA_LONG, 0, 0x1010L);
            e.sendBuffer().set(ValueLayout.JAVA_LONG, 8, 0x2020L);
            e.sendBuffer().set(ValueLayout.JAVA_LONG, 40, 0x5050L);
            peer.sendBuffer().set(ValueLayout.JAVA_LONG, 24, 0x3030L);
            long wqes = e.qp().counters().wqes();
            for (int id = 0; id < 8; id++) {
                assertEquals(Endpoint.OK, e.write(id, 0, 8, 0));
            }
            assertEquals(0, e.staged(), "a full postlist went out");
            assertEquals(8, e.qp().counters().wqes() - wqes);
            assertEquals(Endpoint.OK, e.write(8, 8, 8, 16), "the next id, other offsets");
            assertEquals(1, e.staged());
            for (int id = 9; id < 16; id++) {
                assertEquals(Endpoint.OK, e.write(id, 8, 8, 16));
                assertEquals((id + 1) % 8, e.staged(), "staged after write " + id);
            }
            assertEquals(16, e.qp().counters().wqes() - wqes);
            assertEquals(Endpoint.OK, e.flush(), "nothing staged, the last request signaled");
            assertEquals(16, e.qp().counters().wqes() - wqes, "the flush posted nothing");
            assertEquals(Endpoint.OK, e.read(16, 24, 8, 24), "the next id, another operation");
            assertEquals(1, e.staged());
            assertEquals(Endpoint.OK, e.flush());
            assertEquals(17, e.qp().counters().wqes() - wqes);
            for (int id = 17; id < 25; id++) {
                assertEquals(Endpoint.OK, e.write(id, 40, 8, 40));
            }
            assertEquals(0, e.staged(), "a postlist of the next ids went out whole");
            assertEquals(25, e.qp().counters().wqes() - wqes);
            assertEquals(Endpoint.OK, e.send(25, 40, 8));
            assertEquals(1, e.staged(), "the send is the only request staged");
            assertEquals(Endpoint.OK, e.flush());
            assertEquals(26, e.qp().counters().wqes() - wqes);
            int expected = dev.capabilities().unsignaled() ? 8 : 26; // 3, 7, 11, 15, the read, 20, 24, the send
            List<Long> done = pollSendsAndReceives(e, peer, expected, 1, 0x5050L);
            if (dev.capabilities().unsignaled()) {
                assertEquals(List.of(3L, 7L, 11L, 15L, 16L, 20L, 24L, 25L), done);
            } else {
                done.sort(null);
                assertEquals(LongStream.range(0, 26).boxed().toList(), done);
            }
            assertTrue(e.drain(20_000_000_000L), "drain");
            assertEquals(0x1010L, peer.targetBuffer().get(ValueLayout.JAVA_LONG, 0), "writes 0..7 landed");
            assertEquals(0x2020L, peer.targetBuffer().get(ValueLayout.JAVA_LONG, 16), "writes 8..15 landed at 16");
            assertEquals(0x3030L, e.readBuffer().get(ValueLayout.JAVA_LONG, 24), "the read brought the peer's bytes");
            assertEquals(0x5050L, peer.targetBuffer().get(ValueLayout.JAVA_LONG, 40), "writes 17..24 landed at 40");
            assertEquals(0, e.staged());
            b.release(peer);
            a.release(e);
        }
    }

    /**
     * A run ends where the wr ids reach the runtime's reserved ones; what it holds stays staged
     * (the postlist is not full) until a flush posts it, the last request signaled. And a full
     * send queue: writes refused BACK_PRESSURED are not staged, every write accepted completes
     * once the owner polls, each id once, in order where the device keeps order (every request signaled).
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("runMatrix")
    @Timeout(60)
    void aRunStopsAtTheReservedIdsAndAFullQueueRefusesWritesOfARun(String devNames, String level) throws Exception {
        EndpointOptions opts = EndpointOptions.DEFAULTS.withFeatures(8, 1, 16).withDepths(16, 8).withBuffers(1024, 64);
        try (RunPair pair = RunPair.open(devNames, level, opts)) {
            Device dev = pair.dev();
            EndpointManager a = pair.a();
            Endpoint e = a.acquire();
            long wqes = e.qp().counters().wqes();
            for (long id = Endpoint.CONTROL_BASE - 3; id < Endpoint.CONTROL_BASE; id++) {
                assertEquals(Endpoint.OK, e.write(id, 0, 8, 0));
            }
            assertEquals(3, e.staged());
            assertEquals(0, e.qp().counters().wqes() - wqes, "a postlist of 3 waits for 5 more or a flush");
            assertEquals(Endpoint.OK, e.flush());
            assertEquals(3, e.qp().counters().wqes() - wqes);
            Completion c = new Completion();
            List<Long> got = new ArrayList<>();
            for (long polls = 0; got.size() < 3 && polls < POLLS; polls++) {
                while (e.poll(c)) {
                    assertTrue(c.ok(), () -> "completion " + c);
                    got.add(c.wrId());
                }
            }
            if (!dev.capabilities().inOrder()) {
                got.sort(null); // SRD completes in any order
            }
            assertEquals(List.of(Endpoint.CONTROL_BASE - 3, Endpoint.CONTROL_BASE - 2, Endpoint.CONTROL_BASE - 1), got);
            assertTrue(e.drain(20_000_000_000L), "drain");

            long accepted = 0;
            int rc;
            while ((rc = e.write(accepted, 0, 8, 0)) == Endpoint.OK) {
                accepted++;
                assertTrue(accepted < 1000, "1000 writes into a queue of 16 nobody polled were never back-pressured");
            }
            assertEquals(Endpoint.BACK_PRESSURED, rc, "write " + Endpoint.outcomeName(rc));
            long next = 0;
            BitSet seen = new BitSet();
            boolean ordered = dev.capabilities().inOrder();
            for (long polls = 0; next < accepted && polls < POLLS; polls++) {
                while (e.poll(c)) {
                    assertTrue(c.ok(), () -> "completion " + c);
                    if (ordered) {
                        assertEquals(next, c.wrId(), "completions in order, each once");
                    } else {
                        assertTrue(c.wrId() >= 0 && c.wrId() < accepted && !seen.get((int) c.wrId()),
                                "completion of write " + c.wrId() + ": accepted and not seen before");
                        seen.set((int) c.wrId());
                    }
                    next++;
                }
            }
            assertEquals(accepted, next, "writes accepted and completed; still staged: " + e.staged());
            assertTrue(e.drain(20_000_000_000L), "drain");
            assertEquals(0, e.outstanding());
            a.release(e);
        }
    }

    private static long check(Completion c, long lastId) {
        if (!c.ok()) {
            throw new AssertionError("error completion " + c);
        }
        if (c.wrId() <= lastId) {
            throw new AssertionError("completion " + c.wrId() + " after " + lastId + " (duplicate or reordered)");
        }
        return 1;
    }

    @Test
    @Timeout(20)
    void foreignThreadIsRefused() throws Exception {
        Device dev = Devices.byName("sim:mlx5");
        try (EndpointManager a = EndpointManager.open(dev, Category.DYNAMIC.config(), 2, EndpointOptions.DEFAULTS);
             EndpointManager b = EndpointManager.open(dev, Category.DYNAMIC.config(), 2, EndpointOptions.DEFAULTS)) {
            a.connect(b);
            Endpoint e = a.acquire();
            AtomicReference<Throwable> got = new AtomicReference<>();
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    e.write(1, 0, 8, 0);
                } catch (Throwable x) {
                    got.set(x);
                }
            });
            t.join();
            assertTrue(got.get() instanceof IllegalStateException, String.valueOf(got.get()));
            assertEquals(0, e.qp().counters().wqes(), "nothing posted");
            assertEquals(0, e.outstanding());
            a.release(e);
        }
    }

    /**
     * Offsets, lengths and remote offsets outside the buffers, and wr ids that do not fit in 47 bits,
     * are refused at the call: nothing is staged, the QP stays usable and a valid write still lands.
     * Both providers, every send path (per-thread chained, shared locked, shared combining).
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("validationMatrix")
    @Timeout(30)
    void outOfRangeArgumentsAreRefusedAtTheCall(String devName, String level) throws Exception {
        Device dev = Devices.byName(devName);
        EndpointOptions opts = EndpointOptions.DEFAULTS.withBuffers(1024, 64).withSgeHeaderPayload(true).withChained(32, 8);
        try (EndpointManager a = EndpointManager.open(dev, SharingConfig.parse(level), 1, opts);
             EndpointManager b = EndpointManager.open(dev, SharingConfig.parse(level), 1, opts)) {
            a.connect(b);
            Endpoint e = a.acquire();
            Endpoint peer = b.acquire();
            String[] why = new String[]{
                    msg(() -> e.write(1, 1000, 100, 0)), msg(() -> e.write(1, -1, 8, 0)), msg(() -> e.write(1, 0, -8, 0)),
                    msg(() -> e.write(1, 0, 8, 1020)), msg(() -> e.write(1, 0, 8, -4)), msg(() -> e.read(1, 0, 2000, 0)),
                    msg(() -> e.read(1, 0, 8, Integer.MAX_VALUE)), msg(() -> e.send(1, 1020, 8)),
                    msg(() -> e.write(1L << 47, 0, 8, 0)), msg(() -> e.write(-1, 0, 8, 0)),
                    msg(() -> e.write((1L << 47) - 1, 0, 8, 0)), msg(() -> e.write(Endpoint.REPLY_ID, 0, 8, 0)),
                    msg(() -> e.write(Endpoint.CONTROL_BASE, 0, 8, 0))};
            for (String m : why) {
                assertTrue(m.contains("endpoint " + e.index() + ": ") && (m.contains("is outside")), m);
            }
            assertTrue(why[3].contains("the peer's buffer of 1024 bytes"), why[3]);
            assertTrue(why[8].contains("47 bits"), why[8]);
            assertEquals(0, e.staged(), "nothing staged");
            assertEquals(0, e.outstanding());
            assertEquals(0, e.qp().counters().wqes(), "nothing posted");
            e.sendBuffer().set(ValueLayout.JAVA_LONG, 1016, 0x5ca1e9L);
            assertEquals(0, e.write(Endpoint.CONTROL_BASE - 1, 1016, 8, 1016),
                    "the largest wr id (below the runtime's reserved ones) and the last bytes of both buffers");
            assertEquals(0, e.flush());
            assertTrue(e.drain(10_000_000_000L));
            assertEquals(0x5ca1e9L, peer.targetBuffer().get(ValueLayout.JAVA_LONG, 1016));
            a.release(e);
            b.release(peer);
        }
    }

    static Stream<Arguments> validationMatrix() {
        List<Arguments> out = new ArrayList<>();
        for (String dev : new String[]{"sim:mlx5", "sim:efa"}) {
            for (String level : new String[]{"static", "mpi-threads,qp=shared:locked", "mpi-threads,qp=shared:combining"}) {
                out.add(Arguments.of(dev, level));
            }
        }
        return out.stream();
    }

    private static String msg(Executable call) {
        return assertThrows(IllegalArgumentException.class, call).getMessage();
    }
}
