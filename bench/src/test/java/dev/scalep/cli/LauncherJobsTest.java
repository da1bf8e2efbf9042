package dev.scalep.cli;

import dev.scalep.spmd.Launch;
import dev.scalep.spmd.Slurm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The command line's SPMD jobs under every launcher besides Open MPI's {@code mpirun} (which
 * {@link MpirunSpmdTest}, {@link MpirunKernelTest} and {@link MpirunSweepTest} cover): a Slurm of the
 * test's own with {@code srun --mpi=pmix} and {@code --mpi=pmi2}, and MPICH's {@code mpiexec.hydra}
 * in {@code PMI_FD} and {@code -pmi-port} modes. Each runs {@code scalep spmd --verbose}, a kernel
 * and the two-rank sweep, and the bootstrap each rank chose is checked where it is reported.
 */
class LauncherJobsTest {
    private static Slurm slurm;

    @BeforeAll
    static void startSlurm() throws Exception {
        slurm = Slurm.start(Path.of("target"));
    }

    @AfterAll
    static void stopSlurm() throws Exception {
        if (slurm != null) {
            slurm.close();
        }
    }

    /** The bootstrap a launcher's ranks choose by themselves. */
    private static String bootstrap(String launcher) {
        return switch (launcher) {
            case "srun-pmix" -> "pmix";
            case "srun-pmi2" -> "pmi2";
            default -> "pmi1";
        };
    }

    private static Launch.Result run(String launcher, int n, String... args) throws Exception {
        List<String> java = Launch.java(Main.class, args);
        return switch (launcher) {
            case "srun-pmix" -> Launch.run(slurm.srun(n, "pmix", java), slurm.env(), 110);
            case "srun-pmi2" -> Launch.run(slurm.srun(n, "pmi2", java), slurm.env(), 110);
            case "hydra-fd" -> Launch.run(Launch.hydra(n, false, java), Map.of(), 110);
            case "hydra-port" -> Launch.run(Launch.hydra(n, true, java), Map.of(), 110);
            default -> throw new IllegalArgumentException(launcher);
        };
    }

    @ParameterizedTest(name = "{0}: spmd -n 2 --threads 2 --verbose")
    @ValueSource(strings = {"srun-pmix", "srun-pmi2", "hydra-fd", "hydra-port"})
    void spmdVerifiesAndEveryRankSaysHowItJoined(String launcher) throws Exception {
        Launch.Result r = run(launcher, 2, "spmd", "--threads", "2", "--device", "sim:efa", "--rounds", "2", "--verbose");
        assertEquals(0, r.exit(), r.output());
        for (int rank = 0; rank < 2; rank++) {
            String prefix = "spmd: rank " + rank + " of 2 on ";
            assertEquals(1, r.lines().stream().filter(l -> l.startsWith(prefix) && l.contains("(node 0, local rank ")
                    && l.contains(") joined by " + bootstrap(launcher) + " ")).count(), r.output());
        }
        long expect = 2L * 1 * 2 * 2;
        assertEquals(1, r.lines().stream().filter(l -> l.startsWith("spmd: 2 ranks x 2 threads on sim:efa (static, ")
                && l.endsWith("verified " + expect + " writes and " + expect + " reads of " + expect)).count(), r.output());
        assertTrue(r.lines().stream().noneMatch(l -> l.contains("Exception")), r.output());
    }

    @ParameterizedTest(name = "{0}: kernel stencil -n 2")
    @ValueSource(strings = {"srun-pmix", "srun-pmi2", "hydra-fd", "hydra-port"})
    void theKernelVerifiesAndRankZeroPrintsOnce(String launcher) throws Exception {
        Launch.Result r = run(launcher, 2, "kernel", "stencil", "--threads", "1", "--device", "sim:mlx5", "--categories",
                "static", "--size", "24", "--iterations", "10");
        assertEquals(0, r.exit(), r.output());
        assertEquals(1, r.lines().stream().filter(l -> l.startsWith("scalep kernel stencil on sim:mlx5: 2 ranks x 1 threads"))
                .count(), r.output());
        assertEquals(1, r.lines().stream().filter(l -> l.contains(" 2x1 ") && l.endsWith("verified")).count(), r.output());
    }

    @ParameterizedTest(name = "{0}: sweep -n 2 records its bootstrap")
    @ValueSource(strings = {"srun-pmix", "srun-pmi2", "hydra-fd", "hydra-port"})
    void theTwoRankSweepRecordsItsBootstrap(String launcher, @TempDir Path dir) throws Exception {
        Path out = dir.resolve("res");
        Launch.Result r = run(launcher, 2, "sweep", "--threads", "1", "--categories", "static", "--device", "sim:efa",
                "--messages", "20000", "--repeat", "1", "--size", "8", "--no-progress", "--out", out.toString());
        assertEquals(0, r.exit(), r.output());
        assertEquals(1, r.lines().stream().filter(l -> l.startsWith("scalep sweep on sim:efa, sender threads on rank 0, "
                + "receiver on rank 1")).count(), "rank 0 alone prints:\n" + r.output());
        String json = Files.readString(out.resolve("results.json"));
        String want = bootstrap(launcher);
        assertTrue(json.contains("\"bootstrap\" : \"" + want + "\""), json.substring(0, Math.min(1500, json.length())));
        assertTrue(json.contains("\"ranks\" : 2"), json.substring(0, Math.min(1500, json.length())));
        assertFalse(r.output().contains("Exception"), r.output());
    }
}
