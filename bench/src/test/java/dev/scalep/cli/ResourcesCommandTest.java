package dev.scalep.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code scalep resources} against the mlx5 allocation model the research measured for 16 threads
 * (classic static mode: 8 UAR pages / 16 data-path uUARs per context; a TD page per even TD, or per
 * TD when maximally independent).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResourcesCommandTest {
    static final List<String> KEYS = List.of("contexts", "pds", "mrs", "qps", "cqs", "srqs", "tds", "uarPages", "uuars",
            "uuarsInUse", "memoryBytes");

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            // category,       contexts, qps, cqs, tds, uarPages, uuars, uuarsInUse
            "mpi-everywhere,   16,       16,  16,  0,   128,      256,   16",
            "2x-dynamic,       1,        32,  32,  32,  24,       48,    32",
            "dynamic,          1,        16,  16,  16,  24,       32,    16",
            "shared-dynamic,   1,        16,  16,  16,  16,       32,    16",
            "static,           1,        16,  16,  0,   8,        16,    15",
            "mpi-threads,      1,        1,   1,   0,   8,        16,    1"})
    void sixteenThreadsFollowTheMlx5Model(String category, long contexts, long qps, long cqs, long tds, long uarPages,
                                          long uuars, long uuarsInUse) throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run("resources", "--device", "sim:mlx5", "--threads", "16",
                "--category", category, "--json");
        assertEquals(0, r.rc(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        List<String> names = new java.util.ArrayList<>();
        j.fieldNames().forEachRemaining(names::add);
        assertEquals(KEYS, names, "exactly the report's keys, in order");
        j.forEach(v -> assertTrue(v.isNumber(), "numbers only: " + r.out()));
        assertEquals(contexts, j.get("contexts").asLong());
        assertEquals(qps, j.get("qps").asLong());
        assertEquals(cqs, j.get("cqs").asLong());
        assertEquals(tds, j.get("tds").asLong());
        assertEquals(uarPages, j.get("uarPages").asLong());
        assertEquals(uuars, j.get("uuars").asLong());
        assertEquals(uuarsInUse, j.get("uuarsInUse").asLong());
        // CTX 256 KiB each dominates: one context per thread costs far more than any shared level
        assertTrue(j.get("memoryBytes").asLong() >= contexts * 256 * 1024, r.out());
    }

    @Test
    void efaSubstitutesThreadDomainsAndSaysSo() {
        SweepCommandTest.Run r = SweepCommandTest.run("resources", "--device", "sim:efa", "--threads", "4",
                "--category", "2x-dynamic");
        assertEquals(0, r.rc(), r.err());
        assertTrue(r.out().contains("substituted td: dedicated-2x -> none"), r.out());
        assertTrue(r.out().matches("(?s).*tds\\s+0\\n.*"), r.out());
    }

    @Test
    void mistakesAreOneLineWithoutStackTrace() {
        for (String[] args : new String[][]{
                {"resources", "--threads", "0"},
                {"resources", "--threads", "4", "--category", "ctx=sharde"},
                {"resources", "--threads", "4", "--device", "nope"}}) {
            SweepCommandTest.Run r = SweepCommandTest.run(args);
            assertEquals(2, r.rc(), String.join(" ", args) + ": " + r.err());
            assertFalse(r.err().contains("\tat "), r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
    }
}
