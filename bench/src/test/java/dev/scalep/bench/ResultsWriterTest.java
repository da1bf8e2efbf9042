package dev.scalep.bench;

import dev.scalep.verbs.ResourceUsage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ResultsWriterTest {
    @Test
    void theSummaryGivesEachRowItsSpread() {
        SweepPoint p = new SweepPoint("sim:mlx5", "static", "static", 2, 32, 64, 256, 1000, true, true, null, 1, "all");
        List<Measurement> ms = new ArrayList<>();
        double[] seconds = {0.002, 0.001, 0.0025}; // 2000 messages: 1, 2 and 0.8 Mmsg/s
        for (int i = 0; i < seconds.length; i++) {
            ms.add(new Measurement(p, i + 1, seconds[i], 2000, ResourceUsage.ZERO, ""));
        }
        Map<String, Object> row = ResultsWriter.summary(ms).getFirst();
        assertEquals(1.0, (Double) row.get("mmsgPerSec"), 1e-9);
        assertEquals((2.0 - 0.8) / 1.0, (Double) row.get("mmsgPerSecSpread"), 1e-9, "(max - min) / median");
        assertEquals(3, row.get("repeats"));
    }

    @Test
    void warmUpRoundsAndTheControlLoopsTimeGoOutAndComeBack(@TempDir Path dir) throws Exception {
        SweepPoint p = new SweepPoint("sim:mlx5", "static", "static", 1, 32, 64, 256, 1000, true, true, null, 1, "all");
        Measurement m = new Measurement(p, 1, 0.001, 1000, ResourceUsage.ZERO, "", 64, 1, 2, null, 7, 1_234_567, 0);
        Map<String, Object> row = ResultsWriter.row(m);
        assertEquals(7, row.get("warmupRounds"));
        assertEquals(1_234_567L, row.get("controlNs"));
        ResultsWriter.write(dir, List.of(m), Map.of());
        Path json = dir.resolve("results.json");
        assertTrue(Files.readString(json).contains("\"controlNs\""), "the JSON rows carry the column");
        Measurement back = ResultsReader.measurements(json, p).getFirst();
        assertEquals(7, back.warmupRounds());
        assertEquals(1_234_567L, back.controlNanos());
        Measurement again = new Measurement(p, 2, 0.001, 1000, ResourceUsage.ZERO, "", 64, 1, 2, null, 7, 1_234_567, 2);
        assertEquals(0, row.get("jitRounds"), "a measurement made without rounds measured again says 0");
        assertEquals(2, ResultsWriter.row(again).get("jitRounds"));
        ResultsWriter.write(dir, List.of(m, again), Map.of());
        assertEquals(2, ResultsReader.measurements(json, p).get(1).jitRounds(), "the JSON rows carry the rounds measured again");
        long ctl = new ControlLoop().nanos();
        assertTrue(ctl > 0 && ctl < 60_000_000_000L, "the control loop's work takes time, and not forever: " + ctl);
    }
}
