package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.LocalWorld;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The window suite ({@link WindowSuite}) in one JVM: ranks are threads of a {@link LocalWorld}, on
 * both simulated devices, at a level with a PD per thread ({@code mpi-everywhere}: a window is
 * registered on each), per-thread QPs, one locked QP and a combining shared QP; in worlds of three
 * ranks, two, and one (where every operation targets the rank itself, through its loopback); and
 * with the windows mapped ({@link WorldEndpoints#mapWindows}) on every rank, or on the even ranks
 * only (mapped and endpoint operations on the same words).
 */
class WindowTest {
    static final List<String> SCENARIOS = List.of("put-get", "split", "notify", "ranges", "close", "release", "expose", "atomics",
            "atomic-errors", "barrier", "add-flood");

    static Stream<Arguments> matrix() {
        List<Arguments> out = new ArrayList<>();
        for (String dev : new String[]{"sim:mlx5", "sim:efa"}) {
            for (String level : new String[]{"mpi-everywhere", "static", "mpi-threads", "static,qp=shared:combining,cq=shared",
                    "mpi-everywhere+mapped", "mpi-threads+mapped:even"}) {
                for (int[] pt : new int[][]{{1, 2}, {2, 2}, {3, 2}}) {
                    out.add(Arguments.of(dev, level, pt[0], pt[1]));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} ranks={2} threads={3}")
    @MethodSource("matrix")
    @Timeout(120)
    void theWindowSuitePassesOnEveryRank(String dev, String level, int ranks, int threads) throws Exception {
        List<Object> results = LocalRanks.run(ranks, 60_000, w -> WindowSuite.runAll(w, Devices.byName(dev), level, threads));
        for (int r = 0; r < ranks; r++) {
            assertEquals(SCENARIOS, results.get(r), "rank " + r);
        }
    }

    /**
     * Three ranks, each flushing its notified puts to the next while its own receives fill with
     * the puts of the one before ({@link WindowSuite#flushesInACycleOfRanksDoNotWaitForEachOther}).
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"sim:mlx5, mpi-everywhere", "sim:mlx5, static", "sim:efa, mpi-everywhere"})
    @Timeout(120)
    void flushesInACycleOfRanksDoNotWaitForEachOther(String dev, String level) throws Exception {
        List<Object> results = LocalRanks.run(3, 60_000,
                w -> WindowSuite.flushesInACycleOfRanksDoNotWaitForEachOther(w, Devices.byName(dev), level));
        for (int r = 0; r < 3; r++) {
            assertEquals(2 * WindowSuite.OPTS.recvDepth() + 3, results.get(r), "rank " + r);
        }
    }

    /** sim:efa has no RDMA atomics; with receive slots too small for an emulation message they are refused. */
    @Test
    @Timeout(60)
    void atomicsAreRefusedWhereTheEmulationHasNoRoom() throws Exception {
        World w = LocalWorld.create(1, 30_000).get(0);
        try (WorldEndpoints eps = WorldEndpoints.open(w, Devices.byName("sim:efa"), SharingConfig.parse("static"), 2,
                WindowSuite.OPTS.withBuffers(1024, 32))) {
            new WindowSuite(w, eps, 2).atomicsAreRefusedWithoutRoomForTheEmulation();
        }
    }

    @Test
    void handlesRoundTripAndMalformedOnesAreRefused() {
        WindowHandle h = new WindowHandle(3, 7, 0x7f00_1234_0000L, 4096, 2, 3, new int[]{0, 0, 0, 11, 12, 13});
        byte[] b = h.toBytes();
        assertEquals(1 + 2 + 4 + 8 + 8 + 2 + 2 + 24, b.length);
        assertEquals(h, WindowHandle.fromBytes(b));
        assertEquals(12, WindowHandle.fromBytes(b).rkey(1, 1));
        byte[] v2 = b.clone();
        v2[0] = 2;
        assertTrue(assertThrows(IllegalArgumentException.class, () -> WindowHandle.fromBytes(v2)).getMessage()
                .contains("version 2"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> WindowHandle.fromBytes(Arrays.copyOf(b, b.length - 1)))
                .getMessage().contains("keys need"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> WindowHandle.fromBytes(Arrays.copyOf(b, 9)))
                .getMessage().contains("truncated"));
    }

    @Test
    @Timeout(60)
    void collectiveMistakesFailOnEveryRank() throws Exception {
        List<World> worlds = LocalWorld.create(2, 30_000);
        AtomicReferenceArray<Object> results = new AtomicReferenceArray<>(2);
        List<Thread> ts = new ArrayList<>();
        for (World w : worlds) {
            ts.add(Thread.ofPlatform().start(() -> {
                try (WorldEndpoints eps = WorldEndpoints.open(w, Devices.byName("sim:mlx5"),
                        SharingConfig.parse("static"), 1, WindowSuite.OPTS)) {
                    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                            () -> eps.allocateWindow(4096 + 8L * w.rank()));
                    assertTrue(e.getMessage().contains("same size on every rank"), e.getMessage());
                    assertThrows(IllegalArgumentException.class, () -> eps.allocateWindow(0));
                    try (Window ok = eps.allocateWindow(64)) { // the failed attempt left nothing behind
                        assertEquals(64, ok.size(1 - w.rank()));
                    }
                    results.set(w.rank(), "ok");
                } catch (Throwable t) {
                    results.set(w.rank(), t);
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        assertEquals("ok", results.get(0), String.valueOf(results.get(0)));
        assertEquals("ok", results.get(1), String.valueOf(results.get(1)));
    }
}
