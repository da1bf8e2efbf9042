package dev.scalep.spmd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The PMI-1 and PMI-2 wire clients against a real server: MPICH's {@code mpiexec.hydra} (package
 * {@code mpich}, which has no PMIx), in its default {@code PMI_FD} mode and its {@code -pmi-port}
 * mode. Jobs of {@link WorldMain}: ranks, all-gather of kilobytes split across hydra's 1024-byte
 * value limit, barrier, a rank that dies.
 */
class HydraWorldTest {
    @ParameterizedTest(name = "mpiexec.hydra {0} -n {1}, SCALEP_BOOTSTRAP={2}")
    @CsvSource({"fd, 2, ''", "fd, 4, ''", "port, 2, ''", "port, 4, ''", "fd, 3, pmi2"})
    void everyRankGathersEveryOthersBytesAndPassesTheBarrier(String mode, int n, String force) throws Exception {
        Map<String, String> env = new HashMap<>();
        if (!force.isEmpty()) {
            env.put(Bootstrap.ENV, force);
        }
        Launch.Result r = Launch.run(Launch.hydra(n, mode.equals("port"), Launch.java(WorldMain.class, "gather")), env, 110);
        assertEquals(0, r.exit(), r.output());
        String session = force.isEmpty() ? (mode.equals("port") ? "pmi1 PMI_PORT=" : "pmi1 PMI_FD=") : "pmi2 PMI_FD=";
        for (int rank = 0; rank < n; rank++) {
            String prefix = "worldmain: rank " + rank + " of " + n + " local " + rank + " node 0 verified " + session;
            assertEquals(1, r.lines().stream().filter(l -> l.startsWith(prefix)).count(), "one verified line of rank " + rank + ":\n"
                    + r.output());
        }
        if (!force.isEmpty()) {
            // hydra's PMI-2 has no PMI_JOBID, but gives a process mapping: every rank on node 0
            assertTrue(r.lines().stream().allMatch(l -> !l.startsWith("worldmain: rank") || l.contains("process mapping (vector,")),
                    r.output());
        }
    }

    @ParameterizedTest(name = "mpiexec.hydra {0}, SCALEP_BOOTSTRAP={1}: kilobytes per rank in segments")
    @CsvSource({"fd, pmi1", "port, pmi1", "fd, pmi2"})
    void valuesLongerThanHydrasLimitArriveWhole(String mode, String protocol) throws Exception {
        // 3 ranks of 0 to 9 kB each: values of up to 12,000 base64 characters against hydra's 1024
        Launch.Result r = Launch.run(Launch.hydra(3, mode.equals("port"), Launch.java(WorldMain.class, "big")),
                Map.of(Bootstrap.ENV, protocol), 110);
        assertEquals(0, r.exit(), r.output());
        assertEquals(3, r.lines().stream().filter(l -> l.startsWith("worldmain: rank ") && l.contains(" verified " + protocol + " "))
                .count(), r.output());
    }

    @Test
    void theLauncherEndsTheJobWhenARankIsKilled() throws Exception {
        Launch.Result r = Launch.run(Launch.hydra(2, false, Launch.java(WorldMain.class, "die")), Map.of(), 110);
        assertNotEquals(0, r.exit(), r.output());
        List<String> passed = r.lines().stream().filter(l -> l.contains("passed the barrier")).toList();
        assertTrue(passed.isEmpty(), "a rank passed a barrier its peer never reached:\n" + r.output());
    }
}
