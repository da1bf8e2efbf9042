package dev.scalep.spmd;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A single-node Slurm of the test's own: {@code munged}, {@code slurmctld} and {@code slurmd}
 * started from a configuration in a fresh directory under the build directory, on 127.0.0.1 with
 * ports of their own (so it disturbs no Slurm or munge of the machine, nor another test's), and
 * stopped by pid on {@link #close()}. Needs root ({@code slurmd} starts tasks as their user) and the
 * packages {@code slurm-wlm}, {@code munge} and, for {@code --mpi=pmix}, {@code libpmix-dev}.
 */
public final class Slurm implements AutoCloseable {
    private final Path dir;
    private final Path conf;
    private final List<Long> pids = new ArrayList<>();

    private Slurm(Path dir) {
        this.dir = dir;
        this.conf = dir.resolve("slurm.conf");
    }

    /** Start the daemons in a new directory under {@code buildDir}; fails the test naming what is missing. */
    public static Slurm start(Path buildDir) throws IOException, InterruptedException {
        if (!"root".equals(System.getProperty("user.name"))) {
            fail("the Slurm launcher tests start slurmd, which needs root: run the tests as root (./run-tests does)");
        }
        for (String exe : List.of("munged", "slurmctld", "slurmd", "srun", "sinfo")) {
            if (Launch.onPath(exe) == null && !Files.isExecutable(Path.of("/usr/sbin", exe))) {
                fail(exe + " not found: install slurm-wlm and munge (tools/install-spmd-deps does)");
            }
        }
        Files.createDirectories(buildDir);
        Path dir = Files.createTempDirectory(buildDir.toAbsolutePath(), "slurm-");
        // munged wants its socket's directories searchable by everyone, its key readable by its owner alone
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Slurm s = new Slurm(dir);
        try {
            s.boot();
        } catch (IOException | InterruptedException | RuntimeException | AssertionError e) {
            s.close();
            throw e;
        }
        return s;
    }

    private void boot() throws IOException, InterruptedException {
        Path sock = Files.createDirectory(dir.resolve("munge"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        Path key = Files.createFile(dir.resolve("munge.key"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rw-------")));
        byte[] secret = new byte[1024];
        new SecureRandom().nextBytes(secret);
        Files.write(key, secret);
        Path socket = sock.resolve("munge.socket");
        daemon("munged", dir.resolve("munged.pid"), exe("munged"), "--socket=" + socket, "--key-file=" + key,
                "--pid-file=" + dir.resolve("munged.pid"), "--log-file=" + dir.resolve("munged.log"),
                "--seed-file=" + dir.resolve("munged.seed"));
        String host = hostShort();
        String conf = String.join("\n",
                "ClusterName=scalep-test",
                "SlurmctldHost=" + host + "(127.0.0.1)",
                "SlurmctldPort=" + freePort(),
                "SlurmdPort=" + freePort(),
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                "AuthInfo=socket=" + socket,
                "StateSaveLocation=" + Files.createDirectory(dir.resolve("state")),
                "SlurmdSpoolDir=" + Files.createDirectory(dir.resolve("spool")),
                "SlurmctldPidFile=" + dir.resolve("slurmctld.pid"),
                "SlurmdPidFile=" + dir.resolve("slurmd.pid"),
                "SlurmctldLogFile=" + dir.resolve("slurmctld.log"),
                "SlurmdLogFile=" + dir.resolve("slurmd.log"),
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "MpiDefault=none",
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                "ReturnToService=2",
                "NodeName=" + host + " NodeAddr=127.0.0.1 CPUs=" + Runtime.getRuntime().availableProcessors() + " State=UNKNOWN",
                "PartitionName=scalep Nodes=" + host + " Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8",
                "");
        Files.writeString(this.conf, conf, StandardCharsets.US_ASCII);
        daemon("slurmctld", dir.resolve("slurmctld.pid"), exe("slurmctld"), "-f", this.conf.toString());
        daemon("slurmd", dir.resolve("slurmd.pid"), exe("slurmd"), "-f", this.conf.toString());
        // The node registers within a second; ask a bounded number of times.
        String state = "";
        for (int i = 0; i < 100 && !state.equals("idle"); i++) {
            Launch.Result r = Launch.run(List.of(exe("sinfo"), "-h", "-o", "%t"), env(), 30);
            state = r.output().strip();
            if (!state.equals("idle")) {
                Thread.sleep(100);
            }
        }
        if (!state.equals("idle")) {
            fail("the test's Slurm node did not become idle (state '" + state + "'); logs in " + dir);
        }
    }

    /** The environment srun needs: this cluster's configuration. */
    public Map<String, String> env() {
        return Map.of("SLURM_CONF", conf.toString());
    }

    /** {@code srun -n n --mpi=mpi} (more tasks than CPUs allowed, ending the step when a task fails) in front of {@code cmd}. */
    public List<String> srun(int n, String mpi, List<String> cmd) {
        List<String> out = new ArrayList<>(List.of(exe("srun"), "-n", Integer.toString(n), "--overcommit", "--mpi=" + mpi,
                "--kill-on-bad-exit=1"));
        out.addAll(cmd);
        return out;
    }

    /** Where the daemons' configuration and logs are. */
    public Path dir() {
        return dir;
    }

    private void daemon(String name, Path pidFile, String... cmd) throws IOException, InterruptedException {
        Launch.Result r = Launch.run(List.of(cmd), env(), 60);
        if (r.exit() != 0) {
            fail(name + " did not start (exit " + r.exit() + "): " + r.output().strip() + "; logs in " + dir);
        }
        // The daemon creates its pid file and then writes the pid: wait for the number, not the file.
        String pid = "";
        for (int i = 0; i < 200 && pid.isEmpty(); i++) {
            pid = Files.exists(pidFile) ? Files.readString(pidFile).strip() : "";
            if (pid.isEmpty()) {
                Thread.sleep(50);
            }
        }
        if (pid.isEmpty()) {
            fail(name + " wrote no pid into " + pidFile);
        }
        pids.add(Long.parseLong(pid));
    }

    /** Stop the daemons by pid, last started first, wait for each, and remove the directory (unless -Dscalep.keepSlurm). */
    @Override
    public void close() throws InterruptedException {
        for (int i = pids.size() - 1; i >= 0; i--) {
            Optional<ProcessHandle> h = ProcessHandle.of(pids.get(i));
            if (h.isPresent()) {
                h.get().destroy();
                try {
                    h.get().onExit().get(20, TimeUnit.SECONDS);
                } catch (TimeoutException | ExecutionException e) {
                    h.get().destroyForcibly();
                }
            }
        }
        pids.clear();
        if (!Boolean.getBoolean("scalep.keepSlurm")) {
            try (Stream<Path> all = Files.walk(dir)) { // does not follow links
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            } catch (IOException e) {
                System.err.println("Slurm: could not remove " + dir + ": " + e.getMessage());
            }
        }
    }

    private static String exe(String name) {
        String p = Launch.onPath(name);
        return p != null ? p : Path.of("/usr/sbin", name).toString();
    }

    private static String hostShort() {
        String h = RankTable.hostName();
        int dot = h.indexOf('.');
        return dot < 0 ? h : h.substring(0, dot);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
