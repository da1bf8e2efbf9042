package dev.scalep.bench;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.DefaultDrawingSupplier;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.plot.IntervalMarker;
import org.jfree.chart.renderer.xy.XYErrorRenderer;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.Layer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.YIntervalSeries;
import org.jfree.data.xy.YIntervalSeriesCollection;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;
import org.jfree.svg.SVGUtils;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Rectangle;
import java.awt.Shape;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * SVG charts of a sweep (JFreeChart drawn into JFreeSVG): message rate vs threads per category,
 * message rate vs hardware resources (the tradeoff frontier), the x-way sharing sweeps, and the
 * "all w/o feature" ablations. Each plots the median over repeats; the rate-vs-threads chart also draws
 * the min..max over repeats as error bars and shades the thread counts above the machine's cores.
 */
public final class Charts {
    private static final int W = 900;
    private static final int H = 560;

    private Charts() {
    }

    /** Write every chart the measurements support into {@code dir}; returns the files written. */
    public static List<Path> write(Path dir, List<Measurement> ms) throws IOException {
        return write(dir, ms, Runtime.getRuntime().availableProcessors());
    }

    /** As {@link #write(Path, List)}, marking thread counts above {@code cores}. */
    public static List<Path> write(Path dir, List<Measurement> ms, int cores) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<Map<String, Object>> rows = ResultsWriter.summary(ms);
        List<Path> out = new ArrayList<>();
        List<Map<String, Object>> base = rows.stream()
                .filter(r -> "".equals(r.get("shareAxis")) && "all".equals(r.get("variant"))).toList();
        if (!base.isEmpty()) {
            out.add(save(dir.resolve("rate-vs-threads.svg"), rateVsThreads(base, cores)));
            out.add(save(dir.resolve("rate-vs-resources.svg"), frontier(base)));
        }
        List<Map<String, Object>> sharing = rows.stream().filter(r -> !"".equals(r.get("shareAxis"))).toList();
        if (!sharing.isEmpty()) {
            out.add(save(dir.resolve("sharing-sweeps.svg"), sharingSweeps(sharing)));
        }
        List<Map<String, Object>> ablations = rows.stream().filter(r -> "".equals(r.get("shareAxis"))).toList();
        if (ablations.stream().anyMatch(r -> !"all".equals(r.get("variant")))) {
            out.add(save(dir.resolve("features.svg"), features(ablations)));
        }
        return out;
    }

    private static double num(Map<String, Object> r, String k) {
        return ((Number) r.get(k)).doubleValue();
    }

    /** Median per category with min..max error bars; thread counts above {@code cores} shaded and labelled. */
    static JFreeChart rateVsThreads(List<Map<String, Object>> rows, int cores) {
        Map<String, YIntervalSeries> series = new LinkedHashMap<>();
        for (Map<String, Object> r : rows) {
            series.computeIfAbsent((String) r.get("category"), YIntervalSeries::new).add(num(r, "threads"),
                    num(r, "mmsgPerSec"), num(r, "mmsgPerSecMin"), num(r, "mmsgPerSecMax"));
        }
        YIntervalSeriesCollection data = new YIntervalSeriesCollection();
        series.values().forEach(data::addSeries);
        JFreeChart chart = ChartFactory.createXYLineChart("Message rate vs threads (" + rows.getFirst().get("device")
                        + ", median, bars: min..max of the repeats)",
                "sender threads", "million messages / s", data, PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        XYErrorRenderer bars = new XYErrorRenderer();
        bars.setDrawXError(false);
        bars.setCapLength(6);
        plot.setRenderer(bars);
        plot.setDomainAxis(log2Axis("sender threads"));
        double maxThreads = rows.stream().mapToDouble(r -> num(r, "threads")).max().orElse(1);
        if (maxThreads > cores) {
            IntervalMarker over = new IntervalMarker(cores * Math.sqrt(2), maxThreads * 1.1, new Color(0, 0, 0, 20));
            over.setLabel("more threads than the " + cores + " cores");
            over.setLabelAnchor(RectangleAnchor.TOP);
            over.setLabelTextAnchor(TextAnchor.TOP_CENTER);
            over.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            plot.addDomainMarker(over, Layer.BACKGROUND);
        }
        style(chart, true);
        return chart;
    }

    static JFreeChart frontier(List<Map<String, Object>> rows) {
        double maxThreads = rows.stream().mapToDouble(r -> num(r, "threads")).max().orElse(1);
        Map<String, XYSeries> series = new LinkedHashMap<>();
        for (Map<String, Object> r : rows) {
            if (num(r, "threads") == maxThreads) {
                double resources = num(r, "uarPages") > 0 ? num(r, "uarPages") : num(r, "memoryBytes") / 1024.0;
                series.computeIfAbsent((String) r.get("category"), XYSeries::new).addOrUpdate(resources, num(r, "mmsgPerSec"));
            }
        }
        boolean uars = rows.stream().anyMatch(r -> num(r, "uarPages") > 0);
        XYSeriesCollection data = new XYSeriesCollection();
        series.values().forEach(data::addSeries);
        XYSeries pareto = paretoSeries(rows, maxThreads, uars);
        data.addSeries(pareto);
        JFreeChart chart = ChartFactory.createScatterPlot(
                "Message rate vs hardware resources, " + (int) maxThreads + " threads (the tradeoff)",
                uars ? "UAR pages allocated (fewer is better)" : "software memory, KiB (less is better)",
                "million messages / s (more is better)", data, PlotOrientation.VERTICAL, true, false, false);
        style(chart, false);
        // Levels often share a resource count, so labels beside the points would overlap and clip at the
        // plot's edge: each level is named once in the legend, told apart by colour and marker shape.
        XYLineAndShapeRenderer renderer = (XYLineAndShapeRenderer) chart.getXYPlot().getRenderer();
        renderer.setDefaultItemLabelsVisible(false);
        Shape[] shapes = DefaultDrawingSupplier.createStandardSeriesShapes();
        for (int i = 0; i < data.getSeriesCount(); i++) {
            renderer.setSeriesShape(i, shapes[i % shapes.length]);
        }
        chart.getXYPlot().getDomainAxis().setLowerMargin(0.08);
        chart.getXYPlot().getDomainAxis().setUpperMargin(0.08);
        NumberAxis y = (NumberAxis) chart.getXYPlot().getRangeAxis();
        y.setAutoRangeIncludesZero(true); // a rate axis starts at 0, or small differences look large
        y.setUpperMargin(0.08);
        // the frontier: a dashed line through the points no other point beats on both axes, unlabelled
        int f = data.getSeriesCount() - 1;
        renderer.setSeriesLinesVisible(f, true);
        renderer.setSeriesShapesVisible(f, false);
        renderer.setSeriesItemLabelsVisible(f, false);
        renderer.setSeriesPaint(f, Color.DARK_GRAY);
        renderer.setSeriesStroke(f, new BasicStroke(1.5f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND, 1f,
                new float[]{6f, 4f}, 0f));
        return chart;
    }

    /** The frontier at {@code threads} on the chart's axes ({@link Frontier}), as a series sorted by resources. */
    private static XYSeries paretoSeries(List<Map<String, Object>> rows, double threads, boolean uars) {
        List<Map<String, Object>> at = rows.stream().filter(r -> num(r, "threads") == threads).toList();
        ToDoubleFunction<Map<String, Object>> x =
                r -> uars ? num(r, "uarPages") : num(r, "memoryBytes") / 1024.0;
        XYSeries s = new XYSeries("Pareto frontier (no level beats it on both)", true, true);
        for (Map<String, Object> r : Frontier.of(at, r -> num(r, "mmsgPerSec"), List.of(x))) {
            s.add(x.applyAsDouble(r), num(r, "mmsgPerSec"));
        }
        return s;
    }

    static JFreeChart sharingSweeps(List<Map<String, Object>> rows) {
        Map<String, XYSeries> series = new LinkedHashMap<>();
        for (Map<String, Object> r : rows) {
            String name = r.get("shareAxis") + " shared (" + (int) num(r, "threads") + " threads)";
            series.computeIfAbsent(name, XYSeries::new).addOrUpdate(num(r, "ways"), num(r, "mmsgPerSec"));
        }
        XYSeriesCollection data = new XYSeriesCollection();
        series.values().forEach(data::addSeries);
        JFreeChart chart = ChartFactory.createXYLineChart("x-way sharing of one resource (median)",
                "ways (threads per instance)", "million messages / s", data, PlotOrientation.VERTICAL, true, false, false);
        chart.getXYPlot().setDomainAxis(log2Axis("ways (threads per instance)"));
        style(chart, true);
        return chart;
    }

    static JFreeChart features(List<Map<String, Object>> rows) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        double maxThreads = rows.stream().mapToDouble(r -> num(r, "threads")).max().orElse(1);
        for (Map<String, Object> r : rows) {
            if (num(r, "threads") == maxThreads) {
                data.addValue(num(r, "mmsgPerSec"), (String) r.get("variant"), (String) r.get("category"));
            }
        }
        JFreeChart chart = ChartFactory.createBarChart("Features: all vs all without one, " + (int) maxThreads + " threads",
                "category", "million messages / s", data, PlotOrientation.VERTICAL, true, false, false);
        CategoryPlot plot = chart.getCategoryPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(new Color(220, 220, 220));
        chart.setBackgroundPaint(Color.WHITE);
        return chart;
    }

    /** A base-2 logarithmic axis labelled with plain integers (1, 2, 4, 8, 16). */
    private static LogAxis log2Axis(String label) {
        LogAxis x = new LogAxis(label);
        x.setBase(2);
        x.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
        x.setNumberFormatOverride(new DecimalFormat("0"));
        x.setLowerMargin(0.05);
        x.setUpperMargin(0.05);
        return x;
    }

    /** Distinct colours that read on white (no pale yellow). */
    private static final Color[] PALETTE = {
            new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0xd62728),
            new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f),
            new Color(0xbcbd22), new Color(0x17becf)};

    private static void style(JFreeChart chart, boolean lines) {
        chart.setBackgroundPaint(Color.WHITE);
        chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        XYPlot plot = chart.getXYPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(220, 220, 220));
        plot.setRangeGridlinePaint(new Color(220, 220, 220));
        XYLineAndShapeRenderer r = (XYLineAndShapeRenderer) plot.getRenderer();
        r.setDefaultShapesVisible(true);
        r.setDefaultLinesVisible(lines);
        for (int i = 0; i < plot.getDataset().getSeriesCount(); i++) {
            r.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
            r.setSeriesStroke(i, new BasicStroke(2f));
            r.setSeriesShapesVisible(i, true);
            r.setSeriesLinesVisible(i, lines);
        }
    }

    private static Path save(Path file, JFreeChart chart) throws IOException {
        SVGGraphics2D g = new SVGGraphics2D(W, H);
        chart.draw(g, new Rectangle(0, 0, W, H));
        SVGUtils.writeToSVG(file.toFile(), g.getSVGElement());
        return file;
    }
}
