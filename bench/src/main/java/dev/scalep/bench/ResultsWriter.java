package dev.scalep.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import dev.scalep.verbs.ResourceUsage;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a sweep's measurements: {@code results.csv} (one row per configuration and repeat) and
 * {@code results.json} (the machine and JVM, every row, and per-configuration median and spread).
 */
public final class ResultsWriter {
    /** CSV columns, the ones the sweep promises first. */
    public static final List<String> COLUMNS = List.of(
            "device", "category", "threads", "postlist", "unsignaled", "messages", "seconds", "mmsgPerSec",
            "qps", "cqs", "uarPages", "uuars", "memoryBytes",
            "repeat", "sharing", "depth", "inline", "blueFlame", "shareAxis", "ways", "variant",
            "contexts", "pds", "mrs", "srqs", "tds", "uarPagesInUse", "uuarsInUse", "unsignaledAsked", "ranks", "payloadBytes", "warmupRounds", "controlNs", "jitRounds", "notes",
            "doorbellsPerWr", "completionsPerWr", "wrsPerCombinerPass", "contendedPerWr", "handoffsPerWr",
            "wrs", "doorbells", "completions", "combinerPasses", "combinedWrs", "lockAcquired", "lockContended",
            "handoffs", "backPressured", "blueFlameWrites");

    /** The counter columns, written empty when the run had no counters. */
    static final List<String> COUNTER_COLUMNS = COLUMNS.subList(COLUMNS.indexOf("doorbellsPerWr"), COLUMNS.size());

    private ResultsWriter() {
    }

    /** One CSV/JSON row. */
    public static Map<String, Object> row(Measurement m) {
        SweepPoint p = m.point();
        ResourceUsage r = m.resources();
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("device", p.device());
        row.put("category", p.label());
        row.put("threads", p.threads());
        row.put("postlist", p.postlist());
        row.put("unsignaled", m.unsignaledRan()); // what ran; unsignaledAsked is what the point asked for
        row.put("messages", m.messages());
        row.put("seconds", round(m.seconds(), 6));
        row.put("mmsgPerSec", round(m.mmsgPerSec(), 4));
        row.put("qps", r.qps());
        row.put("cqs", r.cqs());
        row.put("uarPages", r.uarPages());
        row.put("uuars", r.uuars());
        row.put("memoryBytes", r.memoryBytes());
        row.put("repeat", m.repeat());
        row.put("sharing", p.sharing());
        row.put("depth", p.depth());
        row.put("inline", p.inline());
        row.put("blueFlame", p.blueFlame());
        row.put("shareAxis", p.shareAxis() == null ? "" : p.shareAxis());
        row.put("ways", p.ways());
        row.put("variant", p.variant());
        row.put("contexts", r.contexts());
        row.put("pds", r.pds());
        row.put("mrs", r.mrs());
        row.put("srqs", r.srqs());
        row.put("tds", r.tds());
        row.put("uarPagesInUse", r.uarPagesInUse());
        row.put("uuarsInUse", r.uuarsInUse());
        row.put("unsignaledAsked", p.unsignaled());
        row.put("ranks", m.ranks());
        row.put("payloadBytes", m.payloadBytes());
        row.put("warmupRounds", m.warmupRounds());
        row.put("controlNs", m.controlNanos());
        row.put("jitRounds", m.jitRounds());
        row.put("notes", m.notes() == null ? "" : m.notes());
        putCounters(row, m.counters());
        return row;
    }

    /** The counter columns of {@code c} (empty values when null: counting was off). */
    static void putCounters(Map<String, Object> row, CounterDelta c) {
        if (c == null) {
            for (String k : COUNTER_COLUMNS) {
                row.put(k, null);
            }
            return;
        }
        row.put("doorbellsPerWr", ratio(c.doorbellsPerWr()));
        row.put("completionsPerWr", ratio(c.completionsPerWr()));
        row.put("wrsPerCombinerPass", ratio(c.wrsPerCombinerPass()));
        row.put("contendedPerWr", ratio(c.contendedPerWr()));
        row.put("handoffsPerWr", ratio(c.handoffsPerWr()));
        row.put("wrs", c.wrs());
        row.put("doorbells", c.doorbells());
        row.put("completions", c.completions());
        row.put("combinerPasses", c.combinerPasses());
        row.put("combinedWrs", c.combinedWrs());
        row.put("lockAcquired", c.lockAcquired());
        row.put("lockContended", c.lockContended());
        row.put("handoffs", c.handoffs());
        row.put("backPressured", c.backPressured());
        row.put("blueFlameWrites", c.blueFlameWrites());
    }

    private static Double ratio(double v) {
        return Double.isNaN(v) ? null : round(v, 6);
    }

    static double round(double v, int digits) {
        double f = Math.pow(10, digits);
        return Math.round(v * f) / f;
    }

    /** The machine and JVM the numbers come from. */
    public static Map<String, Object> environment() {
        Map<String, Object> env = new LinkedHashMap<>();
        env.put("timestamp", Instant.now().toString());
        try {
            env.put("host", InetAddress.getLocalHost().getHostName());
        } catch (IOException e) {
            env.put("host", "unknown");
        }
        env.put("cpus", Runtime.getRuntime().availableProcessors());
        // the 1-minute load average when the results are written: other work on the machine shows here
        env.put("loadAverage", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        env.put("cpuModel", cpuModel());
        env.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
        env.put("jvm", System.getProperty("java.vm.vendor") + " " + System.getProperty("java.vm.name") + " "
                + System.getProperty("java.runtime.version"));
        env.put("jvmArgs", ManagementFactory.getRuntimeMXBean().getInputArguments());
        env.put("maxHeapBytes", Runtime.getRuntime().maxMemory());
        return env;
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux: leave it out
        }
        return "unknown";
    }

    /** Rows grouped by configuration (everything but the repeat) with median and spread of the rate. */
    public static List<Map<String, Object>> summary(List<Measurement> ms) {
        Map<SweepPoint, List<Measurement>> by = new LinkedHashMap<>();
        for (Measurement m : ms) {
            by.computeIfAbsent(m.point(), k -> new ArrayList<>()).add(m);
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map.Entry<SweepPoint, List<Measurement>> e : by.entrySet()) {
            double[] rates = e.getValue().stream().mapToDouble(Measurement::mmsgPerSec).toArray();
            Stats s = Stats.of(rates);
            Map<String, Object> row = row(e.getValue().getFirst());
            row.remove("repeat");
            row.remove("seconds");
            row.put("repeats", s.n());
            row.put("mmsgPerSec", round(s.median(), 4));
            row.put("mmsgPerSecMin", round(s.min(), 4));
            row.put("mmsgPerSecMax", round(s.max(), 4));
            row.put("mmsgPerSecMad", round(s.mad(), 4));
            row.put("mmsgPerSecSpread", round(s.median() > 0 ? (s.max() - s.min()) / s.median() : 0, 4)); // (max - min) / median
            // counters of the configuration: summed over its repeats, ratios of the sums
            CounterDelta sum = null;
            for (Measurement m : e.getValue()) {
                sum = m.counters() == null ? null : sum == null ? m.counters() : sum.plus(m.counters());
                if (m.counters() == null) {
                    break;
                }
            }
            putCounters(row, sum);
            out.add(row);
        }
        return out;
    }

    /** Write results.csv and results.json into {@code dir}. */
    public static void write(Path dir, List<Measurement> ms, Map<String, Object> settings) throws IOException {
        Files.createDirectories(dir);
        CsvSchema.Builder schema = CsvSchema.builder().setUseHeader(true);
        for (String c : COLUMNS) {
            schema.addColumn(c);
        }
        List<Map<String, Object>> rows = ms.stream().map(ResultsWriter::row).toList();
        new CsvMapper().writer(schema.build()).writeValue(dir.resolve("results.csv").toFile(), rows);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("environment", environment());
        json.put("settings", settings);
        List<Map<String, Object>> summary = summary(ms);
        json.put("summary", summary);
        json.put("frontier", Frontier.ofSweep(summary));
        json.put("rows", rows);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(dir.resolve("results.json").toFile(), json);
    }
}
