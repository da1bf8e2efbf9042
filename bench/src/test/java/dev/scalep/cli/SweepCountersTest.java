package dev.scalep.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sweep records each configuration's counters (timed runs only): a per-thread QP with postlist 8
 * and one signaled in 16 rings 1/8 doorbell and polls 1/16 completion per WR; on a locked shared QP
 * every doorbell is one lock acquisition; on a combining one every WR goes out in a combiner pass.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class SweepCountersTest {
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    void theResultsCarryEachConfigurationsCounters(String device, @TempDir Path tmp) throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run("sweep", "--device", device, "--threads", "1,2", "--categories",
                "static;mpi-threads;mpi-threads,qp=shared:combining", "--messages", "8192", "--postlist", "8",
                "--unsignaled", "16", "--repeat", "2", "--no-progress", "--out", tmp.toString());
        assertEquals(0, r.rc(), r.err());
        String header = Files.readAllLines(tmp.resolve("results.csv")).getFirst();
        for (String c : List.of("doorbellsPerWr", "completionsPerWr", "wrsPerCombinerPass", "contendedPerWr")) {
            assertTrue(List.of(header.split(",")).contains(c), header);
        }
        JsonNode json = new ObjectMapper().readTree(tmp.resolve("results.json").toFile());
        int seen = 0;
        for (JsonNode row : json.get("rows")) {
            String label = row.get("category").asText();
            long wrs = row.get("wrs").asLong();
            long messages = row.get("messages").asLong();
            int q = row.get("unsignaled").asInt(); // what ran: sim:efa signals every request
            assertEquals(messages, wrs, row.toString());
            assertEquals(messages / q, row.get("completions").asLong(), row.toString());
            assertEquals(1.0 / q, row.get("completionsPerWr").asDouble(), 1e-9, row.toString());
            boolean shared = row.get("threads").asInt() == 2; // one thread: the QP has one sharer, no lock or combiner
            if (label.contains("combining") && shared) {
                assertEquals(wrs, row.get("combinedWrs").asLong(), row.toString());
                double perPass = row.get("wrsPerCombinerPass").asDouble();
                assertTrue(perPass >= 1 && perPass <= wrs, row.toString());
                seen |= 4;
            } else if (label.equals("mpi-threads") && shared) {
                assertEquals(messages / 8, row.get("doorbells").asLong(), row.toString());
                assertEquals(row.get("doorbells").asLong(), row.get("lockAcquired").asLong(), row.toString());
                assertTrue(row.get("contendedPerWr").isNumber(), row.toString());
                assertTrue(row.get("wrsPerCombinerPass").isNull(), "no combiner on a locked QP: " + row);
                seen |= 2;
            } else if (label.equals("static")) {
                assertEquals(messages / 8, row.get("doorbells").asLong(), row.toString());
                assertEquals(0.125, row.get("doorbellsPerWr").asDouble(), 1e-9, row.toString());
                assertEquals(0, row.get("lockAcquired").asLong(), row.toString());
                seen |= 1;
            }
        }
        assertEquals(7, seen, "static, locked and combining rows checked");
        for (JsonNode s : json.get("summary")) {
            assertTrue(s.get("doorbellsPerWr").isNumber(), s.toString());
        }
    }

    /**
     * Tagged messages too: on one rank each slot sends to itself, and every eager message is one
     * WR; the receiver's credit messages (one per half of a pair's credits consumed) are WRs of the
     * same rank, so the WRs lie between the messages and twice as many.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    void taggedMessageRowsCarryTheirCountersToo(String device, @TempDir Path tmp) throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run("sweep", "--device", device, "--op", "tag", "--size", "8",
                "--threads", "1,2", "--categories", "static;mpi-threads", "--messages", "4096", "--repeat", "2",
                "--no-progress", "--out", tmp.toString());
        assertEquals(0, r.rc(), r.err());
        JsonNode json = new ObjectMapper().readTree(tmp.resolve("results.json").toFile());
        int rows = 0;
        for (JsonNode row : json.get("rows")) {
            long wrs = row.get("wrs").asLong();
            long messages = row.get("messages").asLong();
            assertTrue(wrs >= messages && wrs < 2 * messages, "WRs of " + messages + " tagged messages: " + row);
            assertTrue(row.get("doorbells").asLong() > 0, row.toString());
            assertTrue(row.get("doorbellsPerWr").isNumber(), row.toString());
            rows++;
        }
        assertEquals(2 * 2 * 2, rows, "two levels, two thread counts, two repeats");
    }
}
