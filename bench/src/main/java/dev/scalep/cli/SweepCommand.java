package dev.scalep.cli;

import dev.scalep.bench.Charts;
import dev.scalep.bench.Measurement;
import dev.scalep.bench.ResultsWriter;
import dev.scalep.bench.RunOutput;
import dev.scalep.bench.SenderProfile;
import dev.scalep.bench.SweepPlan;
import dev.scalep.bench.SweepPoint;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.bench.SweepRunner;
import dev.scalep.bench.Warmup;
import dev.scalep.bench.Workload;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.Console;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
                "  scalep sweep --threads 1,2,4,8,16 --repeat 5 \\",
                "      --categories 2x-dynamic,static,mpi-threads",
                "  scalep sweep --without postlist --without unsignaled",
                "  scalep sweep --share qp --ways 1,2,4,8,16 --threads 16",
                "  scalep sweep --policy policies/catalog/recommended-mlx5.yaml",
                "  mpirun -np 2 ./scalep sweep --quick   (sender threads on rank 0, receiver on rank 1)",
                "  mpirun -np 2 ./scalep sweep --op tag --size 8 --threads 1,2   (tagged messages between the ranks)"})
final class SweepCommand implements Callable<Integer> {
    /** A row whose repeats spread more than this fraction of their median is flagged, and the run warns. */
    static final double LARGE_SPREAD = 0.25;

    @Option(names = "--device", paramLabel = "NAME", description = "Device (default: ${DEFAULT-VALUE}, the embedded simulator).")
    String device = Devices.DEFAULT;

    @Option(names = "--threads", paramLabel = "N", description = "Sender thread counts, separated by commas (default 1,2,4,8,16; --quick 1,2,4).")
    List<String> threads;

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
    int postlist = EndpointOptions.DEFAULTS.postlist();

    @Option(names = "--unsignaled", paramLabel = "Q", description = "q: one signaled completion every q WQEs (default ${DEFAULT-VALUE}).")
    int unsignaled = EndpointOptions.DEFAULTS.signalEvery();

    @Option(names = "--depth", paramLabel = "D", description = "d: send queue depth; c = d/q completions are polled at a time (default ${DEFAULT-VALUE}).")
    int depth = EndpointOptions.DEFAULTS.sendDepth();

    @Option(names = "--op", paramLabel = "OP", description = "What the senders post: write (default), read, send (a "
            + "receiver thread per endpoint reposts each receive), or tag (eager tagged messages through Messages, "
            + "each receiving slot keeping 32 receives posted).")
    String op = "write";

    @Option(names = "--size", paramLabel = "BYTES", description = "Payload bytes per message (default ${DEFAULT-VALUE}, the research's size).")
    int size = SweepRunner.PAYLOAD;

    @Option(names = "--without", paramLabel = "FEATURE",
            description = "Also run 'all w/o FEATURE' (postlist, unsignaled, inline, blueflame); repeatable.")
    List<String> without = new ArrayList<>();

    @Option(names = "--share", paramLabel = "AXIS", description = "x-way sharing sweep of one axis: buf, ctx, pd, mr, cq, qp.")
    String share;

    @Option(names = "--ways", paramLabel = "X", description = "Ways for --share, separated by commas; each must divide every "
            + "thread count (default: 1,2,4,... up to each thread count, the ones that divide it).")
    List<String> ways;

    @Option(names = "--qp-mode", paramLabel = "MODE", description = "How a shared QP serialises posts in --share qp: locked (the research) or combining (default ${DEFAULT-VALUE}).")
    String qpMode = "locked";

    @Option(names = "--repeat", paramLabel = "N", description = "Timed repeats per configuration (default 5; --quick 3). Untimed warm-up runs precede them: at least two, more until the JIT is quiet and the rate steady (at most 60, or 20 s).")
    Integer repeat;

    @Option(names = "--out", paramLabel = "DIR", description = "Output directory (default ${DEFAULT-VALUE}). It is checked "
            + "before anything runs; the files of the previous run there that this run does not rewrite are removed.")
    String out = "results";

    @Option(names = "--quick", description = "A short run that takes under a minute on 2 cores: threads 1,2,4, fewer messages, 3 repeats.")
    boolean quick;

    @Option(names = "--profile", description = "Also record where the sender threads' CPU time goes in the timed rounds "
            + "(JFR CPU-time samples): a table by layer (application, endpoint, posting, completions, provider, counters) "
            + "per configuration, and profile.csv and profile.jfr in the output directory. Two ranks: rank 0's threads.")
    boolean profile;

    @Option(names = "--no-progress", description = "No progress bar (there is none anyway when the output is not a terminal).")
    boolean noProgress;

    /** Where the table goes: standard output on rank 0, nowhere on rank 1. */
    private PrintStream say = System.out;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** Options that would be ignored with what else was given are refused, before anything runs. */
    private void refuseIgnored() {
        Checks.refuseUnless(spec, "--ways", share != null, "it sets the ways of --share; add --share AXIS or drop it");
        Checks.refuseUnless(spec, "--qp-mode", "qp".equalsIgnoreCase(share), "it applies to --share qp only");
        Checks.refuseUnless(spec, "--categories", share == null, "--share sweeps its own x-way levels; drop one of them");
        boolean noPolicy = policy == null;
        String why = "the endpoint classes of --policy set their own sharing and features; drop one of them";
        Checks.refuseUnless(spec, "--share", noPolicy, why);
        Checks.refuseUnless(spec, "--without", noPolicy, why);
        Checks.refuseUnless(spec, "--postlist", noPolicy, why);
        Checks.refuseUnless(spec, "--unsignaled", noPolicy, why);
        Checks.refuseUnless(spec, "--depth", noPolicy, why);
    }

    @Override
    public Integer call() throws Exception {
        refuseIgnored();
        List<Integer> threadCounts = threads == null ? null : Checks.ints("--threads", threads, 1, 1024);
        List<Integer> wayCounts = ways == null ? null : Checks.ints("--ways", ways, 1, 4096);
        List<String> withoutItems = Checks.items("--without", without, ",");
        Device dev = Devices.byName(device);
        Workload workload = new Workload(Workload.Op.parse("--op", op), size);
        workload.check(dev.name(), dev.capabilities());
        SweepPlan plan = SweepPlan.build(new SweepPlan.Request(dev, threadCounts, categories, policy, messages, postlist,
                unsignaled, depth, withoutItems, share, wayCounts, qpMode, repeat, quick));
        Path outDir = Checks.outputDir("--out", out);
        try (World world = World.open()) {
            RankAgreement.check(world, spec, Set.of("--out", "--no-progress"));
            if (world.size() > 2) {
                throw new UserException("the sweep runs on one rank, or on two (sender threads on rank 0, receiver on rank 1): "
                        + "launch it with mpirun -np 2, not " + world.size());
            }
            if (world.rank() != 0) {
                // rank 1 is the receiver: silent, and it writes nothing
                say = new PrintStream(OutputStream.nullOutputStream());
                return measure(world, dev, plan, workload, null);
            }
            RunOutput output = new RunOutput(outDir);
            Thread onInterrupt = new Thread(() -> System.err.println(System.lineSeparator() + "scalep sweep: "
                    + output.interrupted()), "sweep-interrupt");
            Runtime.getRuntime().addShutdownHook(onInterrupt);
            try {
                return measure(world, dev, plan, workload, output);
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(onInterrupt);
                } catch (IllegalStateException shuttingDown) {
                    // the hook is running: it reports what was kept
                }
            }
        }
    }

    /** Rank 0 prints and writes the results (into {@code output}); under a launcher rank 1 is silent. */
    private int measure(World world, Device dev, SweepPlan plan, Workload workload, RunOutput output) throws Exception {
        say.println("scalep sweep on " + dev.name() + (world.size() == 2 ? ", sender threads on rank 0, receiver on rank 1" : "")
                + ": " + plan.points().size() + " configurations x "
                + plan.repeats() + " repeats (+ warm-up runs each until the JIT is quiet), " + plan.messagesPerConfiguration() + " messages per configuration, p="
                + postlist + " q=" + unsignaled + " d=" + depth + ", " + workload.size() + "-byte " + workload.op().spelling() + "s");
        for (String n : plan.notes()) {
            say.println("  note: " + n);
        }
        say.print("warming up the JIT ...");
        say.flush();
        Warmup.run(world, dev, plan.points(), workload);
        say.println(" done");
        // after the JVM's warm-up, whose rounds are not the sweep's; on the rank with the sender threads
        SenderProfile recorder = profile && output != null ? startProfile() : null;
        try {
            return measure(world, dev, plan, workload, output, recorder);
        } finally {
            if (recorder != null) {
                recorder.close();
            }
        }
    }

    private static SenderProfile startProfile() {
        try {
            return SenderProfile.start();
        } catch (IllegalStateException | SecurityException e) {
            throw new UserException("--profile needs the JVM's flight recorder (JFR), which is not available here: " + e.getMessage());
        }
    }

    private int measure(World world, Device dev, SweepPlan plan, Workload workload, RunOutput output, SenderProfile recorder)
            throws Exception {
        List<Measurement> all = new ArrayList<>();
        long totalUnits = (long) plan.points().size() * plan.repeats();
        ProgressBarBuilder pbb = new ProgressBarBuilder().setTaskName("sweep").setInitialMax(totalUnits)
                .setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(500).continuousUpdate()
                .setMaxRenderedLength(100)
                .setConsumer(new me.tongfei.progressbar.ConsoleProgressBarConsumer(System.err));
        // CTRL-US: the control loop's time around the round (ControlLoop), the machine's speed then
        say.printf("%n%-30s %7s %6s %4s %4s %10s %8s %5s %5s %6s %6s %10s %8s%n", "LEVEL", "VARIANT", "THREADS", "P", "Q",
                "MMSG/S", "SECONDS", "QPS", "CQS", "UARPG", "UUARS", "MEMORY", "CTRL-US");

        // A progress bar only on a terminal: redirected to a file it would be a wall of redraws.
        Console console = System.console();
        boolean terminal = console != null && console.isTerminal();
        ProgressBar pb = noProgress || !terminal || world.rank() != 0 ? null : pbb.build();
        try {
            for (SweepPoint p : plan.points()) {
                if (pb != null) {
                    pb.setExtraMessage(p.label() + " x" + p.threads());
                }
                SweepRunner.run(world, dev, p, workload, plan.repeats(), Math.max(1, p.messages() / 2), m -> {
                    all.add(m);
                    if (pb != null) {
                        pb.step();
                        System.err.print("\r\033[2K"); // clear the bar's line; it redraws below the row
                        System.err.flush();
                    }
                    say.printf("%-30s %7s %6d %4d %4d %10.3f %8.3f %5d %5d %6d %6d %10s %8s%n", trim(p.label(), 30),
                            p.variant(), p.threads(), p.postlist(), m.unsignaledRan(), m.mmsgPerSec(), m.seconds(),
                            m.resources().qps(), m.resources().cqs(), m.resources().uarPages(), m.resources().uuars(),
                            bytes(m.resources().memoryBytes()),
                            m.controlNanos() == 0 ? "-" : String.valueOf(m.controlNanos() / 1000));
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
        settings.put("warmupMessages", "half of a repeat's per warm-up round; rounds until the JIT is quiet (warmupRounds)");
        settings.put("repeats", plan.repeats());
        settings.put("payloadBytes", workload.size());
        settings.put("op", workload.op().spelling());
        settings.put("ranks", world.size());
        // how the ranks found each other: pmix, pmi2, pmi1 (launched) or none (one process)
        settings.put("bootstrap", world.bootstrap());
        settings.put("notes", plan.notes());
        // The connection attributes every QP was created with: the defaults for flag-driven points, each
        // policy class's own for policy points (applied per QP; RTR/RTS use them on RC).
        settings.put("connection", EndpointOptions.DEFAULTS.connection().toMap());
        Map<String, Object> byClass = new LinkedHashMap<>();
        for (SweepPoint p : plan.points()) {
            if (p.policyClass() != null) {
                byClass.putIfAbsent(p.policyClass().name(), p.policyClass().connection().toMap());
            }
        }
        if (!byClass.isEmpty()) {
            settings.put("connectionByPolicyClass", byClass);
        }
        if (output == null) {
            return 0;
        }
        Path staging = output.staging();
        ResultsWriter.write(staging, all, settings);
        Charts.write(staging, all);
        SenderProfile.Report profiled = null;
        if (recorder != null) {
            profiled = recorder.stop(staging.resolve("profile.jfr"));
            SenderProfile.writeCsv(profiled, staging.resolve("profile.csv"), Runtime.getRuntime().availableProcessors());
        }
        List<Path> written = output.commit();
        say.println();
        say.println("median over repeats:");
        int wide = 0;
        for (Map<String, Object> row : ResultsWriter.summary(all)) {
            double spread = (Double) row.get("mmsgPerSecSpread");
            boolean large = spread > LARGE_SPREAD && plan.repeats() > 1;
            wide += large ? 1 : 0;
            say.printf("  %-30s %-14s %3s threads  %9.3f Mmsg/s  (min %.3f, max %.3f, spread %4.0f%%)%s%n",
                    trim((String) row.get("category"), 30), row.get("variant"), row.get("threads"), row.get("mmsgPerSec"),
                    row.get("mmsgPerSecMin"), row.get("mmsgPerSecMax"), 100 * spread, large ? "  <- large" : "");
        }
        if (wide > 0) {
            say.printf("warning: the repeats of %d configuration(s) spread more than %.0f%% of their median "
                    + "(max - min); the machine was probably busy, so their order may not hold: rerun them on a quiet "
                    + "machine or with more --repeat%n", wide, 100 * LARGE_SPREAD);
        }
        if (profiled != null) {
            say.println();
            SenderProfile.print(profiled, say, "profile.jfr and profile.csv in " + output.dir());
        }
        say.println();
        for (Path c : written) {
            say.println("wrote " + c);
        }
        return 0;
    }

    private static String trim(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 1) + "…";
    }

    static String bytes(long b) {
        if (b >= 1L << 30) {
            return String.format("%.1f GiB", b / 1073741824.0);
        }
        if (b >= 1 << 20) {
            return String.format("%.1f MiB", b / 1048576.0);
        }
        if (b >= 1 << 10) {
            return String.format("%.1f KiB", b / 1024.0);
        }
        return b + " B";
    }
}
