package dev.scalep.bench;

import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Where the sender threads' CPU time goes in the sweep's timed rounds, per configuration and per
 * layer of the stack ({@code scalep sweep --profile}): a JFR recording of CPU-time samples
 * ({@code jdk.CPUTimeSample}; where the JVM has none, {@code jdk.ExecutionSample}) beside the
 * sweep's own {@link SweepEvents}, read back after the run. A sample counts when it was taken on a
 * sender thread inside one of that thread's timed rounds that became a row, so warm-up rounds,
 * rounds measured again and the time between rounds are left out. Each sample goes to the layer of
 * its innermost frame in scalep's own code ({@link #layer}); JDK and library frames (memory
 * segments, JCTools queues) count to the scalep code that called them.
 */
public final class SenderProfile implements AutoCloseable {
    static final String CPU_SAMPLE = "jdk.CPUTimeSample";
    static final String EXECUTION_SAMPLE = "jdk.ExecutionSample";
    private static final String LOST = "jdk.CPUTimeSamplesLost";
    private static final String ROUND = "dev.scalep.SweepRound";
    private static final String ROW = "dev.scalep.SweepRow";

    /** The layers, in the order the table shows them. */
    public static final List<String> LAYERS = List.of("application", "endpoint", "posting", "completions", "provider",
            "counters", "other");

    private final Recording recording;
    private final String sampler;

    private SenderProfile(Recording recording, String sampler) {
        this.recording = recording;
        this.sampler = sampler;
    }

    /**
     * Start recording: CPU-time samples at most one per millisecond of a thread's CPU (the kernel's
     * tick may make them sparser: 4 ms at 250 Hz), or execution samples every millisecond where the
     * JVM has no CPU-time sampler. Throws {@link IllegalStateException} when the JVM has no flight
     * recorder.
     */
    public static SenderProfile start() {
        boolean cpu = false;
        for (EventType t : FlightRecorder.getFlightRecorder().getEventTypes()) {
            cpu |= t.getName().equals(CPU_SAMPLE);
        }
        Recording r = new Recording();
        r.setName("scalep sweep --profile");
        r.setToDisk(true);
        if (cpu) {
            r.enable(CPU_SAMPLE).with("throttle", "1 ms");
            r.enable(LOST);
        } else {
            r.enable(EXECUTION_SAMPLE).withPeriod(Duration.ofMillis(1));
        }
        r.enable(ROUND);
        r.enable(ROW);
        r.start();
        return new SenderProfile(r, cpu ? CPU_SAMPLE : EXECUTION_SAMPLE);
    }

    /** The sample event this profile records. */
    public String sampler() {
        return sampler;
    }

    /** Stop, write the recording to {@code jfr} and read it back. */
    public Report stop(Path jfr) throws IOException {
        recording.stop();
        recording.dump(jfr);
        recording.close();
        return read(jfr);
    }

    @Override
    public void close() {
        recording.close();
    }

    /** One configuration's samples: per layer and per innermost scalep method. */
    public record Point(int point, String configuration, int threads, int postlist, double mmsgPerSec, long samples,
                        Map<String, Long> layers, Map<String, Long> methods) {
        /** The share of the samples in {@code layer} (0 without samples). */
        public double share(String layer) {
            return samples == 0 ? 0 : layers.getOrDefault(layer, 0L) / (double) samples;
        }

        /**
         * Sender thread time per message in {@code layer}, in nanoseconds: its share of the sender
         * threads' time, the threads taken as running throughout the round on at most {@code cpus}
         * cores (the sweep's senders spin or yield; they do not sleep).
         */
        public double nanosPerMessage(String layer, int cpus) {
            return share(layer) * Math.min(threads, cpus) * 1e3 / mmsgPerSec;
        }

        /** The {@code n} methods with the most samples, most first. */
        public List<Map.Entry<String, Long>> hottest(int n) {
            return methods.entrySet().stream()
                    .sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                    .limit(n).toList();
        }
    }

    /** What a recording held: the configurations in the order they ran, and the CPU samples the JVM dropped (of any thread). */
    public record Report(String sampler, List<Point> points, long lost) {
    }

    /** A sender thread's timed round. */
    private record Span(long startNanos, long endNanos, int point, int round) {
    }

    /** Read a recording made while the sweep ran (by {@link #start} or {@code -XX:StartFlightRecording}). */
    public static Report read(Path jfr) throws IOException {
        Map<Long, List<Span>> spans = new HashMap<>();
        Set<Long> kept = new HashSet<>();
        Map<Integer, RecordedEvent> firstRow = new TreeMap<>();
        Map<Integer, List<Double>> rates = new HashMap<>();
        String sampler = null;
        try (RecordingFile f = new RecordingFile(jfr)) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                String type = e.getEventType().getName();
                if (type.equals(ROUND) && e.getThread() != null) {
                    spans.computeIfAbsent(e.getThread().getJavaThreadId(), k -> new ArrayList<>())
                            .add(new Span(nanos(e.getStartTime()), nanos(e.getEndTime()), e.getInt("point"), e.getInt("round")));
                } else if (type.equals(ROW)) {
                    int point = e.getInt("point");
                    kept.add(key(point, e.getInt("round")));
                    firstRow.putIfAbsent(point, e);
                    rates.computeIfAbsent(point, k -> new ArrayList<>()).add(e.getDouble("mmsgPerSec"));
                } else if (sampler == null && (type.equals(CPU_SAMPLE) || type.equals(EXECUTION_SAMPLE))) {
                    sampler = type;
                }
            }
        }
        for (List<Span> l : spans.values()) {
            l.sort(Comparator.comparingLong(Span::startNanos));
        }
        // A second pass: a round's event is committed when the round ends, after the samples taken in it.
        Map<Integer, long[]> layerCounts = new HashMap<>();
        Map<Integer, Map<String, Long>> methodCounts = new HashMap<>();
        long lost = 0;
        try (RecordingFile f = new RecordingFile(jfr)) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                String type = e.getEventType().getName();
                if (type.equals(LOST)) {
                    lost += e.getInt("lostSamples");
                    continue;
                }
                if (!type.equals(CPU_SAMPLE) && !type.equals(EXECUTION_SAMPLE)) {
                    continue;
                }
                RecordedThread t = type.equals(CPU_SAMPLE) ? e.getThread("eventThread") : e.getThread("sampledThread");
                List<Span> mine = t == null ? null : spans.get(t.getJavaThreadId());
                Span s = mine == null ? null : within(mine, nanos(e.getStartTime()));
                if (s == null || !kept.contains(key(s.point(), s.round()))) {
                    continue;
                }
                RecordedStackTrace st = e.getStackTrace();
                List<RecordedFrame> frames = st == null ? List.of() : st.getFrames();
                layerCounts.computeIfAbsent(s.point(), k -> new long[LAYERS.size()])[LAYERS.indexOf(layer(frames))]++;
                methodCounts.computeIfAbsent(s.point(), k -> new HashMap<>()).merge(innermost(frames), 1L, Long::sum);
            }
        }
        List<Point> points = new ArrayList<>();
        for (Map.Entry<Integer, RecordedEvent> row : firstRow.entrySet()) {
            int p = row.getKey();
            RecordedEvent e = row.getValue();
            long[] c = layerCounts.getOrDefault(p, new long[LAYERS.size()]);
            Map<String, Long> layers = new LinkedHashMap<>();
            long n = 0;
            for (int i = 0; i < c.length; i++) {
                layers.put(LAYERS.get(i), c[i]);
                n += c[i];
            }
            points.add(new Point(p, e.getString("configuration"), e.getInt("threads"), e.getInt("postlist"),
                    Stats.of(rates.get(p).stream().mapToDouble(Double::doubleValue).toArray()).median(), n, layers, Map.copyOf(methodCounts.getOrDefault(p, Map.of()))));
        }
        return new Report(sampler == null ? "none" : sampler, List.copyOf(points), lost);
    }

    private static long key(int point, int round) {
        return ((long) point << 32) | (round & 0xffff_ffffL);
    }

    private static long nanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    /** The span of {@code sorted} (by start; they do not overlap) that holds {@code t}, or null. */
    private static Span within(List<Span> sorted, long t) {
        int lo = 0;
        int hi = sorted.size() - 1;
        Span best = null;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            Span s = sorted.get(mid);
            if (s.startNanos() <= t) {
                best = s;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return best != null && t <= best.endNanos() ? best : null;
    }

    /**
     * The layer of a sample, from its innermost frame in scalep's code (frames innermost first):
     * the simulator and the verbs bindings are the provider; the CQ's router and the completion
     * rings are completions; the rest of {@code dev.scalep.threading} (posters, credits, locks) is
     * posting; {@code dev.scalep.endpoints} the endpoint; the sweep's loop the application. The
     * verbs' work-request and completion arrays belong to whoever writes or reads them, so they
     * pass to their caller, as JDK and library frames do. "other" is a sample with no scalep frame.
     */
    static String layer(List<RecordedFrame> frames) {
        for (RecordedFrame f : frames) {
            String l = layerOf(f.getMethod().getType().getName());
            if (l != null) {
                return l;
            }
        }
        return "other";
    }

    /** The layer of a class, or null for one that passes to its caller. */
    static String layerOf(String className) {
        if (!className.startsWith("dev.scalep.")) {
            return null;
        }
        String rest = className.substring("dev.scalep.".length());
        if (rest.startsWith("verbs.counters.")) {
            return "counters";
        }
        if (rest.startsWith("verbs.")) {
            return rest.indexOf('.', "verbs.".length()) >= 0 ? "provider" : null; // verbs.sim., verbs.ibv., verbs.ffm.
        }
        if (rest.startsWith("threading.")) {
            String simple = rest.substring("threading.".length());
            return simple.startsWith("CompletionRouter") || simple.startsWith("SpscCompletionRing")
                    || simple.startsWith("RoutedCompletion") || simple.startsWith("CqCounters") ? "completions" : "posting";
        }
        if (rest.startsWith("endpoints.")) {
            return "endpoint";
        }
        if (rest.startsWith("bench.") || rest.startsWith("cli.")) {
            return "application";
        }
        return "other";
    }

    /** The innermost frame in scalep's code as {@code Class.method}, or the innermost frame when none is. */
    static String innermost(List<RecordedFrame> frames) {
        for (RecordedFrame f : frames) {
            String c = f.getMethod().getType().getName();
            if (c.startsWith("dev.scalep.")) {
                return simpleName(c) + "." + f.getMethod().getName();
            }
        }
        return frames.isEmpty() ? "(no stack)" : simpleName(frames.get(0).getMethod().getType().getName()) + "."
                + frames.get(0).getMethod().getName();
    }

    private static String simpleName(String className) {
        int dot = className.lastIndexOf('.');
        return className.substring(dot + 1);
    }

    /** Print the table: per configuration its samples, the layers' shares and its hottest methods. */
    public static void print(Report r, PrintStream out, String where) {
        out.println("where the sender threads' CPU time went in the timed rounds (" + r.sampler() + "; " + where + "):");
        out.printf("  %-30s %7s %4s %8s", "LEVEL", "THREADS", "P", "SAMPLES");
        for (String l : LAYERS) {
            out.printf(" %12s", l.toUpperCase(Locale.ROOT));
        }
        out.println();
        for (Point p : r.points()) {
            out.printf("  %-30s %7d %4d %8d", trim(p.configuration(), 30), p.threads(), p.postlist(), p.samples());
            for (String l : LAYERS) {
                out.printf(" %11.1f%%", 100 * p.share(l));
            }
            out.println();
            StringBuilder hot = new StringBuilder();
            for (Map.Entry<String, Long> m : p.hottest(5)) {
                hot.append(hot.isEmpty() ? "" : ", ").append(m.getKey())
                        .append(String.format(" %.0f%%", 100.0 * m.getValue() / p.samples()));
            }
            if (!hot.isEmpty()) {
                out.println("      hottest: " + hot);
            }
        }
        long fewest = r.points().stream().mapToLong(Point::samples).min().orElse(0);
        if (fewest < 400) {
            out.printf("  note: %d samples in the sparsest configuration; a share from n samples is good to about "
                    + "+-1/sqrt(n) (%.0f%% there): more --messages or --repeat give more%n", fewest,
                    100 / Math.sqrt(Math.max(1, fewest)));
        }
        if (r.lost() > 0) {
            out.printf("  note: the JVM dropped %d CPU samples over the whole recording, of any thread (its queue of "
                    + "samples was full); the shares stand as long as the drops did not fall on one layer%n", r.lost());
        }
    }

    private static String trim(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 1) + "…";
    }

    /** Write profile.csv: a row per configuration and layer, with its samples, share and time per message. */
    public static void writeCsv(Report r, Path file, int cpus) throws IOException {
        CsvSchema schema = CsvSchema.builder().setUseHeader(true).addColumn("configuration").addColumn("threads")
                .addColumn("postlist").addColumn("mmsgPerSec").addColumn("samples").addColumn("layer")
                .addColumn("layerSamples").addColumn("share").addColumn("nsPerMessage").build();
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Point p : r.points()) {
            for (String l : LAYERS) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("configuration", p.configuration());
                row.put("threads", p.threads());
                row.put("postlist", p.postlist());
                row.put("mmsgPerSec", ResultsWriter.round(p.mmsgPerSec(), 4));
                row.put("samples", p.samples());
                row.put("layer", l);
                row.put("layerSamples", p.layers().getOrDefault(l, 0L));
                row.put("share", ResultsWriter.round(p.share(l), 4));
                row.put("nsPerMessage", ResultsWriter.round(p.nanosPerMessage(l, cpus), 3));
                rows.add(row);
            }
        }
        new CsvMapper().writer(schema).writeValue(file.toFile(), rows);
    }
}
