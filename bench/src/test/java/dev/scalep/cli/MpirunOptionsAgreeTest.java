package dev.scalep.cli;

import dev.scalep.spmd.Launch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ranks started with different options ({@code mpirun -np 1 A : -np 1 B}): one line on every rank
 * naming the option and the ranks, exit 2, before anything is measured, instead of an internal
 * error, a stall or a false "rank lost"; an option given to one rank only is a difference too.
 */
class MpirunOptionsAgreeTest {
    /** {@code mpirun -np 1 <rank 0's command> : -np 1 <rank 1's command>}. */
    private static List<String> mpmd(List<String> a, List<String> b) {
        List<String> cmd = new ArrayList<>(Launch.mpirun(1, a));
        cmd.add(":");
        cmd.addAll(List.of("-np", "1"));
        cmd.addAll(b);
        return cmd;
    }

    private static void differs(String option, List<String> a, List<String> b) throws Exception {
        Launch.Result r = Launch.run(mpmd(Launch.java(Main.class, a.toArray(String[]::new)),
                Launch.java(Main.class, b.toArray(String[]::new))), Map.of(), 110);
        String what = a + " : " + b + " ->\n" + r.output();
        assertEquals(2, r.exit(), what);
        List<String> lines = r.lines().stream().filter(l -> l.contains(option + " differs between ranks")).toList();
        assertEquals(2, lines.size(), "one line on each rank: " + what);
        assertTrue(lines.getFirst().contains("rank 0") && lines.getFirst().contains("rank 1"), what);
        assertFalse(r.output().contains("Exception") || r.output().contains("internal error")
                || r.output().contains("was lost"), what);
        assertFalse(r.output().contains("scalep sweep on") || r.output().contains("scalep kernel stencil on"), "nothing ran: " + what);
    }

    private static List<String> sweep(Path out, String... more) {
        List<String> a = new ArrayList<>(List.of("sweep", "--threads", "1", "--categories", "static", "--messages", "2000",
                "--repeat", "1", "--no-progress", "--out", out.toString()));
        a.addAll(List.of(more));
        return a;
    }

    @Test
    void aSizeThatDiffersIsOneLineOnEveryRank(@TempDir Path dir) throws Exception {
        differs("--size", sweep(dir.resolve("a"), "--size", "8"), sweep(dir.resolve("b"), "--size", "64"));
        assertFalse(Files.exists(dir.resolve("a").resolve("results.csv")));
    }

    @Test
    void aDeviceThatDiffersIsOneLineOnEveryRank(@TempDir Path dir) throws Exception {
        differs("--device", sweep(dir.resolve("a"), "--device", "sim:mlx5"), sweep(dir.resolve("b"), "--device", "sim:efa"));
    }

    @Test
    void repeatsGivenToOneRankOnlyAreNotIgnored(@TempDir Path dir) throws Exception {
        List<String> a = new ArrayList<>(List.of("sweep", "--threads", "1", "--categories", "static", "--messages", "2000",
                "--no-progress", "--out", dir.resolve("a").toString()));
        differs("--repeat", a, sweep(dir.resolve("b")));
    }

    @Test
    void kernelIterationsThatDifferAreOneLineOnEveryRank() throws Exception {
        differs("--iterations", List.of("kernel", "stencil", "--threads", "1", "--size", "16", "--iterations", "2"),
                List.of("kernel", "stencil", "--threads", "1", "--size", "16", "--iterations", "3"));
    }
}
