package dev.scalep.bench;

import dev.scalep.verbs.Devices;
import dev.scalep.verbs.ResourceUsage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code scalep sweep --profile}'s reading of a recording: only samples inside a sender thread's
 * timed rounds that became rows count, each to the layer of its innermost scalep frame.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SenderProfileTest {
    /** Iterations of the arithmetic below: about a quarter of a second of one core (bound work). */
    private static final long SPIN = 400_000_000L;
    private static volatile long sink;

    @Test
    void classesGoToTheirLayers() {
        assertEquals("provider", SenderProfile.layerOf("dev.scalep.verbs.sim.DirectWrites"));
        assertEquals("provider", SenderProfile.layerOf("dev.scalep.verbs.ibv.IbvQp"));
        assertEquals("counters", SenderProfile.layerOf("dev.scalep.verbs.counters.LocalCounter"));
        assertNull(SenderProfile.layerOf("dev.scalep.verbs.SendWorkRequests"), "the verbs' arrays pass to their caller");
        assertNull(SenderProfile.layerOf("org.jctools.queues.SpscArrayQueue"));
        assertEquals("completions", SenderProfile.layerOf("dev.scalep.threading.CompletionRouter"));
        assertEquals("completions", SenderProfile.layerOf("dev.scalep.threading.SpscCompletionRing"));
        assertEquals("posting", SenderProfile.layerOf("dev.scalep.threading.ExclusivePoster"));
        assertEquals("posting", SenderProfile.layerOf("dev.scalep.threading.SendCredits"));
        assertEquals("endpoint", SenderProfile.layerOf("dev.scalep.endpoints.Endpoint"));
        assertEquals("application", SenderProfile.layerOf("dev.scalep.bench.SweepRunner"));
        assertEquals("other", SenderProfile.layerOf("dev.scalep.spmd.World"));
    }

    @Test
    void onlyTheRoundsKeptAsRowsCount(@TempDir Path dir) throws Exception {
        SenderProfile recorder = SenderProfile.start();
        int kept = SweepEvents.nextPoint();
        int dropped = SweepEvents.nextPoint();
        SweepPoint p = new SweepPoint("sim:mlx5", "probe", "mpi-everywhere", 1, 32, 64, 256, 1000, true, true, null, 1, "all");
        try {
            SweepEvents.round(kept, 0, 0, SenderProfileTest::spinInDroppedRound); // measured again: no row
            SweepEvents.round(kept, 1, 0, SenderProfileTest::spinInKeptRound);
            SweepEvents.row(kept, 1, new Measurement(p, 1, 0.001, 1000, ResourceUsage.ZERO, ""));
            SweepEvents.round(dropped, 0, 0, SenderProfileTest::spinInDroppedRound); // a point with no row at all
            spinInDroppedRound(); // outside any round
        } catch (RuntimeException | Error e) {
            recorder.close();
            throw e;
        }
        SenderProfile.Report r = recorder.stop(dir.resolve("probe.jfr"));
        assertEquals(1, r.points().size(), r.toString());
        SenderProfile.Point only = r.points().getFirst();
        assertEquals(kept, only.point());
        assertEquals("probe", only.configuration());
        assertEquals(1.0, only.mmsgPerSec(), 1e-9);
        assertTrue(only.samples() > 0, "a quarter of a second of CPU inside the kept round: " + only);
        assertEquals(only.samples(), only.layers().get("application"), "the spin is the test's own code: " + only);
        assertTrue(only.methods().containsKey("SenderProfileTest.spinInKeptRound"), only.methods().toString());
        assertFalse(only.methods().containsKey("SenderProfileTest.spinInDroppedRound"), only.methods().toString());
    }

    /** The real sweep on each simulated device: its configuration is profiled, and most of it in the provider and the layers above it. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    void aSweepsSendersAreProfiledByLayer(String device, @TempDir Path dir) throws Exception {
        SweepPoint p = new SweepPoint(device, "mpi-everywhere", "mpi-everywhere", 1, 32, 64, 256, 4_000_000, true, true,
                null, 1, "all");
        SenderProfile recorder = SenderProfile.start();
        List<Measurement> ms;
        try {
            ms = SweepRunner.run(Devices.byName(device), p, 2, 400_000, m -> { });
        } catch (RuntimeException | InterruptedException e) {
            recorder.close();
            throw e;
        }
        SenderProfile.Report r = recorder.stop(dir.resolve("sweep.jfr"));
        assertEquals(1, r.points().size(), r.toString());
        SenderProfile.Point only = r.points().getFirst();
        assertEquals("mpi-everywhere", only.configuration());
        assertEquals(1, only.threads());
        assertEquals(Stats.of(ms.stream().mapToDouble(Measurement::mmsgPerSec).toArray()).median(), only.mmsgPerSec(), 1e-3);
        assertTrue(only.samples() > 0, only.toString());
        long sum = SenderProfile.LAYERS.stream().mapToLong(l -> only.layers().get(l)).sum();
        assertEquals(only.samples(), sum, "every sample in one layer: " + only);
        assertTrue(only.layers().get("provider") > 0, "the simulated NIC runs in the sender thread: " + only);
        SenderProfile.writeCsv(r, dir.resolve("profile.csv"), 2);
        List<String> lines = Files.readAllLines(dir.resolve("profile.csv"));
        assertEquals(1 + SenderProfile.LAYERS.size(), lines.size(), lines.toString());
        assertTrue(lines.getFirst().startsWith("configuration,threads,postlist,mmsgPerSec,samples,layer"), lines.getFirst());
    }

    /** Its own loop, so that its samples name it (a shared helper would be the innermost frame of both rounds). */
    private static void spinInKeptRound() {
        long x = 1;
        for (long i = 0; i < SPIN; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        sink = x;
    }

    private static void spinInDroppedRound() {
        long x = 3;
        for (long i = 0; i < SPIN; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        sink = x;
    }
}
