package dev.scalep.cli;

import dev.scalep.bench.Charts;
import dev.scalep.bench.Measurement;
import dev.scalep.bench.ResultsWriter;
import dev.scalep.bench.SweepPlan;
import dev.scalep.bench.SweepPoint;
import dev.scalep.bench.SweepRunner;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code scalep sweep}: the sharing-tradeoff message-rate benchmark. */
@Command(name = "sweep", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
                "The sharing-tradeoff sweep: sender threads post 2-byte RDMA writes to a receiver on QPs of depth d, "
                        + "in multiples of postlist p, one signaled completion every q, polling c = d/q at a time; for each "
                        + "sharing level and thread count it records the message rate and the resources the level allocated.",
                "Writes results.csv, results.json and SVG charts to --out."},
        footer = {"", "Examples:",
                "  scalep sweep --quick",
                "  scalep sweep --threads 1,2,4,8,16 --categories 2x-dynamic,static,mpi-threads --repeat 5",
                "  scalep sweep --without postlist --without unsignaled",
                "  scalep sweep --share qp --ways 1,2,4,8,16 --threads 16",
                "  scalep sweep --policy policies/catalog/recommended-mlx5.yaml",
                "  mpirun -np 2 ./scalep sweep --quick   (sender threads on rank 0, receiver on rank 1)"})
final class SweepCommand implements Callable<Integer> {
    @Option(names = "--device", paramLabel = "NAME", description = "Device (default: ${DEFAULT-VALUE}, the embedded simulator).")
    String device = Devices.DEFAULT;

    @Option(names = "--threads", split = ",", paramLabel = "N", description = "Sender thread counts (default 1,2,4,8,16; --quick 1,2,4).")
    List<Integer> threads;

    @Option(names = "--categories", paramLabel = "LEVELS",
            description = "Sharing levels, repeatable: category names separated by commas (2x-dynamic,static), or an axes "
                    + "form (dynamic,cq=shared); separate several axes forms with ';'. Default: the six categories plus "
                    + "mpi-threads with a combining shared QP.")
    List<String> categories;

    @Option(names = "--policy", paramLabel = "FILE", description = "Sweep the endpoint classes of a policy file (or catalog:NAME) instead of categories.")
    String policy;

    @Option(names = "--messages", paramLabel = "N", description = "Messages per configuration and repeat, split evenly over "
            + "the sender threads (default 2000000; --quick 1000000).")
    Long messages;

    @Option(names = "--postlist", paramLabel = "P", description = "p: work requests per doorbell (default ${DEFAULT-VALUE}).")
    int postlist = 32;

    @Option(names = "--unsignaled", paramLabel = "Q", description = "q: one signaled completion every q WQEs (default ${DEFAULT-VALUE}).")
    int unsignaled = 64;

    @Option(names = "--depth", paramLabel = "D", description = "d: send queue depth; c = d/q completions are polled at a time (default ${DEFAULT-VALUE}).")
    int depth = 256;

    @Option(names = "--without", paramLabel = "FEATURE",
            description = "Also run 'all w/o FEATURE' (postlist, unsignaled, inline, blueflame); repeatable.")
    List<String> without = new ArrayList<>();

    @Option(names = "--share", paramLabel = "AXIS", description = "x-way sharing sweep of one axis: buf, ctx, pd, mr, cq, qp.")
    String share;

    @Option(names = "--ways", split = ",", paramLabel = "X", description = "Ways for --share (default 1,2,4,... up to the largest thread count).")
    List<Integer> ways;

    @Option(names = "--qp-mode", paramLabel = "MODE", description = "How a shared QP serialises posts in --share qp: locked (the research) or combining (default ${DEFAULT-VALUE}).")
    String qpMode = "locked";

    @Option(names = "--repeat", paramLabel = "N", description = "Timed repeats per configuration (default 5; --quick 3). Two untimed warm-up runs precede them.")
    Integer repeat;

    @Option(names = "--out", paramLabel = "DIR", description = "Output directory (default ${DEFAULT-VALUE}).")
    Path out = Path.of("results");

    @Option(names = "--quick", description = "A run of about a minute on 2 cores: threads 1,2,4, fewer messages, 3 repeats.")
    boolean quick;

    @Option(names = "--no-progress", description = "No progress bar (there is none anyway when the output is not a terminal).")
    boolean noProgress;

    @Option(names = "--size", paramLabel = "BYTES", description = "Payload of each RDMA write (default ${DEFAULT-VALUE}, the research's message size).")
    int size = SweepRunner.PAYLOAD;

    /** Rank 0 prints and writes the results; under a launcher the other rank is silent. */
    private java.io.PrintStream say = System.out;

    @Override
    public Integer call() throws Exception {
        if (size < 1 || size > (1 << 20)) {
            throw new UserException("--size must be in 1..1048576 bytes: " + size);
        }
        Device dev = Devices.byName(device);
        SweepPlan plan = SweepPlan.build(new SweepPlan.Request(dev, threads, categories, policy, messages, postlist,
                unsignaled, depth, without, share, ways, qpMode, repeat, quick));
        try (World world = World.open()) {
            if (world.size() > 2) {
                throw new UserException("the sweep runs on one rank, or on two (sender threads on rank 0, receiver on rank 1): "
                        + "launch it with mpirun -np 2, not " + world.size());
            }
            if (world.rank() != 0) {
                say = new java.io.PrintStream(java.io.OutputStream.nullOutputStream());
            }
            return sweep(world, dev, plan);
        }
    }

    private int sweep(World world, Device dev, SweepPlan plan) throws Exception {
        boolean lead = world.rank() == 0;
        say.println("scalep sweep on " + dev.name() + (world.size() == 2 ? ", sender threads on rank 0, receiver on rank 1" : "")
                + ": " + plan.points().size() + " configurations x "
                + plan.repeats() + " repeats (+2 warm-up runs each), " + plan.messagesPerConfiguration() + " messages per configuration, p="
                + postlist + " q=" + unsignaled + " d=" + depth + ", " + size + "-byte writes");
        for (String n : plan.notes()) {
            say.println("  note: " + n);
        }
        List<Measurement> all = new ArrayList<>();
        long totalUnits = (long) plan.points().size() * plan.repeats();
        ProgressBarBuilder pbb = new ProgressBarBuilder().setTaskName("sweep").setInitialMax(totalUnits)
                .setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(500).continuousUpdate()
                .setMaxRenderedLength(100)
                .setConsumer(new me.tongfei.progressbar.ConsoleProgressBarConsumer(System.err));
        // JIT warm-up before anything is timed: every distinct sharing level and variant runs once at the
        // largest thread count, so that the data path of each send path (exclusive, locked, combining)
        // is compiled before the first measurement (each configuration also gets its own warm-up run).
        say.print("warming up the JIT ...");
        say.flush();
        java.util.Map<String, SweepPoint> warm = new java.util.LinkedHashMap<>();
        int maxThreads = plan.points().stream().mapToInt(SweepPoint::threads).max().orElse(1);
        for (SweepPoint p : plan.points()) {
            warm.putIfAbsent(p.sharing() + "|" + p.variant(), p);
        }
        for (SweepPoint p : warm.values()) {
            SweepRunner.run(world, dev, new SweepPoint(p.device(), "jvm warm-up", p.sharing(), maxThreads, p.postlist(),
                    p.unsignaled(), p.depth(), Math.max(5_000, 400_000 / maxThreads),
                    p.inline(), p.blueFlame(), p.shareAxis(),
                    p.ways(), p.variant()), 1, 0, size, m -> { });
        }
        awaitJitQuiet();
        say.println(" done");
        say.printf("%n%-30s %7s %6s %4s %4s %10s %8s %5s %5s %6s %6s %10s%n", "LEVEL", "VARIANT", "THREADS", "P", "Q",
                "MMSG/S", "SECONDS", "QPS", "CQS", "UARPG", "UUARS", "MEMORY");

        // A progress bar only on a terminal: redirected to a file it would be a wall of redraws.
        java.io.Console console = System.console();
        boolean terminal = console != null && console.isTerminal();
        ProgressBar pb = noProgress || !terminal || !lead ? null : pbb.build();
        try {
            for (SweepPoint p : plan.points()) {
                if (pb != null) {
                    pb.setExtraMessage(p.label() + " x" + p.threads());
                }
                SweepRunner.run(world, dev, p, plan.repeats(), Math.max(1, p.messages() / 2), size, m -> {
                    all.add(m);
                    if (pb != null) {
                        pb.step();
                        System.err.print("\r\033[2K"); // clear the bar's line; it redraws below the row
                        System.err.flush();
                    }
                    say.printf("%-30s %7s %6d %4d %4d %10.3f %8.3f %5d %5d %6d %6d %10s%n", trim(p.label(), 30),
                            p.variant(), p.threads(), p.postlist(), p.unsignaled(), m.mmsgPerSec(), m.seconds(),
                            m.resources().qps(), m.resources().cqs(), m.resources().uarPages(), m.resources().uuars(),
                            bytes(m.resources().memoryBytes()));
                    if (m.notes() != null && !m.notes().isEmpty() && m.repeat() == 1) {
                        say.println("    substituted: " + m.notes());
                    }
                });
            }
        } finally {
            if (pb != null) {
                pb.close();
            }
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("device", dev.name());
        settings.put("postlist", postlist);
        settings.put("unsignaled", unsignaled);
        settings.put("depth", depth);
        settings.put("messagesPerConfiguration", plan.messagesPerConfiguration());
        settings.put("warmupMessages", "half of a repeat's, per configuration");
        settings.put("repeats", plan.repeats());
        settings.put("payloadBytes", size);
        settings.put("ranks", world.size());
        settings.put("notes", plan.notes());
        if (!lead) {
            return 0;
        }
        ResultsWriter.write(out, all, settings);
        List<Path> charts = Charts.write(out, all);
        say.println();
        say.println("median over repeats:");
        for (Map<String, Object> row : ResultsWriter.summary(all)) {
            say.printf("  %-30s %-14s %3s threads  %9.3f Mmsg/s  (min %.3f, max %.3f)%n", trim((String) row.get("category"), 30),
                    row.get("variant"), row.get("threads"), row.get("mmsgPerSec"), row.get("mmsgPerSecMin"), row.get("mmsgPerSecMax"));
        }
        say.println();
        say.println("wrote " + out.resolve("results.csv") + ", " + out.resolve("results.json"));
        for (Path c : charts) {
            say.println("wrote " + c);
        }
        return 0;
    }

    /**
     * Wait (at most 10 s) until the JIT compilers have been idle for 300 ms: on a 2-core machine a
     * compiler thread still working through the warm-up's queue would take a core from the first
     * configuration measured.
     */
    static void awaitJitQuiet() throws InterruptedException {
        java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            Thread.sleep(1000);
            return;
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        long last = jit.getTotalCompilationTime();
        int quiet = 0;
        while (quiet < 3 && System.nanoTime() < deadline) {
            Thread.sleep(100);
            long now = jit.getTotalCompilationTime();
            quiet = now == last ? quiet + 1 : 0;
            last = now;
        }
    }

    private static String trim(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 1) + "…";
    }

    static String bytes(long b) {
        if (b >= 1 << 20) {
            return String.format("%.1f MiB", b / 1048576.0);
        }
        if (b >= 1 << 10) {
            return String.format("%.1f KiB", b / 1024.0);
        }
        return b + " B";
    }
}
