package dev.scalep.cli;

import dev.scalep.bench.RunOutput;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A run's files belong to that run, appear whole, and an interrupted run leaves the previous one as it was. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SweepOutputTest {
    static List<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aRunReplacesThePreviousRunsFilesAndLeavesTheUsersAlone(@TempDir Path tmp) throws Exception {
        Files.writeString(tmp.resolve("mine.txt"), "user file");
        SweepCommandTest.Run first = SweepCommandTest.run("sweep", "--threads", "1", "--categories", "static", "--without",
                "postlist", "--messages", "1000", "--repeat", "1", "--no-progress", "--out", tmp.toString());
        assertEquals(0, first.rc(), first.err());
        assertTrue(Files.exists(tmp.resolve("features.svg")), names(tmp).toString()); // a chart of the earlier run
        SweepCommandTest.Run r = SweepCommandTest.run("sweep", "--threads", "1", "--categories", "static", "--messages", "1000",
                "--repeat", "1", "--no-progress", "--out", tmp.toString());
        assertEquals(0, r.rc(), r.err());
        List<String> files = names(tmp);
        assertFalse(files.contains("features.svg"), "the earlier run's chart is gone: " + files);
        assertTrue(files.contains("mine.txt"), files.toString());
        assertTrue(files.contains("results.csv") && files.contains("results.json"), files.toString());
        assertTrue(files.stream().noneMatch(f -> f.startsWith(".scalep-staging") || f.endsWith(".tmp")), files.toString());
        List<String> owned = new RunOutput(tmp).previous();
        assertTrue(owned.contains("results.csv") && !owned.contains("mine.txt"), owned.toString());
        for (String f : owned) {
            assertTrue(Files.size(tmp.resolve(f)) > 0, f);
            assertTrue(r.out().contains("wrote " + tmp.resolve(f)), r.out());
        }
    }

    @Test
    void theManifestNeverDeletesWhatScalepDidNotWrite(@TempDir Path tmp) throws Exception {
        SweepCommandTest.Run first = SweepCommandTest.run("sweep", "--threads", "1", "--categories", "static", "--without",
                "postlist", "--messages", "1000", "--repeat", "1", "--no-progress", "--out", tmp.toString());
        assertEquals(0, first.rc(), first.err());
        // the user replaces a chart of that run with a file of theirs, and lists more names by hand
        Files.delete(tmp.resolve("features.svg"));
        Files.writeString(tmp.resolve("features.svg"), "the user's own drawing");
        Files.writeString(tmp.resolve("notes.txt"), "user notes");
        Files.createDirectory(tmp.resolve("plots"));
        Files.writeString(tmp.resolve("plots").resolve("keep.txt"), "x");
        Files.writeString(tmp.resolve(RunOutput.MANIFEST), Files.readString(tmp.resolve(RunOutput.MANIFEST))
                + "notes.txt\nplots\n");
        SweepCommandTest.Run r = SweepCommandTest.run("sweep", "--threads", "1", "--categories", "static", "--messages", "1000",
                "--repeat", "1", "--no-progress", "--out", tmp.toString());
        assertEquals(0, r.rc(), r.out() + r.err());
        assertEquals("the user's own drawing", Files.readString(tmp.resolve("features.svg")), "a replaced file is kept");
        assertEquals("user notes", Files.readString(tmp.resolve("notes.txt")), "a name listed by hand is kept");
        assertTrue(Files.exists(tmp.resolve("plots").resolve("keep.txt")), "a listed directory is kept, not an error");
        List<String> files = names(tmp);
        assertTrue(files.stream().noneMatch(f -> f.startsWith(".scalep-staging")), files.toString());
    }

    @Test
    void anInterruptedRunSaysWhatWasKeptAndLeavesThePreviousRun(@TempDir Path tmp) throws Exception {
        SweepCommandTest.Run first = SweepCommandTest.run("sweep", "--threads", "1", "--categories", "static", "--messages",
                "1000", "--repeat", "1", "--no-progress", "--out", tmp.toString());
        assertEquals(0, first.rc(), first.err());
        String csv = Files.readString(tmp.resolve("results.csv"));
        List<String> before = names(tmp);

        // A long run in its own JVM, stopped (SIGTERM, which runs the same shutdown hooks as Ctrl-C) once it measures.
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                "dev.scalep.cli.Main", "sweep", "--threads", "1,2", "--messages", "50000000", "--repeat", "100",
                "--no-progress", "--out", tmp.toString()).redirectErrorStream(true).start();
        StringBuilder out = new StringBuilder();
        try (BufferedReader rd = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            boolean stopped = false;
            while ((line = rd.readLine()) != null) {
                out.append(line).append('\n');
                if (!stopped && line.startsWith("scalep sweep on")) {
                    p.toHandle().destroy(); // SIGTERM; Process.destroy would also close our end of its output
                    stopped = true;
                }
            }
        } finally {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        assertTrue(out.toString().contains("scalep sweep: interrupted: no result of this run was kept; " + tmp
                + " still holds the previous run ("), out.toString());
        assertTrue(out.toString().contains("results.csv"), out.toString());
        assertEquals(csv, Files.readString(tmp.resolve("results.csv")));
        assertEquals(before, names(tmp), "nothing staged is left behind");
    }
}
