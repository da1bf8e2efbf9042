package dev.scalep.endpoints;

import dev.scalep.spmd.Launch;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The active-message suite across processes: {@code mpirun -np P} JVMs of {@link ActiveMessageMain} on
 * one simulated NIC (sim:efa delivering out of order across processes too); every rank must
 * print that it passed every scenario.
 */
class ActiveMessageMpirunTest {
    @ParameterizedTest(name = "mpirun -np {0} {1} {2} threads={3}")
    @CsvSource({"2, sim:mlx5, static, 2", "2, sim:efa, mpi-threads, 2", "2, sim:efa, mpi-everywhere, 1",
            "3, sim:mlx5, mpi-everywhere, 1"})
    void theActiveMessageSuitePassesOnEveryRankProcess(int ranks, String device, String level, int threads) throws Exception {
        Launch.Result r = Launch.run(Launch.mpirun(ranks, Launch.java(ActiveMessageMain.class, device, level,
                Integer.toString(threads))), Map.of(), 170);
        assertEquals(0, r.exit(), r.output());
        String scenarios = ActiveMessageTest.SCENARIOS.toString();
        for (int rank = 0; rank < ranks; rank++) {
            String line = "activemessagemain: rank " + rank + " of " + ranks + " on " + device + " " + level + ": passed " + scenarios;
            assertEquals(1, r.lines().stream().filter(line::equals).count(), "rank " + rank + ":\n" + r.output());
        }
    }
}
