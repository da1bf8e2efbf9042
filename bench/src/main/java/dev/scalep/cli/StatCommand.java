package dev.scalep.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.scalep.verbs.counters.Counters;
import dev.scalep.verbs.counters.CountersFile;
import dev.scalep.verbs.sim.ShmAccess;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code scalep stat}: the live counters of every process of a job, as Aeron's AeronStat reads a
 * media driver's counters. Each scalep process that opens endpoints keeps its counters in a file
 * {@code stat-<job>@<pid>} in the user's private shared-memory directory; this command finds the
 * job's files by exact name, opens each as every shared file is opened (links refused, owner, mode
 * and link count checked), and prints per process the totals by kind ({@code ep.}, {@code qp.},
 * {@code cq.}) with rates per second since the previous sample, refreshing every interval.
 */
@Command(name = "stat", mixinStandardHelpOptions = true,
        description = {"Show the live runtime counters of the processes (all ranks) of a job: WRs, doorbells, postlist "
                + "lengths, completions, back-pressure, lock and combiner activity; rates per second.",
                "The job is --job, else SCALEP_JOB / -Dscalep.job / the PMIx namespace, else the only job running."})
final class StatCommand implements Callable<Integer> {
    private static final Pattern JOB = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final Pattern STAT_FILE = Pattern.compile("stat-([A-Za-z0-9._-]{1,64})@[0-9]{1,10}(\\.[1-7])?");

    @Option(names = "--job", paramLabel = "NAME", description = "The job whose processes to show (letters, digits, '.', '_', '-').")
    String job;

    @Option(names = "--interval", paramLabel = "SECONDS", defaultValue = "1",
            description = "Seconds between samples (0.1 to 3600; default ${DEFAULT-VALUE}).")
    double interval;

    @Option(names = "--count", paramLabel = "N", defaultValue = "0",
            description = "Samples to print, then exit (default 0: until interrupted, or until the job's processes are gone).")
    int count;

    @Option(names = "--objects", description = "Also print each endpoint's, QP's and CQ's own counters, not only the totals.")
    boolean objects;

    @Option(names = "--json", description = "Print one JSON object per sample per line (for scripts).")
    boolean json;

    @Option(names = "--dir", paramLabel = "DIR", hidden = true,
            description = "The directory of the counters files (default: the user's private directory under /dev/shm).")
    Path dir;

    /** The previous sample's values by pid and label, and its time. */
    private final Map<Long, Map<String, Long>> previous = new HashMap<>();
    private final Map<Long, Long> previousNanos = new HashMap<>();

    @Override
    public Integer call() throws Exception {
        if (!(interval >= 0.1 && interval <= 3600)) {
            throw new UserException("--interval " + interval + " must be between 0.1 and 3600 seconds");
        }
        if (count < 0) {
            throw new UserException("--count " + count + " must be 0 (until interrupted) or more");
        }
        if (job != null && !JOB.matcher(job).matches()) {
            throw new UserException("--job '" + job + "' is not a job name (1 to 64 letters, digits, '.', '_', '-')");
        }
        Path d = dir != null ? dir : ShmAccess.userDir();
        String j = job != null ? job : chooseJob(d);
        PrintStream out = System.out;
        ObjectMapper mapper = new ObjectMapper();
        boolean seen = false;
        for (int n = 0; count == 0 || n < count; n++) {
            if (n > 0) {
                Thread.sleep((long) (interval * 1000));
            }
            List<CountersFile.Snapshot> procs = sample(d, j);
            if (procs.isEmpty()) {
                if (seen) {
                    if (!json) {
                        out.println("job " + j + ": no process left");
                    }
                    return 0;
                }
                System.err.println("scalep stat: no running scalep process of job '" + j + "' (no counters file in " + d
                        + "; a process makes one when it opens endpoints, unless run with -Dscalep.counters=false)");
                return 1;
            }
            seen = true;
            if (json) {
                out.println(mapper.writeValueAsString(toJson(j, procs)));
            } else {
                print(out, j, procs);
            }
            out.flush();
            remember(procs);
        }
        return 0;
    }

    /** The job to show without --job: the environment's, else the only job with a live process. */
    private static String chooseJob(Path d) {
        String env = ShmAccess.sanitize(ShmAccess.defaultJob());
        if (!CountersFile.list(d, env).isEmpty()) {
            return env;
        }
        Map<String, Integer> jobs = new TreeMap<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(d)) {
            for (Path f : ds) {
                Matcher m = STAT_FILE.matcher(f.getFileName().toString());
                if (m.matches()) {
                    jobs.merge(m.group(1), 1, Integer::sum);
                }
            }
        } catch (IOException ignored) {
            // no directory: no jobs
        }
        if (jobs.size() == 1) {
            return jobs.keySet().iterator().next();
        }
        if (jobs.isEmpty()) {
            return env;
        }
        StringBuilder b = new StringBuilder();
        jobs.forEach((k, v) -> b.append(b.isEmpty() ? "" : ", ").append(k).append(" (").append(v).append(v == 1 ? " process)" : " processes)"));
        throw new UserException("several jobs are running: " + b + "; choose one with --job");
    }

    /** The live processes of the job, in rank order (files of dead processes and unreadable ones are skipped). */
    private static List<CountersFile.Snapshot> sample(Path d, String j) {
        List<CountersFile.Snapshot> out = new ArrayList<>();
        for (Path p : CountersFile.list(d, j)) {
            try {
                CountersFile.Snapshot s = CountersFile.read(p);
                if (s != null && s.alive()) {
                    out.add(s);
                }
            } catch (IOException | ShmAccess.Refused e) {
                System.err.println("scalep stat: skipped " + p + ": " + e.getMessage());
            }
        }
        out.sort((a, b) -> a.rank() != b.rank() ? Integer.compare(a.rank(), b.rank()) : Long.compare(a.pid(), b.pid()));
        return out;
    }

    /** The order totals are printed in (the order of docs/ARCHITECTURE.md's table); other names follow, sorted. */
    static final List<String> ORDER = List.of("ep.wrs", "ep.signaled", "ep.completions", "ep.back-pressured",
            "ep.failed-posts", "qp.wrs", "qp.doorbells", "qp.failed-wrs", "qp.postlist-1", "qp.postlist-2-3",
            "qp.postlist-4-7", "qp.postlist-8-15", "qp.postlist-16-31", "qp.postlist-32-63", "qp.postlist-64+",
            "qp.lock-acquired", "qp.lock-contended", "qp.handoffs", "qp.combiner-passes", "qp.combined-wrs",
            "qp.blueflame-writes", "cq.polls", "cq.completions", "cq.routed-away", "cq.unrouted");

    /** Totals by kind and name ({@code qp.doorbells}), in {@link #ORDER}. */
    static Map<String, Long> totals(CountersFile.Snapshot s) {
        Map<String, Long> sums = new TreeMap<>();
        for (CountersFile.Counter c : s.counters()) {
            sums.merge(kind(c.typeId()) + "." + c.name(), c.value(), Long::sum);
        }
        Map<String, Long> t = new LinkedHashMap<>();
        for (String k : ORDER) {
            Long v = sums.remove(k);
            if (v != null) {
                t.put(k, v);
            }
        }
        t.putAll(sums);
        return t;
    }

    private static String kind(int typeId) {
        return switch (typeId) {
            case Counters.TYPE_ENDPOINT -> "ep";
            case Counters.TYPE_QP -> "qp";
            case Counters.TYPE_CQ -> "cq";
            default -> "other";
        };
    }

    /** Rate per second of {@code key} since this process's previous sample, or NaN on its first. */
    private double rate(CountersFile.Snapshot s, String key, long value) {
        Map<String, Long> prev = previous.get(s.pid());
        Long then = previousNanos.get(s.pid());
        if (prev == null || then == null || !prev.containsKey(key) || s.nanoTime() <= then || value < prev.get(key)) {
            return Double.NaN; // first sample, or the object was closed and its counters reused meanwhile
        }
        return (value - prev.get(key)) * 1e9 / (s.nanoTime() - then);
    }

    private void remember(List<CountersFile.Snapshot> procs) {
        previous.clear();
        previousNanos.clear();
        for (CountersFile.Snapshot s : procs) {
            Map<String, Long> v = new HashMap<>(totals(s));
            for (CountersFile.Counter c : s.counters()) {
                v.put(c.label(), c.value());
            }
            previous.put(s.pid(), v);
            previousNanos.put(s.pid(), s.nanoTime());
        }
    }

    private void print(PrintStream out, String j, List<CountersFile.Snapshot> procs) {
        out.println("job " + j + " at " + Instant.now() + ": " + procs.size() + (procs.size() == 1 ? " process" : " processes"));
        for (CountersFile.Snapshot s : procs) {
            Map<String, Long> t = totals(s);
            out.printf("  rank %s pid %d (%d counters)%n", s.rank() < 0 ? "?" : s.rank() + " of " + s.size(), s.pid(),
                    s.counters().size());
            if (t.isEmpty()) {
                out.println("    (no endpoints open)");
            }
            for (Map.Entry<String, Long> e : t.entrySet()) {
                out.printf("    %-22s %16d %s%n", e.getKey(), e.getValue(), perSecond(rate(s, e.getKey(), e.getValue())));
            }
            String ratios = ratios(t);
            if (!ratios.isEmpty()) {
                out.println("    " + ratios);
            }
            if (objects) {
                for (CountersFile.Counter c : s.counters()) {
                    out.printf("      %-18s %-18s %16d %s%n", c.object(), c.name(), c.value(),
                            perSecond(rate(s, c.label(), c.value())));
                }
            }
        }
    }

    private static String perSecond(double r) {
        return Double.isNaN(r) ? "" : String.format("%14.0f/s", r);
    }

    /** Doorbells, completions and contended acquisitions per WR, and WRs per combiner pass, when there were WRs. */
    static String ratios(Map<String, Long> t) {
        long wrs = t.getOrDefault("qp.wrs", 0L);
        if (wrs == 0) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        b.append(String.format("doorbells/WR %.4f  completions/WR %.4f  contended/WR %.4f", (double) t.getOrDefault("qp.doorbells", 0L) / wrs,
                (double) t.getOrDefault("cq.completions", 0L) / wrs, (double) t.getOrDefault("qp.lock-contended", 0L) / wrs));
        long passes = t.getOrDefault("qp.combiner-passes", 0L);
        if (passes > 0) {
            b.append(String.format("  WRs/combiner pass %.2f", (double) t.getOrDefault("qp.combined-wrs", 0L) / passes));
        }
        return b.toString();
    }

    private Map<String, Object> toJson(String j, List<CountersFile.Snapshot> procs) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("time", Instant.now().toString());
        m.put("job", j);
        List<Map<String, Object>> ps = new ArrayList<>();
        for (CountersFile.Snapshot s : procs) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("pid", s.pid());
            p.put("rank", s.rank());
            p.put("size", s.size());
            p.put("file", s.path().toString());
            Map<String, Object> totals = new LinkedHashMap<>();
            for (Map.Entry<String, Long> e : totals(s).entrySet()) {
                totals.put(e.getKey(), valueAndRate(e.getValue(), rate(s, e.getKey(), e.getValue())));
            }
            p.put("totals", totals);
            if (objects) {
                List<Map<String, Object>> cs = new ArrayList<>();
                for (CountersFile.Counter c : s.counters()) {
                    Map<String, Object> o = new LinkedHashMap<>();
                    o.put("object", c.object());
                    o.put("kind", kind(c.typeId()));
                    o.put("name", c.name());
                    o.putAll(valueAndRate(c.value(), rate(s, c.label(), c.value())));
                    cs.add(o);
                }
                p.put("counters", cs);
            }
            ps.add(p);
        }
        m.put("processes", ps);
        return m;
    }

    private static Map<String, Object> valueAndRate(long value, double rate) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("value", value);
        v.put("perSecond", Double.isNaN(rate) ? null : Math.round(rate * 10) / 10.0);
        return v;
    }
}
