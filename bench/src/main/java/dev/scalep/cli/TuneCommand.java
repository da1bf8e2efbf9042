package dev.scalep.cli;

import dev.scalep.bench.Charts;
import dev.scalep.bench.Measurement;
import dev.scalep.bench.ResultsWriter;
import dev.scalep.bench.Stats;
import dev.scalep.bench.SweepRunner;
import dev.scalep.bench.Warmup;
import dev.scalep.bench.Workload;
import dev.scalep.bench.tune.Candidate;
import dev.scalep.bench.tune.Choice;
import dev.scalep.bench.tune.ChoiceRule;
import dev.scalep.bench.tune.Resource;
import dev.scalep.bench.tune.TuneCandidates;
import dev.scalep.bench.tune.TuneReport;
import dev.scalep.policies.Policy;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.spmd.World;
import dev.scalep.bench.tune.ForkedSweep;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

/** {@code scalep policy tune}: measure the candidate endpoint configurations and write the policy the user's rule picks. */
@Command(name = "tune", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
                "Measure the candidate endpoint configurations for N threads on a device (the six categories, MPI+threads "
                        + "with a combining shared QP, the x-way QP and context sharing N allows, each with every feature "
                        + "and without each feature the device supports) and write the policy the rule chooses: the fewest "
                        + "resources within P%% of the best rate (--within), or the best rate within a budget.",
                "Each candidate is measured by `scalep sweep --policy` in a JVM of its own, as the reproduce line measures "
                        + "the chosen one, which is then measured again in --confirm fresh JVMs.",
                "Candidates whose rate ranges over the repeats overlap are equal: the cheaper wins. The file records the "
                        + "device, workload, rule, every candidate and the frontier as comments; it passes `policy check` and "
                        + "`sweep --policy` measures it again."},
        footer = {"", "Examples:",
                "  scalep policy tune --device sim:mlx5 --threads 4 --within 20%% \\",
                "      --out tuned.yaml --quick",
                "  scalep policy tune --threads 16 --max-uar-pages 4 --out tuned.yaml",
                "  scalep policy tune --device sim:efa --threads 8 --op read --size 64 \\",
                "      --within 10%% --order qps,memory --out efa.yaml"})
final class TuneCommand implements Callable<Integer> {
    @Option(names = "--device", paramLabel = "NAME", description = "Device (default: ${DEFAULT-VALUE}).")
    String device = Devices.DEFAULT;

    @Option(names = "--threads", required = true, paramLabel = "N", description = "Sender threads of the application.")
    int threads;

    @Option(names = "--out", required = true, paramLabel = "FILE", description = "The policy file to write (written whole or not at all).")
    Path out;

    @Option(names = "--op", paramLabel = "OP", description = "What the threads post: write (default), send or read.")
    String op = "write";

    @Option(names = "--size", paramLabel = "BYTES", description = "Payload bytes per message (default ${DEFAULT-VALUE}).")
    int size = SweepRunner.PAYLOAD;

    @Option(names = "--postlist", paramLabel = "P|allowed",
            description = "allowed (default): try postlist " + 32 + " and none; or a fixed p (1 = none).")
    String postlist = "allowed";

    @Option(names = "--unsignaled", paramLabel = "Q|allowed",
            description = "allowed (default): try one signaled every " + 64 + " and every one signaled, where the device "
                    + "allows unsignaled WRs; or a fixed q (1 = all signaled).")
    String unsignaled = "allowed";

    @Option(names = "--within", paramLabel = "P%", description = "Choose the fewest resources whose rate is within P%% of the best measured.")
    String within;

    @Option(names = "--max-uar-pages", paramLabel = "K", description = "Budget: at most K UAR pages.")
    Long maxUarPages;

    @Option(names = "--max-qps", paramLabel = "K", description = "Budget: at most K QPs.")
    Long maxQps;

    @Option(names = "--max-memory", paramLabel = "BYTES", description = "Budget: at most this much software memory (suffix K, M, G: KiB, MiB, GiB).")
    String maxMemory;

    @Option(names = "--order", paramLabel = "R,R,R",
            description = "What \"fewest resources\" compares first (default uar-pages,qps,memory); unnamed ones follow in that order.")
    String order;

    @Option(names = "--messages", paramLabel = "N", description = "Messages per candidate and repeat over all threads (default 10000000; --quick 4000000: at tens of millions of messages per second a repeat should last a tenth of a second or more).")
    Long messages;

    @Option(names = "--repeat", paramLabel = "N", description = "Timed repeats per candidate (default 5; --quick 3).")
    Integer repeat;

    @Option(names = "--confirm", paramLabel = "K", description = "Measure the chosen class again in K fresh JVMs "
            + "(default ${DEFAULT-VALUE}; 0: not) and record that rate, free of the luck that helped choose it, as what the "
            + "reproduce line should measure. One rank only.")
    int confirm = 3;

    @Option(names = "--results", paramLabel = "DIR", description = "Also write results.csv, results.json and the charts of the measurements here.")
    Path results;

    @Option(names = "--quick", description = "A few minutes on 2 cores: fewer messages and repeats.")
    boolean quick;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** 0: nothing written yet; 1: the policy file; 2: everything. */
    private volatile int written;

    @Override
    public Integer call() throws Exception {
        // everything the user gave is checked before anything is built or timed
        Device dev = Devices.byName(device);
        if (threads < 1 || threads > 1024) {
            throw new UserException("--threads: " + threads + " is out of range 1..1024");
        }
        Workload workload = new Workload(Workload.Op.parse("--op", op), size);
        if (workload.op() == Workload.Op.TAG) {
            throw new UserException("--op tag: policy tune measures write, send and read; tagged messages are measured "
                    + "by scalep sweep --op tag");
        }
        workload.check(dev.name(), dev.capabilities());
        TuneCandidates.Features features = new TuneCandidates.Features(
                feature("--postlist", postlist, true), feature("--unsignaled", unsignaled, false));
        if (features.unsignaled() != null && features.unsignaled() > 1 && !dev.capabilities().unsignaled()) {
            throw new UserException("--unsignaled " + features.unsignaled() + ": " + dev.name()
                    + " signals every work request (use 1 or allowed)");
        }
        ChoiceRule rule = new ChoiceRule(within == null ? null : percent(within), maxUarPages, maxQps,
                maxMemory == null ? null : bytes(maxMemory), order == null ? null : Resource.parseOrder(order));
        long total = messages != null ? messages : quick ? 4_000_000 : 10_000_000;
        if (total < threads || total > 1_000_000_000L) {
            throw new UserException("--messages: " + total + " is out of range " + threads + "..1000000000");
        }
        int repeats = repeat != null ? repeat : quick ? 3 : 5;
        if (repeats < 1 || repeats > 100) {
            throw new UserException("--repeat: " + repeats + " is out of range 1..100");
        }
        Checks.outputFile("--out", out);
        if (results != null) {
            Checks.outputDir("--results", results.toString());
        }

        if (confirm < 0 || confirm > 20) {
            throw new UserException("--confirm: " + confirm + " is out of range 0..20");
        }
        long perThread = (total + threads - 1) / threads;
        List<TuneCandidates.Entry> entries = TuneCandidates.build(dev, threads, workload, features, perThread);
        // the budget needs the resources only: a budget no candidate meets fails before anything is timed
        List<Candidate> unmeasured = new ArrayList<>();
        for (TuneCandidates.Entry e : entries) {
            ResourceUsage r = SweepRunner.resources(dev, e.point(), workload);
            unmeasured.add(new Candidate(e.name(), 0, 0, 0, r.uarPages(), r.qps(), r.memoryBytes()));
        }
        Choice.requireBudget(unmeasured, rule);

        try (World world = World.open()) {
            RankAgreement.check(world, spec, Set.of("--out", "--results"));
            if (world.size() > 2) {
                throw new UserException("policy tune runs on one rank, or on two (sender threads on rank 0, receivers on "
                        + "rank 1): launch it with mpirun -np 2, not " + world.size());
            }
            Checks.refuseUnless(spec, "--confirm", world.size() == 1, "two ranks measure every candidate in their own two "
                    + "JVMs, with no fresh ones to confirm in");
            if (world.size() == 2 && workload.op() == Workload.Op.SEND) {
                throw new UserException("--op send: two ranks measure write and read (a receiver thread reposts each receive "
                        + "in one process); run a send tune on one rank");
            }
            if (world.rank() != 0) { // rank 1 holds the receivers: silent, and it writes nothing
                measure(world, dev, workload, entries, perThread * threads, repeats,
                        new PrintStream(OutputStream.nullOutputStream()));
                return 0;
            }
            boolean existed = Files.isRegularFile(out);
            Thread onInterrupt = new Thread(() -> System.err.println(System.lineSeparator() + "policy tune: "
                    + interrupted(existed)), "tune-interrupt");
            Runtime.getRuntime().addShutdownHook(onInterrupt);
            try {
                return tune(world, dev, workload, features, rule, entries, perThread, repeats);
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(onInterrupt);
                } catch (IllegalStateException shuttingDown) {
                    // the hook is running: it reports what was kept
                }
            }
        }
    }

    /** What a tune stopped by a signal (Ctrl-C, SIGTERM) leaves: one line. */
    private String interrupted(boolean existed) {
        return switch (written) {
            case 0 -> "interrupted: nothing was written; " + (existed ? out + " still holds the previous policy"
                    : "no " + out + " was created") + (results != null ? ", " + results + " as it was" : "");
            case 1 -> "interrupted after " + out + " was written" + (results != null ? "; " + results
                    + " may lack this tune's results" : "");
            default -> "interrupted after everything was written: " + out + (results != null ? " and " + results : "");
        };
    }

    /** Rank 0's tune: measure, choose, confirm, write. */
    private int tune(World world, Device dev, Workload workload, TuneCandidates.Features features, ChoiceRule rule,
                     List<TuneCandidates.Entry> entries, long perThread, int repeats) throws Exception {
        System.out.println("scalep policy tune on " + dev.name() + (world.size() == 2 ? ", sender threads on rank 0, "
                + "receivers on rank 1" : "") + ": " + threads + " threads, " + workload.describe() + ", "
                + entries.size() + " candidates x " + repeats + " repeats (+ warm-up runs each until the JIT is quiet), " + perThread * threads
                + " messages per repeat");
        System.out.println("rule: " + rule.describe());
        long messagesPerRepeat = perThread * threads;
        int jvms = world.size() == 1 ? confirm : 0;
        List<Measurement> all;
        List<Candidate> candidates = new ArrayList<>();
        Choice choice;
        TuneCandidates.Entry chosen;
        Candidate confirmed = null;
        try {
            all = measure(world, dev, workload, entries, messagesPerRepeat, repeats, System.out);
            for (int i = 0; i < entries.size(); i++) {
                candidates.add(candidate(entries.get(i), all.subList(i * repeats, (i + 1) * repeats)));
            }
            choice = Choice.choose(candidates, rule);
            chosen = entries.get(candidates.indexOf(choice.chosen()));
            if (jvms > 0) {
                confirmed = measureAgain(dev, chosen, workload, messagesPerRepeat, repeats, jvms);
            }
        } catch (IllegalStateException failed) { // a candidate's sweep failed: its own words, nothing written
            System.err.println("policy tune: " + failed.getMessage());
            return 1;
        }
        TuneReport report = new TuneReport(dev.name(), threads, workload, features, rule, messagesPerRepeat, repeats,
                world.size(), candidates, choice, confirmed, jvms);
        return write(dev, workload, rule, report, chosen, all);
    }

    /**
     * Measure every candidate, {@code repeats} measurements each, in order. One rank: each in a JVM
     * of its own ({@link ForkedSweep}), a line printed as each is done. Two ranks: in these two JVMs,
     * senders here on rank 0, the receivers on rank 1 (which gets no measurements).
     */
    private static List<Measurement> measure(World world, Device dev, Workload workload, List<TuneCandidates.Entry> entries,
                                             long messages, int repeats, PrintStream say) throws Exception {
        List<Measurement> all = new ArrayList<>();
        if (world.size() == 1) {
            say.println("each candidate runs in a JVM of its own, as its reproduce line will (scalep sweep --policy)");
            try (ForkedSweep fork = new ForkedSweep(Main.class.getName())) {
                for (int i = 0; i < entries.size(); i++) {
                    TuneCandidates.Entry e = entries.get(i);
                    List<Measurement> ms = forked(fork, dev, e, workload, messages, repeats);
                    all.addAll(ms);
                    print(say, i + 1, entries.size(), candidate(e, ms));
                }
            }
            return all;
        }
        say.print("warming up the JIT ...");
        say.flush();
        Warmup.run(world, dev, entries.stream().map(TuneCandidates.Entry::point).toList(), workload);
        say.println(" done");
        for (int i = 0; i < entries.size(); i++) {
            TuneCandidates.Entry e = entries.get(i);
            List<Measurement> ms = SweepRunner.run(world, dev, e.point(), workload, repeats,
                    Math.max(1, e.point().messages() / 2), m -> { });
            if (world.rank() == 0) {
                all.addAll(ms);
                print(say, i + 1, entries.size(), candidate(e, ms));
            }
        }
        return all;
    }

    /** Candidate {@code e} measured by {@code scalep sweep --policy} in a JVM of its own: {@code repeats} measurements. */
    private static List<Measurement> forked(ForkedSweep fork, Device dev, TuneCandidates.Entry e, Workload workload,
                                            long messages, int repeats) throws IOException, InterruptedException {
        String yaml = Policy.of("candidate.yaml", e.cls()).effective(dev).toYaml();
        List<Measurement> ms = fork.measure(e.name(), yaml, e.point(), workload, messages, repeats);
        if (ms.size() != repeats) {
            throw new IllegalStateException("candidate '" + e.name() + "': " + ms.size() + " measurements, not " + repeats);
        }
        return ms;
    }

    /** The chosen candidate measured again in {@code jvms} fresh JVMs: one rate range over all their repeats. */
    private static Candidate measureAgain(Device dev, TuneCandidates.Entry chosen, Workload workload, long messages, int repeats,
                                     int jvms) throws IOException, InterruptedException {
        System.out.print("confirming " + chosen.name() + " in " + jvms + " fresh JVMs ...");
        System.out.flush();
        List<Measurement> again = new ArrayList<>();
        try (ForkedSweep fork = new ForkedSweep(Main.class.getName())) {
            for (int k = 0; k < jvms; k++) {
                again.addAll(forked(fork, dev, chosen, workload, messages, repeats));
            }
        }
        System.out.println(" done");
        return candidate(chosen, again);
    }

    private static Candidate candidate(TuneCandidates.Entry e, List<Measurement> ms) {
        Stats s = Stats.of(ms.stream().mapToDouble(Measurement::mmsgPerSec).toArray());
        ResourceUsage r = ms.getFirst().resources();
        return new Candidate(e.name(), s.median(), s.min(), s.max(), r.uarPages(), r.qps(), r.memoryBytes());
    }

    private static void print(PrintStream say, int k, int n, Candidate c) {
        say.printf(Locale.ROOT, "  [%2d/%d] %-36s %9.3f Mmsg/s  (%.3f..%.3f)  %3d UAR pages %4d QPs %10s%n", k, n, c.name(),
                c.median(), c.min(), c.max(), c.uarPages(), c.qps(), SweepCommand.bytes(c.memoryBytes()));
    }

    /** Write the policy file (and the results when asked) and print the decision. */
    private int write(Device dev, Workload workload, ChoiceRule rule, TuneReport report, TuneCandidates.Entry chosen,
                      List<Measurement> all) throws IOException {
        String yaml = Policy.of(out.getFileName().toString(), chosen.cls()).effective(dev).toYaml();
        String text = report.policyFile(out.toString(), yaml, Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        writeWhole(out, text);
        written = 1;

        System.out.println();
        System.out.print(report.table(""));
        System.out.println();
        for (String d : report.decision()) {
            System.out.println(d);
        }
        if (results != null) {
            Map<String, Object> settings = new LinkedHashMap<>();
            settings.put("device", dev.name());
            settings.put("tune", rule.describe());
            settings.put("op", workload.op().spelling());
            settings.put("payloadBytes", workload.size());
            settings.put("messagesPerConfiguration", report.messages());
            settings.put("ranks", report.ranks());
            settings.put("repeats", report.repeats());
            ResultsWriter.write(results, all, settings);
            for (Path c : Charts.write(results, all)) {
                System.out.println("wrote " + c);
            }
            System.out.println("wrote " + results.resolve("results.csv") + ", " + results.resolve("results.json"));
        }
        written = 2;
        System.out.println("wrote " + out);
        System.out.println("reproduce: " + report.reproduce(out.toString()));
        return 0;
    }

    /** "allowed" (null: the tune tries both) or a fixed value in 1..queue depth. */
    private static Integer feature(String option, String v, boolean postlist) {
        if (v.strip().equalsIgnoreCase("allowed")) {
            return null;
        }
        int n;
        try {
            n = Integer.parseInt(v.strip());
        } catch (NumberFormatException e) {
            throw new UserException(option + ": '" + v + "' is neither allowed nor a number");
        }
        if (n < 1 || n > TuneCandidates.DEPTH) {
            throw new UserException(option + ": " + n + " is out of range 1.." + TuneCandidates.DEPTH + " (the queue depth)");
        }
        return n;
    }

    /** "20%" or "20". */
    static double percent(String v) {
        String s = v.strip();
        if (s.endsWith("%")) {
            s = s.substring(0, s.length() - 1).strip();
        }
        try {
            return Double.parseDouble(s);
        } catch (NumberFormatException e) {
            throw new UserException("--within: '" + v + "' is not a percentage (e.g. 20%)");
        }
    }

    /** Bytes with an optional binary suffix: 4096, 64K, 1.5M, 2G (also KiB, MiB, GiB). */
    static long bytes(String v) {
        String s = v.strip().toUpperCase(Locale.ROOT).replace("IB", "").replace("B", "");
        long unit = 1;
        if (!s.isEmpty()) {
            char last = s.charAt(s.length() - 1);
            unit = switch (last) {
                case 'K' -> 1L << 10;
                case 'M' -> 1L << 20;
                case 'G' -> 1L << 30;
                default -> 1;
            };
            if (unit > 1) {
                s = s.substring(0, s.length() - 1).strip();
            }
        }
        try {
            double d = Double.parseDouble(s);
            if (d < 0 || d * unit > Long.MAX_VALUE / 2) {
                throw new NumberFormatException();
            }
            return (long) (d * unit);
        } catch (NumberFormatException e) {
            throw new UserException("--max-memory: '" + v + "' is not a size in bytes (e.g. 4M)");
        }
    }

    /** Write {@code text} to a temporary file next to {@code file}, then rename it over {@code file}. */
    static void writeWhole(Path file, String text) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
        try {
            Files.writeString(tmp, text);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
