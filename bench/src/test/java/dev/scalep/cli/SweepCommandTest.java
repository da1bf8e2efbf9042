package dev.scalep.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SweepCommandTest {
    static final String HEADER = "device,category,threads,postlist,unsignaled,messages,seconds,mmsgPerSec,qps,cqs,uarPages,uuars,memoryBytes";

    record Run(int rc, String out, String err) {
    }

    static synchronized Run run(String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(o, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(e, true, StandardCharsets.UTF_8));
            int rc = Main.run(args);
            return new Run(rc, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }

    /** {@code --profile}: the table by layer after the medians, and profile.csv (a row per configuration and layer) and profile.jfr kept. */
    @Test
    void profileWritesItsTableAndFiles(@TempDir Path tmp) throws Exception {
        Run r = run("sweep", "--threads", "1,2", "--categories", "mpi-everywhere", "--messages", "400000",
                "--repeat", "2", "--no-progress", "--profile", "--out", tmp.toString());
        assertEquals(0, r.rc(), r.err());
        assertTrue(r.out().contains("where the sender threads' CPU time went in the timed rounds"), r.out());
        assertTrue(r.out().contains("PROVIDER"), r.out());
        List<String> lines = Files.readAllLines(tmp.resolve("profile.csv"));
        assertEquals("configuration,threads,postlist,mmsgPerSec,samples,layer,layerSamples,share,nsPerMessage", lines.getFirst());
        assertEquals(1 + 2 * 7, lines.size(), String.join("\n", lines));
        assertTrue(lines.stream().skip(1).allMatch(l -> l.startsWith("mpi-everywhere,")), String.join("\n", lines));
        assertTrue(Files.size(tmp.resolve("profile.jfr")) > 0);
        assertTrue(Files.readString(tmp.resolve(".scalep-run")).contains("profile.jfr"), "the run's manifest lists it");
        // a later run without --profile removes what this one wrote
        Run again = run("sweep", "--threads", "1", "--categories", "mpi-everywhere", "--messages", "2000",
                "--repeat", "1", "--no-progress", "--out", tmp.toString());
        assertEquals(0, again.rc(), again.err());
        assertFalse(Files.exists(tmp.resolve("profile.csv")));
        assertFalse(Files.exists(tmp.resolve("profile.jfr")));
    }

    @Test
    void sweepWritesOneRowPerConfiguration(@TempDir Path tmp) throws Exception {
        Run r = run("sweep", "--threads", "1,2", "--categories", "static,mpi-threads", "--messages", "2000",
                "--repeat", "1", "--no-progress", "--out", tmp.toString());
        assertEquals(0, r.rc(), r.err());
        List<String> lines = Files.readAllLines(tmp.resolve("results.csv"));
        String[] header = lines.getFirst().split(",");
        for (String col : HEADER.split(",")) {
            assertTrue(List.of(header).contains(col), "results.csv lacks column " + col + ": " + lines.getFirst());
        }
        assertTrue(lines.getFirst().startsWith(HEADER), lines.getFirst());
        List<Map<String, String>> rows;
        CsvMapper csv = new CsvMapper();
        try (MappingIterator<Map<String, String>> it = csv
                .readerForMapOf(String.class).with(CsvSchema.emptySchema().withHeader())
                .readValues(tmp.resolve("results.csv").toFile())) {
            rows = it.readAll();
        }
        assertEquals(4, rows.size(), String.join("\n", lines));
        Set<String> seen = new HashSet<>();
        for (Map<String, String> row : rows) {
            seen.add(row.get("category") + "/" + row.get("threads"));
            assertEquals("sim:mlx5", row.get("device"), row.toString());
            // --messages is per configuration, split evenly over the sender threads
            assertEquals(2000L, Long.parseLong(row.get("messages")), row.toString());
            assertTrue(Double.parseDouble(row.get("mmsgPerSec")) > 0, row.toString());
            assertTrue(Long.parseLong(row.get("qps")) >= 1, row.toString());
        }
        assertEquals(Set.of("static/1", "static/2", "mpi-threads/1", "mpi-threads/2"), seen);
        assertTrue(Files.exists(tmp.resolve("results.json")));
        JsonNode conn = new ObjectMapper()
                .readTree(tmp.resolve("results.json").toFile()).at("/settings/connection");
        Set<String> keys = new HashSet<>();
        conn.fieldNames().forEachRemaining(keys::add);
        assertEquals(dev.scalep.verbs.ConnectionOptions.DEFAULTS.toMap().keySet(), keys,
                "the connection settings in force are recorded");
        assertEquals(14, conn.get("timeout").asInt());
        assertEquals("auto", conn.get("pathMtu").asText());
    }

    @Test
    void theCsvRecordsTheUnsignaledIntervalThatRanAndWhatWasAsked(@TempDir Path tmp) throws Exception {
        Run r = run("sweep", "--device", "sim:efa", "--threads", "1", "--categories", "static", "--messages", "2000",
                "--repeat", "2", "--no-progress", "--out", tmp.toString());
        assertEquals(0, r.rc(), r.err());
        CsvMapper csv = new CsvMapper();
        List<Map<String, String>> rows;
        try (MappingIterator<Map<String, String>> it = csv
                .readerForMapOf(String.class).with(CsvSchema.emptySchema().withHeader())
                .readValues(tmp.resolve("results.csv").toFile())) {
            rows = it.readAll();
        }
        assertEquals(2, rows.size());
        for (Map<String, String> row : rows) {
            assertEquals("1", row.get("unsignaled"), "sim:efa signals every WR: " + row);
            assertEquals("64", row.get("unsignaledAsked"), row.toString());
        }
        // The table's Q column shows what ran too.
        assertTrue(r.out().lines().anyMatch(l -> l.matches("static\\s+all\\s+1\\s+32\\s+1\\s+.*")), r.out());
        assertTrue(r.out().contains("spread"), r.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"sim:mlx5,catalog:recommended-mlx5", "sim:efa,catalog:recommended-efa"})
    void aPolicySweepRunsAtTheThreadCountsItsSharingDivides(String args, @TempDir Path tmp) throws Exception {
        String[] a = args.split(",");
        Run r = run("sweep", "--device", a[0], "--policy", a[1], "--messages", "4000", "--repeat", "1", "--no-progress",
                "--out", tmp.toString());
        assertEquals(0, r.rc(), r.out() + r.err());
        Set<String> threads = new TreeSet<>();
        for (String line : Files.readAllLines(tmp.resolve("results.csv")).subList(1, 2)) {
            threads.add(line.split(",")[2]);
        }
        assertFalse(threads.isEmpty());
        if (a[0].equals("sim:mlx5")) { // its bulk class shares QPs 4 ways: 4, 8 and 16 threads only
            assertTrue(r.out().contains("note: threads [4, 8, 16]"), r.out());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"--threads=0", "--without=bogus", "--device=nope"})
    void badOptionsExitTwoWithOneLine(String bad, @TempDir Path tmp) {
        Run r = run("sweep", bad, "--messages", "100", "--repeat", "1", "--no-progress", "--out", tmp.toString());
        assertEquals(2, r.rc(), r.out() + r.err());
        String err = r.err().strip();
        assertFalse(err.isEmpty());
        assertEquals(1, err.lines().count(), err);
        assertFalse(err.contains("Exception") || err.contains("\tat "), err);
    }
}
