package dev.scalep.cli;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sweep posts writes, reads, sends and tagged messages (each slot to itself, through the loopback,
 * in one process) of any size on every simulated device, through dedicated and shared QPs.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SweepWorkloadTest {
    @ParameterizedTest
    @CsvSource({"sim:mlx5,read,64", "sim:mlx5,send,64", "sim:mlx5,write,3000", "sim:efa,read,64", "sim:efa,send,200",
            "sim:efa,write,8", "sim:mlx5,tag,8", "sim:efa,tag,100", "sim:mlx5,tag,3"})
    void everyOperationAndSizeCompletes(String device, String op, int size, @TempDir Path tmp) throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run("sweep", "--device", device, "--op", op, "--size", String.valueOf(size),
                "--threads", "2", "--categories", "static;mpi-threads;" + "mpi-threads,qp=shared:combining",
                "--messages", "3000", "--repeat", "1", "--no-progress", "--out", tmp.toString());
        assertEquals(0, r.rc(), r.out() + r.err());
        String json = Files.readString(tmp.resolve("results.json"));
        assertTrue(json.contains("\"op\" : \"" + op + "\""), json);
        assertTrue(json.contains("\"payloadBytes\" : " + size), json);
        // three levels, one row each, every message completed
        assertEquals(4, Files.readAllLines(tmp.resolve("results.csv")).size());
    }
}
