package dev.scalep.spmd;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How a process joins its job, decided from the environment; the failures as one line and exit 2. */
class BootstrapTest {
    @Test
    void notLaunchedIsRankZeroOfOneWithoutPmix() {
        try (World w = Bootstrap.open(Map.of("PATH", "/usr/bin"))) {
            assertEquals(0, w.rank());
            assertEquals(1, w.size());
            assertEquals(0, w.localRank());
            assertEquals(1, w.nodes());
            byte[] b = {0, 1, 0, 2};
            assertArrayEquals(b, w.allgather(b)[0]);
            w.barrier();
            assertEquals(-1, w.lostRank());
            assertThrows(IndexOutOfBoundsException.class, () -> w.node(1));
        }
    }

    @Test
    void pmiOnlyLaunchersAreRecognised() {
        assertTrue(Bootstrap.pmiOnly(Map.of("PMI_RANK", "1", "PMI_SIZE", "4")).contains("PMI_RANK=1"));
        assertTrue(Bootstrap.pmiOnly(Map.of("SLURM_PROCID", "2", "SLURM_NTASKS", "4")).contains("SLURM_PROCID=2 of 4"));
        // A batch script of a 4-task allocation runs as a one-task step: not a launch of several copies.
        assertNull(Bootstrap.pmiOnly(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "4", "SLURM_STEP_NUM_TASKS", "1")));
        assertNull(Bootstrap.pmiOnly(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "1")));
        BootstrapException e = assertThrows(BootstrapException.class,
                () -> Bootstrap.open(Map.of("PMI_RANK", "0", "PMI_SIZE", "2")));
        assertTrue(e.getMessage().contains("srun --mpi=pmix") && e.getMessage().contains("mpirun"), e.getMessage());
    }

    @Test
    void aPmiTwoLaunchPrintsOneLineNamingTheFixAndExitsTwo() throws Exception {
        Launch.Result r = Launch.run(Launch.java(WorldMain.class), Map.of("SLURM_PROCID", "1", "SLURM_NTASKS", "2"), 60);
        assertEquals(2, r.exit(), r.output());
        assertOneLine(r, "srun --mpi=pmix");
    }

    @Test
    void aDeadPmixServerIsOneLineAndExitTwoWithoutACrash() throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("PMIX_NAMESPACE", "scalep-test-nobody");
        env.put("PMIX_RANK", "0");
        env.put("PMIX_SERVER_URI41", "scalep-test-nobody.0;tcp4://127.0.0.1:1");
        env.put("PMIX_SERVER_URI4", "scalep-test-nobody.0;tcp4://127.0.0.1:1");
        env.put("PMIX_SERVER_URI3", "scalep-test-nobody.0;tcp4://127.0.0.1:1");
        env.put("PMIX_SERVER_URI21", "scalep-test-nobody.0;tcp4://127.0.0.1:1");
        env.put("PMIX_SERVER_URI2", "scalep-test-nobody.0;tcp4://127.0.0.1:1");
        Launch.Result r = Launch.run(Launch.java(WorldMain.class), env, 60);
        assertEquals(2, r.exit(), r.output());
        assertOneLine(r, "PMIx_Init failed");
        assertTrue(!r.output().contains("hs_err") && !r.output().contains("SIGSEGV"), r.output());
    }

    private static void assertOneLine(Launch.Result r, String needle) {
        var lines = r.lines().stream().filter(l -> !l.startsWith("WARNING:")).filter(l -> !l.isBlank()).toList();
        assertEquals(1, lines.size(), "exactly one line:\n" + r.output());
        assertTrue(lines.get(0).startsWith("worldmain: ") && lines.get(0).contains(needle), r.output());
        assertTrue(new String(r.output().getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8).lines().noneMatch(l -> l.startsWith("\tat ")));
    }
}
