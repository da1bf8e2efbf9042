package dev.scalep.endpoints;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;



/**
 * The tagged-message suite across processes: {@code mpirun -np P} JVMs of {@link MessageMain} on
 * one simulated NIC (sim:efa delivering out of order across processes too); every rank must
 * print that it passed every scenario.
 */
class MessageMpirunTest {
    @ParameterizedTest(name = "mpirun -np {0} {1} {2} threads={3}")
    @CsvSource({"2, sim:mlx5, static, 2", "2, sim:efa, static+mapped, 2", "3, sim:mlx5, mpi-threads+mapped:even, 1", "2, sim:efa, mpi-threads, 2", "2, sim:efa, mpi-everywhere, 1",
            "3, sim:mlx5, mpi-everywhere, 1", "2, sim:efa, mpi-everywhere+anyslot, 2", "2, sim:mlx5, static+anyslot+mapped, 2"})
    void theMessageSuitePassesOnEveryRankProcess(int ranks, String device, String level, int threads) throws Exception {
        SuiteMain.assertEveryRankPassed(MessageMain.class, "messagemain", ranks, device, level, threads, MessageTest.scenarios(level));
    }
}
