package dev.scalep.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A tiny {@code policy tune} on each simulated device: the file it writes is a valid policy that records the tune.
 * Each candidate runs in a JVM of its own (about a second or two each on 2 cores), so the tunes here fix postlist and unsignaled
 * on mlx5 to keep the candidate count down; {@code TuneCandidatesTest} counts the full set without timing anything.
 */
@Timeout(value = 400, unit = TimeUnit.SECONDS)
class TuneCommandTest {
    static SweepCommandTest.Run run(String... args) {
        return SweepCommandTest.run(args);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    void aTinyTuneWritesAPolicyThatPassesCheckAndRecordsTheTune(String device, @TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("tuned.yaml");
        List<String> args = new ArrayList<>(List.of("policy", "tune", "--device", device, "--threads", "4", "--within", "20%",
                "--messages", "800", "--repeat", "2", "--out", out.toString(), "--results", tmp.resolve("res").toString()));
        if (device.equals("sim:mlx5")) {
            args.addAll(List.of("--postlist", "32", "--unsignaled", "64", "--confirm", "1"));
        } else {
            args.addAll(List.of("--confirm", "0"));
        }
        SweepCommandTest.Run r = run(args.toArray(String[]::new));
        assertEquals(0, r.rc(), r.out() + r.err());
        String text = Files.readString(out);
        assertTrue(text.startsWith("# scalep policy tune on " + device + ", 4 threads"), text);
        for (String expect : List.of("# workload: 2-byte RDMA write", "# rule: fewest resources within 20% of the best",
                "resource order: uar-pages, qps, memory", "# chosen: ", "# frontier ", "# reproduce: scalep sweep --policy",
                "mpi-threads+combining", "qp 2-way", "ctx 2-way", "\nversion: 1\nclasses:\n  tuned:\n",
                "# each candidate measured as the reproduce line measures the chosen one: scalep sweep --policy, in a JVM of its own")) {
            assertTrue(text.contains(expect), "missing '" + expect + "' in\n" + text);
        }
        long rows = text.lines().filter(l -> l.matches("#[*F ] \\S.*\\d+\\.\\d{3}\\.\\.\\d+\\.\\d{3}.*")).count();
        if (device.equals("sim:efa")) {
            // no thread domains: mpi-everywhere, static, mpi-threads, +combining, qp 2-way, ctx 2-way; q = 1 always
            assertFalse(text.contains("2x-dynamic") || text.contains("shared-dynamic") || text.contains("w/o unsignaled"), text);
            assertTrue(text.contains("    unsignaled: 1\n"), text);
            assertEquals(6 * 3, rows, "levels x (all, w/o postlist, w/o inline)\n" + text);
        } else {
            assertFalse(text.contains("w/o postlist") || text.contains("w/o unsignaled"), text);
            assertTrue(text.contains("    postlist: 32\n") && text.contains("    unsignaled: 64\n"), text);
            assertEquals(9 * 3, rows, "levels x (all, w/o inline, w/o blueflame)\n" + text);
        }
        assertEquals(1, text.lines().filter(l -> l.startsWith("#* ")).count(), "exactly one chosen\n" + text);
        // the chosen class measured again in a fresh JVM (mlx5), or not at all (--confirm 0)
        assertEquals(device.equals("sim:mlx5") ? 1 : 0, text.lines().filter(l -> l.matches(
                "# confirmed in 1 fresh JVMs x 2 repeats: \\d+\\.\\d{3} Mmsg/s .*: the rate to expect from the reproduce line.*"))
                .count(), text);
        assertEquals(device.equals("sim:mlx5"), r.out().contains("confirming "), r.out());

        // each candidate's counters came back from its own JVM's results (ResultsReader) into the tune's results
        JsonNode results = new ObjectMapper().readTree(tmp.resolve("res/results.json").toFile());
        assertTrue(results.get("rows").size() > 0, results.toString());
        for (JsonNode row : results.get("rows")) {
            assertTrue(row.get("wrs").asLong() >= row.get("messages").asLong(), row.toString());
            assertTrue(row.get("doorbellsPerWr").isNumber() && row.get("completionsPerWr").isNumber(), row.toString());
        }

        SweepCommandTest.Run check = run("policy", "check", out.toString(), "--device", device);
        assertEquals(0, check.rc(), check.out() + check.err());
        assertTrue(check.out().startsWith("OK " + out), check.out());
        assertEquals(0, run("policy", "check", out.toString()).rc());

        // the sweep runs the written class on the same device (the rate itself is compared on a quiet machine, not here)
        SweepCommandTest.Run sweep = run("sweep", "--policy", out.toString(), "--device", device, "--threads", "4",
                "--messages", "800", "--repeat", "1", "--no-progress", "--out", tmp.resolve("again").toString());
        assertEquals(0, sweep.rc(), sweep.out() + sweep.err());
        String csv = Files.readString(tmp.resolve("again/results.csv"));
        assertTrue(csv.contains("," + "tuned,4,"), csv);
        // ... and builds exactly what the tune measured for the chosen candidate: the same resources
        Matcher chosen = Pattern.compile("# chosen: .*, (\\d+) UAR pages, (\\d+) QPs, (.+)\n")
                .matcher(text);
        assertTrue(chosen.find(), text);
        List<String> lines = Files.readAllLines(tmp.resolve("again/results.csv"));
        List<String> header = List.of(lines.get(0).split(","));
        String[] row = lines.get(1).split(",");
        assertEquals(chosen.group(1), row[header.indexOf("uarPages")], lines.get(1));
        assertEquals(chosen.group(2), row[header.indexOf("qps")], lines.get(1));
        assertEquals(chosen.group(3), SweepCommand.bytes(Long.parseLong(row[header.indexOf("memoryBytes")])), lines.get(1));

        String json = Files.readString(tmp.resolve("res/results.json"));
        assertTrue(json.contains("\"frontier\""), json);
        assertTrue(Files.readString(tmp.resolve("res/rate-vs-resources.svg")).contains("Pareto frontier"));
        try (var files = Files.list(tmp)) {
            assertTrue(files.noneMatch(f -> f.getFileName().toString().endsWith(".tmp")), "temporary file left behind");
        }
    }

    @Test
    void aBudgetNoCandidateMeetsFailsBeforeAnythingIsTimed(@TempDir Path tmp) {
        Path out = tmp.resolve("tuned.yaml");
        SweepCommandTest.Run r = run("policy", "tune", "--threads", "2", "--max-qps", "0", "--messages", "200",
                "--repeat", "1", "--out", out.toString());
        assertEquals(2, r.rc(), r.out() + r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains("no candidate meets the budget (--max-qps 0)"), r.err());
        assertFalse(r.out().contains("warming up"), "nothing timed: " + r.out());
        assertFalse(Files.exists(out));
    }

    @ParameterizedTest
    @ValueSource(strings = {"--within=150%", "--within=abc", "--op=recv", "--size=0", "--postlist=0", "--postlist=many",
            "--order=doorbells", "--max-memory=lots", "--threads=0", "--device=nope", "--no-rule",
            "--results=pom.xml", "--max-uar-pages=-1", "--size=2000000", "--postlist=512", "--confirm=-1", "--confirm=21"})
    void badOptionsExitTwoWithOneLine(String bad, @TempDir Path tmp) {
        List<String> args = new ArrayList<>(List.of("policy", "tune", "--messages", "200",
                "--repeat", "1", "--out", tmp.resolve("t.yaml").toString()));
        if (!bad.startsWith("--threads")) {
            args.add("--threads=2");
        }
        if (!bad.equals("--no-rule")) {
            args.add(bad);
            if (!bad.startsWith("--within")) {
                args.add("--within=10");
            }
        }
        SweepCommandTest.Run r = run(args.toArray(String[]::new));
        assertEquals(2, r.rc(), r.out() + r.err());
        String err = r.err().strip();
        assertEquals(1, err.lines().count(), err);
        assertFalse(err.contains("Exception") || err.contains("\tat "), err);
        assertFalse(r.out().contains("warming up"), r.out());
        assertFalse(Files.exists(tmp.resolve("t.yaml")));
    }

    @Test
    void unsignaledOnADeviceThatSignalsEveryRequestIsRefused(@TempDir Path tmp) {
        SweepCommandTest.Run r = run("policy", "tune", "--device", "sim:efa", "--threads", "2", "--within", "10",
                "--unsignaled", "64", "--out", tmp.resolve("t.yaml").toString());
        assertEquals(2, r.rc(), r.out() + r.err());
        assertTrue(r.err().contains("sim:efa signals every work request"), r.err());
    }
}
