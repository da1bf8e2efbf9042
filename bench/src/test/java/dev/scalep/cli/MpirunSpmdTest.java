package dev.scalep.cli;

import dev.scalep.spmd.Launch;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code mpirun -np N scalep spmd}: ranks in separate JVMs on one simulated NIC, addresses exchanged through PMIx. */
class MpirunSpmdTest {
    @ParameterizedTest(name = "mpirun -np {0} spmd --device {1} --category {2}")
    @CsvSource({"2, sim:mlx5, static", "2, sim:efa, static", "4, sim:mlx5, mpi-threads", "4, sim:efa, mpi-threads"})
    void everyThreadOfEveryRankVerifies(int ranks, String device, String level) throws Exception {
        Launch.Result r = Launch.run(Launch.mpirun(ranks, Launch.java(Main.class, "spmd", "--threads", "2", "--device", device,
                "--category", level, "--rounds", "2")), Map.of(), 110);
        assertEquals(0, r.exit(), r.output());
        long expect = (long) ranks * (ranks - 1) * 2 * 2;
        String line = "spmd: " + ranks + " ranks x 2 threads on " + device + " (" + level + ", ";
        assertEquals(1, r.lines().stream().filter(l -> l.startsWith(line)
                && l.endsWith("verified " + expect + " writes and " + expect + " reads of " + expect)).count(), r.output());
        assertTrue(r.lines().stream().noneMatch(l -> l.contains("Exception")), r.output());
    }
}
