package dev.scalep.bench.tune;

import dev.scalep.bench.Measurement;
import dev.scalep.bench.ResultsReader;
import dev.scalep.bench.SweepPoint;
import dev.scalep.bench.Workload;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Measures one tune candidate the way its reproduce line measures the chosen one: {@code scalep
 * sweep --policy FILE} over a policy file that holds only the candidate's class, in a JVM of its
 * own started with this JVM's java, options and class path. A JVM that has run forty other
 * configurations has compiled the data path for all of them, and one that runs a single class
 * compiles it for that class; the second is what the reproduce line and the user's application
 * run in, so every candidate is measured in one.
 */
public final class ForkedSweep implements AutoCloseable {
    private final String mainClass;
    private final Path scratch;
    private final Thread reaper;
    private volatile Process running;
    private int runs;

    /**
     * @param mainClass the class whose {@code main} is the {@code scalep} command line
     */
    public ForkedSweep(String mainClass) throws IOException {
        this.mainClass = mainClass;
        this.scratch = Files.createTempDirectory("scalep-tune-");
        // a tune stopped by a signal takes the sweep it was running with it, and its scratch directory
        this.reaper = new Thread(() -> {
            Process p = running;
            if (p != null) {
                p.destroyForcibly();
                try {
                    p.waitFor(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            try {
                delete(scratch);
            } catch (IOException | RuntimeException e) {
                // the JVM is exiting: what could not be removed stays in the temporary directory
            }
        }, "tune-reaper");
        Runtime.getRuntime().addShutdownHook(reaper);
    }

    /**
     * Run {@code scalep sweep --policy} on {@code policyYaml} (candidate {@code name}) for {@code point} (its device and
     * threads) with the workload {@code w}, {@code messages} messages per repeat over all threads and
     * {@code repeats} timed repeats; the measurements come back attached to {@code point}.
     *
     * @throws IllegalStateException when the sweep fails, with its last line of output
     */
    public List<Measurement> measure(String name, String policyYaml, SweepPoint point, Workload w, long messages, int repeats)
            throws IOException, InterruptedException {
        int n = ++runs;
        Path policy = scratch.resolve("candidate-" + n + ".yaml");
        Path out = scratch.resolve("run-" + n);
        Path log = scratch.resolve("run-" + n + ".log");
        Files.writeString(policy, policyYaml);
        List<String> cmd = new ArrayList<>(javaCommand());
        cmd.addAll(List.of("sweep", "--policy", policy.toString(), "--device", point.device(),
                "--threads", Integer.toString(point.threads()), "--messages", Long.toString(messages),
                "--repeat", Integer.toString(repeats), "--op", w.op().spelling(), "--size", Integer.toString(w.size()),
                "--no-progress", "--out", out.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        running = p;
        int rc;
        try {
            rc = p.waitFor();
        } finally {
            running = null;
            if (p.isAlive()) {
                p.destroyForcibly().waitFor();
            }
        }
        try {
            if (rc != 0) {
                throw new IllegalStateException("scalep sweep --policy for candidate '" + name
                        + "' exited with " + rc + ": " + lastLine(log));
            }
            return ResultsReader.measurements(out.resolve("results.json"), point);
        } finally {
            delete(out);
            Files.deleteIfExists(policy);
            Files.deleteIfExists(log);
        }
    }

    /** The private directory each run's policy, output and log live in while it runs. */
    Path scratch() {
        return scratch;
    }

    /** This JVM's java, its options (less a debugger or a flight recording) and class path, and the command line's main class. */
    private List<String> javaCommand() {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            // a debugger's port or a flight recording's file belongs to this JVM, not to the sweeps it starts
            if (!arg.startsWith("-agentlib:jdwp") && !arg.startsWith("-XX:StartFlightRecording")
                    && !arg.startsWith("-XX:+StartFlightRecording")) {
                cmd.add(arg);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass);
        return cmd;
    }

    private static String lastLine(Path log) {
        try {
            List<String> lines = Files.readAllLines(log).stream().filter(l -> !l.isBlank()).toList();
            return lines.isEmpty() ? "(no output)" : lines.getLast().strip();
        } catch (IOException e) {
            return "(its output could not be read: " + e.getMessage() + ")";
        }
    }

    private static void delete(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path f : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }

    @Override
    public void close() throws IOException {
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs: it stops what is running
        }
        delete(scratch);
    }
}
