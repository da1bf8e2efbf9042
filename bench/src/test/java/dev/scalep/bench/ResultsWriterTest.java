package dev.scalep.bench;

import dev.scalep.verbs.ResourceUsage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
