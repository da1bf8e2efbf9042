package dev.scalep.cli;

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

/**
 * A {@code policy tune} stopped by a signal while a candidate's sweep runs: the sweep it started
 * goes with it, its scratch directory is removed, and it says in one line what it kept.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class TuneInterruptTest {
    @Test
    void aTuneStoppedBySigtermRemovesItsScratchAndSaysWhatItKept(@TempDir Path tmp) throws Exception {
        Path scratchRoot = Files.createDirectory(tmp.resolve("tmpdir"));
        Path out = tmp.resolve("tuned.yaml");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Djava.io.tmpdir=" + scratchRoot,
                "-cp", System.getProperty("java.class.path"), "dev.scalep.cli.Main", "policy", "tune", "--device", "sim:mlx5",
                "--threads", "1", "--within", "20%", "--messages", "200000000", "--repeat", "50", "--confirm", "0",
                "--out", out.toString()).redirectErrorStream(true).start();
        StringBuilder text = new StringBuilder();
        List<ProcessHandle> sweeps = List.of();
        try (BufferedReader rd = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            boolean stopped = false;
            while ((line = rd.readLine()) != null) {
                text.append(line).append('\n');
                if (!stopped && line.startsWith("each candidate runs in a JVM of its own")) {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (sweeps.isEmpty() && System.nanoTime() - deadline < 0) { // the first candidate's sweep runs
                        sweeps = p.toHandle().descendants().toList();
                        Thread.sleep(50);
                    }
                    assertEquals(1, scratch(scratchRoot).size(), "the tune's scratch exists while it runs");
                    p.toHandle().destroy(); // SIGTERM, as Ctrl-C: the same shutdown hooks
                    stopped = true;
                }
            }
        } finally {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        assertFalse(sweeps.isEmpty(), "a candidate's sweep was running: " + text);
        for (ProcessHandle h : sweeps) {
            h.onExit().get(30, TimeUnit.SECONDS);
            assertFalse(h.isAlive(), "the candidate's sweep went with the tune");
        }
        assertTrue(text.toString().contains("policy tune: interrupted: nothing was written; no " + out + " was created"),
                text.toString());
        assertEquals(List.of(), scratch(scratchRoot), "no scalep-tune-* directory is left");
        assertFalse(Files.exists(out));
    }

    private static List<Path> scratch(Path root) throws Exception {
        try (Stream<Path> s = Files.list(root)) {
            return s.filter(f -> f.getFileName().toString().startsWith("scalep-tune-")).toList();
        }
    }
}
