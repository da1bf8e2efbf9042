package dev.scalep.endpoints;

import dev.scalep.spmd.Launch;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The window suite across processes: {@code mpirun -np P} JVMs of {@link WindowMain} on one
 * simulated NIC, the windows' memory in shared memory each rank's NIC maps, handles exchanged
 * through PMIx. Every rank must print that it passed every scenario (atomics on the simulated NIC
 * on sim:mlx5, through the emulation on sim:efa).
 */
class WindowMpirunTest {
    @ParameterizedTest(name = "mpirun -np {0} {1} {2} threads={3}")
    @CsvSource({"2, sim:mlx5, static, 2", "3, sim:mlx5, mpi-threads, 2", "2, sim:efa, static, 2", "2, sim:efa, mpi-everywhere, 1"})
    void theWindowSuitePassesOnEveryRankProcess(int ranks, String device, String level, int threads) throws Exception {
        Launch.Result r = Launch.run(Launch.mpirun(ranks, Launch.java(WindowMain.class, device, level, Integer.toString(threads))),
                Map.of(), 170);
        assertEquals(0, r.exit(), r.output());
        String scenarios = "[put-get, split, notify, ranges, close, expose, atomics, atomic-errors, barrier]";
        for (int rank = 0; rank < ranks; rank++) {
            String line = "windowmain: rank " + rank + " of " + ranks + " on " + device + " " + level + ": passed " + scenarios;
            assertEquals(1, r.lines().stream().filter(line::equals).count(), "rank " + rank + ":\n" + r.output());
        }
    }
}
