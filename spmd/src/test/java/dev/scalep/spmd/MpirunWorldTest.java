package dev.scalep.spmd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Real {@code mpirun} jobs of {@link WorldMain}: ranks, all-gather, barrier, and a rank that dies. */
class MpirunWorldTest {
    @ParameterizedTest(name = "mpirun -np {0}")
    @ValueSource(ints = {2, 4})
    void everyRankGathersEveryOthersBytesAndPassesTheBarrier(int n) throws Exception {
        Launch.Result r = Launch.run(Launch.mpirun(n, Launch.java(WorldMain.class, "gather")), Map.of(), 110);
        assertEquals(0, r.exit(), r.output());
        for (int rank = 0; rank < n; rank++) {
            String prefix = "worldmain: rank " + rank + " of " + n + " local " + rank + " node 0 verified pmix nspace ";
            long count = r.lines().stream().filter(l -> l.startsWith(prefix)).count();
            assertEquals(1, count, "one verified line of rank " + rank + ":\n" + r.output());
        }
    }

    @Test
    void theLauncherEndsTheJobWhenARankIsKilled() throws Exception {
        Launch.Result r = Launch.run(Launch.mpirun(2, Launch.java(WorldMain.class, "die")), Map.of(), 110);
        assertNotEquals(0, r.exit(), r.output());
        List<String> passed = r.lines().stream().filter(l -> l.contains("passed the barrier")).toList();
        assertTrue(passed.isEmpty(), "a rank passed a barrier its peer never reached:\n" + r.output());
    }

    @Test
    void whenTheLauncherKeepsTheJobTheSurvivorNamesTheLostRankAndExitsNonZero() throws Exception {
        // --enable-recovery: mpirun does not kill the job when a rank dies, so rank 0 must notice itself.
        List<String> cmd = new ArrayList<>(List.of("sh", "-c", "\"$@\"; echo \"worldmain-exit $OMPI_COMM_WORLD_RANK $?\"", "sh"));
        cmd.addAll(Launch.java(WorldMain.class, "die"));
        List<String> job = Launch.mpirun(2, cmd);
        job.add(job.indexOf("--oversubscribe"), "--enable-recovery");
        Launch.Result r = Launch.run(job, Map.of(), 110);
        assertTrue(r.lines().stream().anyMatch(l -> l.startsWith("spmd: rank 1 (pid ") && l.contains("was lost while rank 0 waited in")),
                "rank 0 names the lost rank:\n" + r.output());
        assertTrue(r.lines().contains("worldmain-exit 0 " + World.EXIT_RANK_LOST), "rank 0 exits with status 3:\n" + r.output());
        assertTrue(r.lines().stream().noneMatch(l -> l.contains("passed the barrier")), r.output());
    }
}
