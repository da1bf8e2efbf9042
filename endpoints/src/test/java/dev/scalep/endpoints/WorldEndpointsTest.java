package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.LocalWorld;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.QpType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Stream;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Endpoints connected through a world's all-gather: P ranks (threads of this JVM, {@link LocalWorld})
 * × T threads, every thread writing to and reading from every other rank, on both simulated devices
 * and at dedicated and shared QP levels. The exchange goes through bytes only.
 */
class WorldEndpointsTest {
    static final EndpointOptions OPTS = EndpointOptions.DEFAULTS.withDepths(64, 8).withBuffers(1024, 64);

    static Stream<Arguments> matrix() {
        List<Arguments> out = new ArrayList<>();
        for (String dev : new String[]{"sim:mlx5", "sim:efa"}) {
            for (String level : new String[]{"mpi-everywhere", "static", "mpi-threads", "static,qp=shared:combining,cq=shared"}) {
                for (int[] pt : new int[][]{{2, 1}, {3, 2}, {4, 3}}) {
                    out.add(Arguments.of(dev, level, pt[0], pt[1]));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} ranks={2} threads={3}")
    @MethodSource("matrix")
    @Timeout(60)
    void everyThreadWritesToAndReadsFromEveryOtherRank(String devName, String level, int ranks, int threads) throws Exception {
        Device dev = Devices.byName(devName);
        List<World> worlds = LocalWorld.create(ranks, 30_000);
        AtomicReferenceArray<Object> results = new AtomicReferenceArray<>(ranks);
        List<Thread> ts = new ArrayList<>();
        for (World w : worlds) {
            ts.add(Thread.ofPlatform().name("rank-" + w.rank()).start(() -> {
                try (WorldEndpoints eps = WorldEndpoints.open(w, dev, SharingConfig.parse(level), threads, OPTS)) {
                    int qpsPerPeer = eps.qpsPerPeer();
                    int sharers = SharingConfig.parse(level).qp().threadsPerInstance(threads);
                    int expectQps = (threads + Math.max(1, sharers) - 1) / Math.max(1, sharers);
                    if (eps.qpType() == QpType.RC) {
                        check(eps.managers().size() == ranks, "RC: one manager per other rank and the loopback, got "
                                + eps.managers().size());
                    } else {
                        check(eps.managers().size() == 1, "SRD: one manager, got " + eps.managers().size());
                        check(eps.managers().get(0).ahs.size() == qpsPerPeer * ranks,
                                "SRD: one AH per QP and rank (itself included), got " + eps.managers().get(0).ahs.size());
                    }
                    check(qpsPerPeer == expectQps, "QPs per manager " + qpsPerPeer + ", expected " + expectQps);
                    results.set(w.rank(), AllToAllCheck.run(eps, 2, 20_000));
                } catch (Throwable t) {
                    results.set(w.rank(), t);
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        for (int r = 0; r < ranks; r++) {
            Object o = results.get(r);
            if (o instanceof Throwable t) {
                throw new AssertionError("rank " + r + " failed: " + t, t);
            }
            AllToAllCheck.Result res = (AllToAllCheck.Result) o;
            long perRank = (long) threads * (ranks - 1) * 2;
            assertEquals(perRank, res.writesVerified(), "rank " + r);
            assertEquals(perRank, res.readsVerified(), "rank " + r);
        }
    }

    private static void check(boolean ok, String msg) {
        if (!ok) {
            throw new AssertionError(msg);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    @Timeout(30)
    void aSingleRankReachesOnlyItselfThroughItsLoopback(String devName) throws Exception {
        World w = LocalWorld.create(1).get(0);
        try (WorldEndpoints eps = WorldEndpoints.open(w, Devices.byName(devName), SharingConfig.parse("static"), 1, OPTS)) {
            assertEquals(1, eps.managers().size());
            try (RankEndpoint re = eps.acquire()) {
                Endpoint e = re.to(0);
                assertThrows(IllegalArgumentException.class, () -> re.to(1));
                assertThrows(IllegalArgumentException.class, () -> re.to(-1));
                e.sendBuffer().set(JAVA_LONG, 0, 0x5e1fL);
                assertEquals(Endpoint.OK, e.write(1, 0, 8, 24));
                assertTrue(re.drain(10_000_000_000L));
                assertEquals(0x5e1fL, e.targetBuffer().get(JAVA_LONG, 24), "a write to itself lands in its own target buffer");
            }
            assertThrows(IllegalArgumentException.class, () -> AllToAllCheck.run(eps, 1, 1000));
        }
    }

    /**
     * A run of writes ends where the thread turns to another rank: each rank writes its stamp to
     * every other rank with the same offsets and consecutive ids (the arguments a run continues
     * with), three times each, one rank after the other; every stamp must land at the rank it was
     * written to. On sim:efa one endpoint with one connectionless QP reaches every rank, so only the
     * change of peer ({@code RankEndpoint.to}) tells the runs apart; on sim:mlx5 each rank has its
     * own endpoint and QP. Postlist 8: all six writes fit in one list.
     */
    @ParameterizedTest
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    @Timeout(60)
    void writesWithTheSameArgumentsToAnotherRankGoToThatRank(String devName) throws Exception {
        Device dev = Devices.byName(devName);
        List<Object> got = LocalRanks.run(3, 30_000, w -> {
            try (WorldEndpoints eps = WorldEndpoints.open(w, dev, SharingConfig.parse("mpi-everywhere"), 1,
                    OPTS.withFeatures(8, 4, 16))) {
                int me = w.rank();
                long[] landed = new long[3];
                try (RankEndpoint re = eps.acquire()) {
                    for (int q = 0; q < 3; q++) {
                        re.to(q).sendBuffer().set(JAVA_LONG, 0, 0x7a00L + me);
                    }
                    w.barrier();
                    long id = 0;
                    for (int q = 0; q < 3; q++) {
                        if (q == me) {
                            continue;
                        }
                        for (int k = 0; k < 3; k++) {
                            assertEquals(Endpoint.OK, re.to(q).write(id++, 0, 8, 8 * me));
                        }
                    }
                    assertTrue(re.drain(20_000_000_000L), "drain");
                    w.barrier(); // every rank's writes have landed
                    for (int q = 0; q < 3; q++) {
                        landed[q] = re.to(q == me ? (me + 1) % 3 : q).targetBuffer().get(JAVA_LONG, 8L * q);
                    }
                    w.barrier(); // nobody closes while another reads
                }
                return landed;
            }
        });
        for (int r = 0; r < 3; r++) {
            long[] landed = (long[]) got.get(r);
            for (int q = 0; q < 3; q++) {
                if (q != r) {
                    assertEquals(0x7a00L + q, landed[q], "rank " + q + "'s stamp at rank " + r);
                }
            }
        }
    }

    @Test
    @Timeout(60)
    void waitsYieldWhenTheNodeRunsMoreSlotsThanProcessors() throws Exception {
        int cpus = Runtime.getRuntime().availableProcessors();
        World one = LocalWorld.create(1).get(0);
        try (WorldEndpoints eps = WorldEndpoints.open(one, Devices.byName("sim:mlx5"), SharingConfig.parse("static"), 1, OPTS)) {
            assertFalse(eps.oversubscribed(), "one rank of one thread on " + cpus + " processors");
        }
        // two ranks of this JVM (one node) with one thread more than half the processors each
        int threads = cpus / 2 + 1;
        List<Object> flags = LocalRanks.run(2, 30_000, w -> {
            try (WorldEndpoints eps = WorldEndpoints.open(w, Devices.byName("sim:mlx5"), SharingConfig.parse("static"),
                    threads, OPTS)) {
                return eps.oversubscribed();
            }
        });
        assertEquals(List.of(true, true), flags, "2 ranks x " + threads + " threads on " + cpus + " processors");
    }

    @Test
    void malformedAddressesAreRefusedWithTheReason() {
        try (EndpointManager m = EndpointManager.open(Devices.byName("sim:mlx5"), SharingConfig.parse("static"), 1, OPTS)) {
            byte[] good = m.address();
            ManagerAddress a = ManagerAddress.parse(good);
            assertEquals(1, a.threads());
            assertEquals(m.qps.get(0).address(), a.qps().get(0));
            byte[] cut = Arrays.copyOf(good, good.length - 3);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.connect(cut));
            assertTrue(e.getMessage().contains("truncated"), e.getMessage());
            byte[] bad = good.clone();
            bad[0] ^= 1;
            assertTrue(assertThrows(IllegalArgumentException.class, () -> m.connect(bad)).getMessage().contains("magic"));
            assertNull(null);
        }
    }
}
