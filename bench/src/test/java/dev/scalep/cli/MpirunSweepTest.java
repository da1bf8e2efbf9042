package dev.scalep.cli;

import dev.scalep.spmd.Launch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code mpirun -np 2 scalep sweep}: sender threads on rank 0, receiver on rank 1; rank 0 writes the results. */
class MpirunSweepTest {
    @Test
    void twoRanksMeasureAndRecordRanksAndPayload(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("res");
        Launch.Result r = Launch.run(Launch.mpirun(2, Launch.java(Main.class, "sweep", "--threads", "1,2", "--categories",
                "static", "--device", "sim:efa", "--messages", "20000", "--repeat", "2", "--size", "8",
                "--no-progress", "--out", out.toString())), Map.of(), 110);
        assertEquals(0, r.exit(), r.output());
        assertEquals(1, r.lines().stream().filter(l -> l.startsWith("scalep sweep on sim:efa, sender threads on rank 0, "
                + "receiver on rank 1")).count(), "rank 0 alone prints:\n" + r.output());
        List<String> csv = Files.readAllLines(out.resolve("results.csv"));
        List<String> header = List.of(csv.get(0).split(","));
        int ranks = header.indexOf("ranks");
        int payload = header.indexOf("payloadBytes");
        assertTrue(ranks > 0 && payload > 0, csv.get(0));
        assertEquals(1 + 2 * 2, csv.size(), String.join("\n", csv)); // 2 thread counts x 2 repeats
        for (String row : csv.subList(1, csv.size())) {
            // the sharing column is quoted and holds commas: count from the end
            String[] f = row.split(",");
            assertEquals("2", f[f.length - (header.size() - ranks)], row);
            assertEquals("8", f[f.length - (header.size() - payload)], row);
        }
        String json = Files.readString(out.resolve("results.json"));
        assertTrue(json.contains("\"ranks\" : 2") || json.contains("\"ranks\":2"), json.substring(0, Math.min(600, json.length())));
        assertTrue(json.contains("\"bootstrap\" : \"pmix\""), json.substring(0, Math.min(1500, json.length())));
        assertFalse(r.output().contains("Exception"), r.output());
    }

    /**
     * Two-sided traffic across the ranks: sends (rank 1's receiver threads repost) and tagged messages
     * (rank 1's slots keep receives posted and check each message's index), at a level with a QP per
     * thread and at one whose threads share a QP, on both sims. Every message sent, warm-up rounds
     * included, must have been received, or the sweep fails on both ranks.
     */
    @ParameterizedTest
    @CsvSource({"sim:mlx5,send", "sim:mlx5,tag", "sim:efa,send", "sim:efa,tag"})
    void twoSidedTrafficAcrossRanksArrivesWhole(String device, String op, @TempDir Path dir) throws Exception {
        Path out = dir.resolve("res");
        Launch.Result r = Launch.run(Launch.mpirun(2, Launch.java(Main.class, "sweep", "--op", op, "--threads", "2",
                "--categories", "static;mpi-threads,qp=shared:combining", "--device", device, "--messages", "6000",
                "--repeat", "1", "--size", "8", "--no-progress", "--out", out.toString())), Map.of(), 110);
        assertEquals(0, r.exit(), r.output());
        List<String> csv = Files.readAllLines(out.resolve("results.csv"));
        assertEquals(1 + 2, csv.size(), String.join("\n", csv)); // 2 levels x 1 repeat
        List<String> header = List.of(csv.get(0).split(","));
        int messages = header.indexOf("messages");
        int warm = header.indexOf("warmupRounds");
        assertTrue(messages > 0 && warm > 0, csv.get(0));
        for (String row : csv.subList(1, csv.size())) {
            String[] f = row.replaceAll("\"[^\"]*\"", "quoted").split(",", -1); // quoted columns hold commas
            assertEquals(header.size(), f.length, row);
            assertEquals("6000", f[messages], row);
            // warmed up until steady on both ranks (SteadyWarmup), tagged messages too: at least its minimum of rounds
            assertTrue(Integer.parseInt(f[warm]) >= 2, row);
        }
        String json = Files.readString(out.resolve("results.json"));
        assertTrue(json.contains("\"op\" : \"" + op + "\""), json.substring(0, Math.min(1500, json.length())));
        assertFalse(r.output().contains("Exception"), r.output());
    }
}
