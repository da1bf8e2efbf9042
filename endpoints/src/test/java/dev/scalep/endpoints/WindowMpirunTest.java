package dev.scalep.endpoints;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;



/**
 * The window suite across processes: {@code mpirun -np P} JVMs of {@link WindowMain} on one
 * simulated NIC, the windows' memory in shared memory each rank's NIC maps, handles exchanged
 * through PMIx. Every rank must print that it passed every scenario (atomics on the simulated NIC
 * on sim:mlx5, through the emulation on sim:efa); with the windows mapped on every rank, or on the
 * even ranks only, the peers' parts are reached through the mapping of their shared files.
 */
class WindowMpirunTest {
    @ParameterizedTest(name = "mpirun -np {0} {1} {2} threads={3}")
    @CsvSource({"2, sim:mlx5, static, 2", "3, sim:mlx5, mpi-threads, 2", "2, sim:efa, static, 2", "2, sim:efa, mpi-everywhere, 1",
            "2, sim:mlx5, static+mapped, 2", "3, sim:mlx5, mpi-everywhere+mapped:even, 2", "3, sim:efa, static+mapped:even, 2"})
    void theWindowSuitePassesOnEveryRankProcess(int ranks, String device, String level, int threads) throws Exception {
        SuiteMain.assertEveryRankPassed(WindowMain.class, "windowmain", ranks, device, level, threads, WindowTest.SCENARIOS);
    }
}
