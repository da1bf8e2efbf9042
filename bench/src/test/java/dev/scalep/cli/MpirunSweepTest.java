package dev.scalep.cli;

import dev.scalep.spmd.Launch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
}
