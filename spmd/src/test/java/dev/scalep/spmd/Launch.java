package dev.scalep.spmd;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.fail;

/** Starts a child (a JVM, or a launcher over JVMs: mpirun, mpiexec.hydra, srun) with a bounded wait; its output and exit status. */
public final class Launch {
    /** How long the thread dumps of a run that outlived its bound may take, all together. */
    private static final long DUMP_SECONDS = 6;

    private Launch() {
    }

    /** The child's exit status and its whole output (stdout and stderr together). */
    public record Result(int exit, String output) {
        public List<String> lines() {
            return output.lines().toList();
        }
    }

    /**
     * A JVM running {@code main} with this test's class path: C1 alone and the serial collector,
     * which start fast in every rank ({@link #jvm} for a child whose JIT is what it tests).
     */
    public static List<String> java(Class<?> main, String... args) {
        return jvm(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"), main, args);
    }

    /** A JVM running {@code main} with this test's class path and the JVM flags {@code flags} (else the JVM's defaults). */
    public static List<String> jvm(List<String> flags, Class<?> main, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED"));
        if (Runtime.version().feature() >= 23) {
            cmd.add("--sun-misc-unsafe-memory-access=allow"); // no Unsafe warning from Agrona in every rank
        }
        cmd.addAll(flags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** {@code mpirun -np n} (oversubscribed, allowed as root) in front of {@code cmd}. */
    public static List<String> mpirun(int n, List<String> cmd) {
        List<String> out = new ArrayList<>(List.of(mpirunPath(), "--oversubscribe", "-np", Integer.toString(n)));
        if ("root".equals(System.getProperty("user.name"))) {
            out.add(1, "--allow-run-as-root");
        }
        out.addAll(cmd);
        return out;
    }

    /** MPICH's {@code mpiexec.hydra -n n} in front of {@code cmd}; {@code port}: the {@code -pmi-port} mode (PMI_PORT, not PMI_FD). */
    public static List<String> hydra(int n, boolean port, List<String> cmd) {
        String exe = onPath("mpiexec.hydra");
        if (exe == null) {
            fail("mpiexec.hydra not found on PATH: install mpich (tools/install-spmd-deps does)");
        }
        List<String> out = new ArrayList<>(List.of(exe, "-n", Integer.toString(n)));
        if (port) {
            out.add(1, "-pmi-port");
        }
        out.addAll(cmd);
        return out;
    }

    /** Open MPI's launcher: {@code mpirun.openmpi} where MPICH may own the {@code mpirun} alternative, else {@code mpirun}. */
    static String mpirunPath() {
        String p = onPath("mpirun.openmpi");
        p = p != null ? p : onPath("mpirun");
        if (p == null) {
            fail("mpirun not found on PATH: install openmpi-bin (./run-tests does)");
        }
        return p;
    }

    /** The executable {@code name} on PATH, or null. */
    public static String onPath(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }

    /**
     * Run {@code cmd} with the environment changed by {@code env} (a null value removes a variable),
     * stdout and stderr merged; kill the whole tree and fail when it outlives {@code seconds}, with
     * its output, the process tree and a thread dump of every JVM in it in the failure.
     * Callers keep {@code seconds} below the test's own timeout (JUnit's default here is 120 s),
     * or JUnit interrupts the wait first and the output is lost.
     */
    public static Result run(List<String> cmd, Map<String, String> env, long seconds) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Path log = Files.createTempFile("scalep-launch", ".log");
        pb.redirectOutput(log.toFile());
        Map<String, String> e = pb.environment();
        e.keySet().removeIf(k -> k.startsWith("PMIX_") || k.startsWith("PMI_") || k.startsWith("SLURM_")
                || k.startsWith("OMPI_"));
        env.forEach((k, v) -> {
            if (v == null) {
                e.remove(k);
            } else {
                e.put(k, v);
            }
        });
        Process p = pb.start();
        try {
            if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                String dumps = dumpThreads(p);
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
                fail("still running after " + seconds + " s: " + String.join(" ", cmd) + "\n" + Files.readString(log)
                        + dumps);
            }
            return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /**
     * The process tree under {@code p} (pid and command line) and the threads' stacks of every JVM
     * in it ({@code jcmd PID Thread.print}, from the JDK running this test), read directly from
     * each JVM so that nothing depends on the launcher forwarding its ranks' output. The dumps run
     * at once and share one bound of {@value #DUMP_SECONDS} s, so that the caller's bound plus this
     * stays below the test's own timeout however many JVMs there are.
     */
    private static String dumpThreads(Process p) throws InterruptedException {
        StringBuilder out = new StringBuilder("\n--- process tree and thread dumps ---\n");
        String jcmd = ProcessHandle.current().info().command()
                .map(c -> Path.of(c).resolveSibling("jcmd").toString()).orElse("jcmd");
        List<ProcessHandle> tree = Stream.concat(Stream.of(p.toHandle()), p.descendants()).toList();
        List<ProcessHandle> jvms = new ArrayList<>();
        for (ProcessHandle h : tree) {
            out.append(h.pid()).append(' ').append(h.info().commandLine().orElse("?")).append('\n');
            if (h.info().command().map(c -> c.endsWith("/java")).orElse(false)) {
                jvms.add(h);
            }
        }
        List<Path> files = new ArrayList<>();
        List<Process> dumps = new ArrayList<>();
        try {
            for (ProcessHandle h : jvms) {
                Path f = Files.createTempFile("scalep-launch-dump", ".txt");
                files.add(f);
                dumps.add(new ProcessBuilder(jcmd, Long.toString(h.pid()), "Thread.print").redirectErrorStream(true)
                        .redirectOutput(f.toFile()).start());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DUMP_SECONDS);
            for (int i = 0; i < dumps.size(); i++) {
                Process j = dumps.get(i);
                if (!j.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    j.destroyForcibly();
                }
                out.append("--- jcmd ").append(jvms.get(i).pid()).append(" Thread.print\n")
                        .append(Files.readString(files.get(i)));
            }
        } catch (IOException e) {
            out.append("--- dumps cut short: ").append(e).append('\n');
        } finally {
            for (Path f : files) {
                try {
                    Files.deleteIfExists(f);
                } catch (IOException e) {
                    // a temporary file left behind; the failure report matters more
                }
            }
        }
        return out.toString();
    }
}
