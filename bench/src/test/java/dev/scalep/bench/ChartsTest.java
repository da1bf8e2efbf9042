package dev.scalep.bench;

import dev.scalep.verbs.ResourceUsage;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.renderer.xy.XYItemRenderer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChartsTest {
    /** Seven levels at 16 threads, three of them on the same number of UAR pages, rates far from 0. */
    static List<Measurement> levels() {
        String[] names = {"mpi-everywhere", "2x-dynamic", "dynamic", "shared-dynamic", "static", "mpi-threads", "mpi-threads+combining"};
        long[] uars = {16, 32, 16, 8, 8, 8, 8};
        double[] rates = {20.1, 21.0, 19.5, 18.7, 18.2, 9.3, 11.0};
        List<Measurement> out = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
            SweepPoint p = new SweepPoint("sim:mlx5", names[i], names[i], 16, 32, 64, 256, 1000, true, true, null, 1, "all");
            ResourceUsage r = new ResourceUsage(1, 1, 16, 16, 16, 0, 0, uars[i], uars[i] * 2, 16, 1 << 20);
            out.add(new Measurement(p, 1, 1000 * 16 / (rates[i] * 1e6), 1000L * 16, r, ""));
        }
        return out;
    }

    @Test
    void theTradeoffChartStartsAtZeroAndNamesEachLevelOnceInItsLegend(@TempDir Path tmp) throws Exception {
        List<Map<String, Object>> rows = ResultsWriter.summary(levels());
        JFreeChart chart = Charts.frontier(rows);
        chart.createBufferedImage(900, 560); // lays the axes out
        assertEquals(0.0, chart.getXYPlot().getRangeAxis().getLowerBound(), "the rate axis starts at 0");
        XYItemRenderer r = chart.getXYPlot().getRenderer();
        assertFalse(r.getDefaultItemLabelsVisible(), "no labels beside points: they overlap where levels share a count");
        assertEquals(7 + 1, chart.getXYPlot().getLegendItems().getItemCount(), "seven levels and the frontier");
        Set<String> shapes = new HashSet<>();
        for (int i = 0; i < 7; i++) {
            shapes.add(r.getSeriesShape(i).getBounds2D() + "/" + r.getSeriesShape(i).getClass());
        }
        assertTrue(shapes.size() > 1, "levels are told apart by marker shape as well as colour");
        List<Path> files = Charts.write(tmp, levels());
        assertTrue(files.contains(tmp.resolve("rate-vs-resources.svg")), files.toString());
        assertTrue(Files.readString(tmp.resolve("rate-vs-resources.svg")).contains("shared-dynamic"));
    }
}
