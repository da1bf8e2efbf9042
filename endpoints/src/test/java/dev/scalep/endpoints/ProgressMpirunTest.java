package dev.scalep.endpoints;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The attentiveness suite across processes: {@code mpirun -np 2} JVMs of {@link ProgressMain} on
 * one simulated NIC, both devices; every rank must print that it passed both modes.
 */
class ProgressMpirunTest {
    @ParameterizedTest(name = "mpirun -np {0} {1} {2} threads={3}")
    @CsvSource({"2, sim:mlx5, static, 2", "2, sim:efa, mpi-threads, 2", "2, sim:efa, mpi-everywhere, 1"})
    void theProgressSuitePassesOnEveryRankProcess(int ranks, String device, String level, int threads) throws Exception {
        SuiteMain.assertEveryRankPassed(ProgressMain.class, "progressmain", ranks, device, level, threads,
                ProgressSuite.SCENARIOS);
    }
}
