package dev.scalep.bench;

import dev.scalep.verbs.ResourceUsage;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.IntervalMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYErrorRenderer;
import org.jfree.chart.renderer.xy.XYItemRenderer;
import org.jfree.chart.ui.Layer;
import org.jfree.data.xy.YIntervalSeriesCollection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sweep's charts: the tradeoff chart (axis from 0, levels in the legend, the frontier) and the rate-vs-threads chart (min..max error bars, oversubscribed thread counts marked). */
class ChartsTest {
    /** Seven levels at 16 threads, three of them on the same number of UAR pages, rates far from 0. */
    static List<Measurement> levels() {
        String[] names = {"mpi-everywhere", "2x-dynamic", "dynamic", "shared-dynamic", "static", "mpi-threads", "mpi-threads+combining"};
        long[] uars = {16, 32, 16, 8, 8, 8, 8};
        double[] rates = {20.1, 21.0, 19.5, 18.7, 18.2, 9.3, 11.0};
        List<Measurement> out = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
            SweepPoint p = new SweepPoint("sim:mlx5", names[i], names[i], 16, 32, 64, 256, 1000, true, true, null, 1, "all");
            ResourceUsage r = new ResourceUsage(1, 1, 16, 16, 16, 0, 0, uars[i], uars[i] * 2, uars[i], 16, 1 << 20);
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


    private static List<Measurement> runs(double[][] ratesPerThreads, int[] threads) {
        List<Measurement> ms = new ArrayList<>();
        for (int t = 0; t < threads.length; t++) {
            SweepPoint p = new SweepPoint("sim:mlx5", "static", "static", threads[t], 32, 64, 256, 1_000_000, false,
                    true, null, 0, "all");
            for (int r = 0; r < ratesPerThreads[t].length; r++) {
                // 1e6 messages in 1/rate s: exactly `rate` million messages per second
                ms.add(new Measurement(p, r + 1, 1.0 / ratesPerThreads[t][r], 1_000_000, ResourceUsage.ZERO, ""));
            }
        }
        return ms;
    }

    @Test
    void errorBarsSpanMinToMaxAndOversubscriptionIsShaded(@TempDir Path dir) throws Exception {
        List<Measurement> ms = runs(new double[][]{{4, 5, 6}, {7, 9, 8}, {2, 3, 10}}, new int[]{1, 2, 4});
        JFreeChart c = Charts.rateVsThreads(ResultsWriter.summary(ms), 2);
        XYPlot plot = c.getXYPlot();
        assertInstanceOf(XYErrorRenderer.class, plot.getRenderer());
        YIntervalSeriesCollection d = (YIntervalSeriesCollection) plot.getDataset();
        assertEquals(5, d.getYValue(0, 0), 1e-9, "median");
        assertEquals(4, d.getStartYValue(0, 0), 1e-9, "min");
        assertEquals(6, d.getEndYValue(0, 0), 1e-9, "max");
        assertEquals(2, d.getStartYValue(0, 2), 1e-9);
        assertEquals(10, d.getEndYValue(0, 2), 1e-9);
        Collection<?> markers = plot.getDomainMarkers(Layer.BACKGROUND);
        assertEquals(1, markers.size(), "4 threads on 2 cores are marked");
        IntervalMarker m = (IntervalMarker) markers.iterator().next();
        assertTrue(m.getStartValue() > 2 && m.getStartValue() < 4 && m.getEndValue() >= 4, m.getStartValue() + ".." + m.getEndValue());
        assertTrue(m.getLabel().contains("more threads than the 2 cores"), m.getLabel());

        assertTrue(Charts.rateVsThreads(ResultsWriter.summary(ms), 4).getXYPlot().getDomainMarkers(Layer.BACKGROUND) == null
                || Charts.rateVsThreads(ResultsWriter.summary(ms), 4).getXYPlot().getDomainMarkers(Layer.BACKGROUND).isEmpty(),
                "no marker when every run fits the cores");
        List<Path> files = Charts.write(dir, ms, 2);
        String svg = Files.readString(dir.resolve("rate-vs-threads.svg"));
        assertTrue(files.contains(dir.resolve("rate-vs-threads.svg")));
        assertTrue(svg.contains("more threads than the 2 cores"), "the label is drawn");
    }
}
