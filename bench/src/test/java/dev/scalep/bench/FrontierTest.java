package dev.scalep.bench;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The sweep's frontier on synthetic summary rows: per thread count, on the chart's resource, plotted rows only. */
class FrontierTest {
    static Map<String, Object> row(String category, int threads, double rate, long uarPages, long memory, String variant,
                                   String shareAxis) {
        return Map.of("category", category, "threads", threads, "mmsgPerSec", rate, "uarPages", uarPages,
                "memoryBytes", memory, "variant", variant, "shareAxis", shareAxis);
    }

    @Test
    void sweepFrontierPerThreadCountOnUarPages() {
        List<Map<String, Object>> rows = List.of(
                row("mpi-everywhere", 4, 20, 32, 1_500_000, "all", ""),
                row("2x-dynamic", 4, 19, 12, 1_200_000, "all", ""),
                row("dynamic", 4, 18, 12, 700_000, "all", ""),        // 2x-dynamic: faster, same UAR pages
                row("static", 4, 15, 8, 700_000, "all", ""),
                row("mpi-threads", 4, 9, 8, 500_000, "all", ""),       // static: faster, same UAR pages
                row("static", 4, 30, 8, 700_000, "w/o inline", ""),   // not plotted: ablations are left out
                row("qp 2-way", 4, 40, 1, 1, "all", "qp"),            // not plotted: x-way sweeps are left out
                row("static", 1, 5, 8, 600_000, "all", ""));
        List<Map<String, Object>> f = Frontier.ofSweep(rows);
        assertEquals(2, f.size());
        assertEquals(1, f.get(0).get("threads"));
        assertEquals(4, f.get(1).get("threads"));
        assertEquals("uarPages", f.get(1).get("resource"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> points = (List<Map<String, Object>>) f.get(1).get("points");
        assertEquals(List.of("static", "2x-dynamic", "mpi-everywhere"), points.stream().map(p -> p.get("category")).toList(),
                "cheapest first");
    }

    @Test
    void withoutUarPagesTheFrontierIsOnMemory() {
        List<Map<String, Object>> rows = List.of(
                row("mpi-everywhere", 2, 10, 0, 1_000_000, "all", ""),
                row("static", 2, 8, 0, 400_000, "all", ""),
                row("mpi-threads", 2, 8, 0, 500_000, "all", ""));      // static: as fast, less memory
        List<Map<String, Object>> f = Frontier.ofSweep(rows);
        assertEquals("memoryBytes", f.getFirst().get("resource"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> points = (List<Map<String, Object>>) f.getFirst().get("points");
        assertEquals(List.of("static", "mpi-everywhere"), points.stream().map(p -> p.get("category")).toList());
    }
}
