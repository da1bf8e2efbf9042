package dev.scalep.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code scalep resources} against the research's counting rule (ICPADS 2018, as the design digest
 * states it), written here from the paper's description rather than from the implementation: classic
 * mode, 8 static UAR pages per context; every allocated page counts both of its data-path uUARs, used
 * or idle; 2xDynamic creates 2N maximally independent TDs (a page each, threads on every other one),
 * Dynamic N (a page each), Shared Dynamic N TDs paired on ceil(N/2) pages; Static puts N QPs on the
 * driver's static uUARs (4 low-latency first, then the 11 medium ones 1..11 round robin).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ResourcesCommandTest {
    static final List<String> KEYS = List.of("contexts", "pds", "mrs", "qps", "cqs", "srqs", "tds", "uarPages", "uuars",
            "uarPagesInUse", "uuarsInUse", "memoryBytes", "uarModel");

    /** contexts, qps, cqs, tds, uarPages, uuars, uarPagesInUse, uuarsInUse for {@code n} threads. */
    static long[] research(String category, int n) {
        final int staticPages = 8;
        return switch (category) {
            // a context per thread, its QP on one low-latency uUAR
            case "mpi-everywhere" -> counts(n, n, 0, (long) staticPages * n, n, n);
            // 2N independent TDs (and QPs), a page each; threads ring the even ones only
            case "2x-dynamic" -> counts(1, 2L * n, 2L * n, staticPages + 2L * n, n, n);
            case "dynamic" -> counts(1, n, n, staticPages + n, n, n);
            case "shared-dynamic" -> counts(1, n, n, staticPages + (n + 1) / 2, (n + 1) / 2, n);
            case "static" -> {
                int low = Math.min(n, 4);
                int medium = Math.min(Math.max(n - 4, 0), 11);  // uUARs 1..medium, uUAR k on page k/2
                long pagesUsed = (low + 1) / 2 + (medium > 0 ? medium / 2 + 1 : 0);
                yield counts(1, n, 0, staticPages, pagesUsed, low + medium);
            }
            case "mpi-threads" -> counts(1, 1, 0, staticPages, 1, 1);
            default -> throw new IllegalArgumentException(category);
        };
    }

    private static long[] counts(long contexts, long qps, long tds, long pages, long pagesUsed, long uuarsUsed) {
        return new long[]{contexts, qps, qps, tds, pages, 2 * pages, pagesUsed, uuarsUsed};
    }

    @ParameterizedTest(name = "{0} x{1}")
    @CsvSource({"mpi-everywhere,16", "2x-dynamic,16", "dynamic,16", "shared-dynamic,16", "static,16", "mpi-threads,16",
            "2x-dynamic,3", "shared-dynamic,5", "static,1", "static,6", "static,9", "mpi-everywhere,2"})
    void countsFollowTheResearchRule(String category, int n) throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run("resources", "--device", "sim:mlx5", "--threads",
                Integer.toString(n), "--category", category, "--json");
        assertEquals(0, r.rc(), r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        List<String> names = new ArrayList<>();
        j.fieldNames().forEachRemaining(names::add);
        assertEquals(KEYS, names, "exactly the report's keys, in order");
        long[] want = research(category, n);
        String[] keys = {"contexts", "qps", "cqs", "tds", "uarPages", "uuars", "uarPagesInUse", "uuarsInUse"};
        for (int k = 0; k < keys.length; k++) {
            assertTrue(j.get(keys[k]).isNumber(), r.out());
            assertEquals(want[k], j.get(keys[k]).asLong(), keys[k] + " of " + category + " x" + n + ": " + r.out());
        }
        assertTrue(j.get("uarModel").asText().startsWith("classic"), r.out());
        // CTX 256 KiB each dominates: one context per thread costs far more than any shared level
        assertTrue(j.get("memoryBytes").asLong() >= want[0] * 256 * 1024, r.out());
    }

    @Test
    void textReportShowsAllocatedAndInUse() {
        SweepCommandTest.Run r = SweepCommandTest.run("resources", "--device", "sim:mlx5", "--threads", "4",
                "--category", "dynamic");
        assertEquals(0, r.rc(), r.err());
        long[] want = research("dynamic", 4);
        assertTrue(r.out().matches("(?s).*uarPages\\s+" + want[4] + "\\s+" + want[6] + "\\n.*"), r.out());
        assertTrue(r.out().matches("(?s).*uuars\\s+" + want[5] + "\\s+" + want[7] + "\\n.*"), r.out());
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
