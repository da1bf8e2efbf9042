package dev.scalep.spmd;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Jobs of {@link WorldMain} under a real single-node Slurm ({@link Slurm}, started for this class):
 * {@code srun --mpi=pmix} (PMIx), {@code srun --mpi=pmi2} (the Java PMI-2 client, and PMI-1 when
 * asked for, which the same plugin answers), values across Slurm's PMI-1 1024-byte request limit,
 * {@code srun --mpi=none} refused, and a rank that dies while Slurm keeps the step.
 */
class SrunWorldTest {
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

    private static Launch.Result srun(int n, String mpi, Map<String, String> extra, String mode) throws Exception {
        Map<String, String> env = new HashMap<>(slurm.env());
        env.putAll(extra);
        return Launch.run(slurm.srun(n, mpi, Launch.java(WorldMain.class, mode)), env, 110);
    }

    @ParameterizedTest(name = "srun -n {1} --mpi={0}, SCALEP_BOOTSTRAP={2}")
    @CsvSource({"pmix, 2, '', pmix nspace", "pmix, 4, '', pmix nspace", "pmi2, 2, '', pmi2 PMI_FD=", "pmi2, 4, '', pmi2 PMI_FD=",
            "pmi2, 2, pmi1, pmi1 PMI_FD="})
    void everyRankGathersEveryOthersBytesAndPassesTheBarrier(String mpi, int n, String force, String session) throws Exception {
        Launch.Result r = srun(n, mpi, force.isEmpty() ? Map.of() : Map.of(Bootstrap.ENV, force), "gather");
        assertEquals(0, r.exit(), r.output());
        for (int rank = 0; rank < n; rank++) {
            String prefix = "worldmain: rank " + rank + " of " + n + " local " + rank + " node 0 verified " + session;
            assertEquals(1, r.lines().stream().filter(l -> l.startsWith(prefix)).count(), "one verified line of rank " + rank + ":\n"
                    + r.output());
        }
        if (session.startsWith("pmi2")) {
            // Slurm's PMI-2 says where every rank runs: n ranks on the one node
            assertTrue(r.lines().stream().filter(l -> l.startsWith("worldmain: rank"))
                    .allMatch(l -> l.contains("process mapping (vector,(0,1," + n + "))")), r.output());
        }
    }

    @ParameterizedTest(name = "srun --mpi=pmi2, SCALEP_BOOTSTRAP={0}: kilobytes per rank in segments")
    @CsvSource({"pmi1", "pmi2"})
    void valuesLongerThanSlurmsLimitsArriveWhole(String protocol) throws Exception {
        // PMI-1: Slurm reads a request in one 1024-byte read(); PMI-2: values of 8 kB crash its stepd
        Launch.Result r = srun(3, "pmi2", Map.of(Bootstrap.ENV, protocol), "big");
        assertEquals(0, r.exit(), r.output());
        assertEquals(3, r.lines().stream().filter(l -> l.startsWith("worldmain: rank ") && l.contains(" verified " + protocol + " "))
                .count(), r.output());
    }

    @Test
    void mpiNoneIsOneLinePerTaskNamingTheFixAndExitTwo() throws Exception {
        Launch.Result r = srun(2, "none", Map.of(), "gather");
        assertEquals(2, r.exit(), r.output());
        List<String> said = r.lines().stream().filter(l -> l.startsWith("worldmain: ")).toList();
        assertEquals(2, said.size(), r.output());
        for (String l : said) {
            assertTrue(l.startsWith("worldmain: srun started 2 tasks (this is SLURM_PROCID=") && l.contains("--mpi=none")
                    && l.endsWith("launch with `srun --mpi=pmix` or `srun --mpi=pmi2`"), l);
        }
        assertTrue(r.lines().stream().noneMatch(l -> l.startsWith("\tat ")), r.output());
    }

    @Test
    void whenSlurmKeepsTheStepTheSurvivorNamesTheLostRankAndExitsThree() throws Exception {
        List<String> cmd = new ArrayList<>(List.of("sh", "-c", "\"$@\"; echo \"worldmain-exit $SLURM_PROCID $?\"", "sh"));
        cmd.addAll(Launch.java(WorldMain.class, "die"));
        List<String> job = slurm.srun(2, "pmi2", cmd);
        job.set(job.indexOf("--kill-on-bad-exit=1"), "--kill-on-bad-exit=0");
        Launch.Result r = Launch.run(job, slurm.env(), 110);
        assertTrue(r.lines().stream().anyMatch(l -> l.startsWith("spmd: rank 1 (pid ") && l.contains("was lost while rank 0 waited in")),
                "rank 0 names the lost rank:\n" + r.output());
        assertTrue(r.lines().contains("worldmain-exit 0 " + World.EXIT_RANK_LOST), "rank 0 exits with status 3:\n" + r.output());
        assertTrue(r.lines().stream().noneMatch(l -> l.contains("passed the barrier")), r.output());
    }
}
