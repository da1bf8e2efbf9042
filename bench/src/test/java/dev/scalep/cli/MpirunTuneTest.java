package dev.scalep.cli;

import dev.scalep.spmd.Launch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code mpirun -np 2 scalep policy tune}: senders on rank 0, receivers on rank 1; rank 0 alone prints and writes. */
class MpirunTuneTest {
    @Test
    void twoRanksTuneAndRecordIt(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("tuned.yaml");
        Launch.Result r = Launch.run(Launch.mpirun(2, Launch.java(Main.class, "policy", "tune", "--device", "sim:efa",
                "--threads", "2", "--postlist", "32", "--within", "20", "--messages", "2000", "--repeat", "1",
                "--out", out.toString())), Map.of(), 170);
        assertEquals(0, r.exit(), r.output());
        assertEquals(1, r.lines().stream().filter(l -> l.startsWith("scalep policy tune on sim:efa, sender threads on rank 0, "
                + "receivers on rank 1")).count(), "rank 0 alone prints:\n" + r.output());
        String text = Files.readString(out);
        assertTrue(text.contains("# measured across 2 ranks (senders on rank 0, receivers on rank 1)"), text);
        assertTrue(text.contains("# reproduce: mpirun -np 2 scalep sweep --policy " + out), text);
        // sim:efa, 2 threads, postlist fixed: 4 levels without thread domains (no x-way at 2) x (all, w/o inline)
        assertEquals(4 * 2, text.lines().filter(l -> l.matches("#[*F ] \\S.*\\d+\\.\\d{3}\\.\\.\\d+\\.\\d{3}.*")).count(), text);
        assertEquals(0, r.exit(), r.output());
        assertFalse(r.output().contains("Exception"), r.output());
        assertEquals(0, run("policy", "check", out.toString(), "--device", "sim:efa"));
    }

    @Test
    void confirmingInFreshJvmsIsRefusedOnTwoRanks(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("tuned.yaml");
        Launch.Result r = Launch.run(Launch.mpirun(2, Launch.java(Main.class, "policy", "tune", "--device", "sim:efa",
                "--threads", "2", "--within", "20", "--messages", "2000", "--repeat", "1", "--confirm", "2",
                "--out", out.toString())), Map.of(), 110);
        assertTrue(r.exit() != 0, r.output());
        assertTrue(r.output().contains("--confirm would be ignored: two ranks measure every candidate in their own two JVMs"),
                r.output());
        assertFalse(r.output().contains("Exception"), r.output());
        assertFalse(Files.exists(out));
    }

    private static int run(String... args) {
        return SweepCommandTest.run(args).rc();
    }
}
