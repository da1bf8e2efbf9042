package dev.scalep.spmd;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
    void theProtocolIsChosenFromTheEnvironment() {
        assertEquals("pmix", Bootstrap.choose(Map.of("PMIX_NAMESPACE", "n", "PMIX_RANK", "0", "PMI_FD", "5"), null).protocol());
        // Slurm's PMI-2 plugin sets PMI_JOBID; hydra does not: PMI-2 only where it gives the process mapping
        assertEquals("pmi2", Bootstrap.choose(Map.of("PMI_FD", "5", "PMI_RANK", "0", "PMI_SIZE", "2", "PMI_JOBID", "3.0"), null)
                .protocol());
        assertEquals("pmi1", Bootstrap.choose(Map.of("PMI_FD", "5", "PMI_RANK", "0", "PMI_SIZE", "2"), null).protocol());
        assertEquals("pmi1", Bootstrap.choose(Map.of("PMI_PORT", "h:1", "PMI_ID", "0"), null).protocol());
        assertEquals("none", Bootstrap.choose(Map.of("PATH", "/usr/bin"), null).protocol());
        // a batch script of a 4-task allocation runs as a one-task step: not several copies
        assertEquals("none", Bootstrap.choose(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "4", "SLURM_STEP_NUM_TASKS", "1"), null)
                .protocol());
    }

    @Test
    void theOverrideIsATryListAndThePropertyWins() {
        Map<String, String> slurm = Map.of("PMI_FD", "5", "PMI_RANK", "0", "PMI_SIZE", "2", "PMI_JOBID", "3.0");
        Map<String, String> env = new HashMap<>(slurm);
        env.put("SCALEP_BOOTSTRAP", "pmi1");
        assertEquals("pmi1", Bootstrap.choose(env, null).protocol());
        assertTrue(Bootstrap.choose(env, null).why().contains("SCALEP_BOOTSTRAP=pmi1"));
        assertEquals("pmi2", Bootstrap.choose(env, "pmix, pmi2").protocol(), "pmix is not offered: the next in the list");
        // hydra: PMI-2 when asked for, over PMI_FD; PMI_PORT is PMI-1 only
        assertEquals("pmi2", Bootstrap.choose(Map.of("PMI_FD", "5", "SCALEP_BOOTSTRAP", "pmi2"), null).protocol());
        BootstrapException e = assertThrows(BootstrapException.class,
                () -> Bootstrap.choose(Map.of("PMI_PORT", "h:1", "PMI_ID", "0", "SCALEP_BOOTSTRAP", "pmix,pmi2"), null));
        assertTrue(e.getMessage().startsWith("SCALEP_BOOTSTRAP=pmix,pmi2 asks for pmix or pmi2, but the launcher offers only "
                + "pmi1 (PMI_PORT)"), e.getMessage());
        e = assertThrows(BootstrapException.class, () -> Bootstrap.choose(slurm, "pmi3"));
        assertTrue(e.getMessage().startsWith("-Dscalep.bootstrap=pmi3: 'pmi3' is not a bootstrap"), e.getMessage());
        // nothing launched us: every bootstrap means rank 0 of 1
        assertEquals("none", Bootstrap.choose(Map.of("SCALEP_BOOTSTRAP", "pmi2"), null).protocol());
    }

    @Test
    void severalCopiesWithoutAServerAreRefusedWithTheFix() {
        BootstrapException e = assertThrows(BootstrapException.class,
                () -> Bootstrap.choose(Map.of("SLURM_PROCID", "2", "SLURM_STEP_NUM_TASKS", "4"), null));
        assertTrue(e.getMessage().startsWith("srun started 4 tasks (this is SLURM_PROCID=2) with no process-management server"),
                e.getMessage());
        assertTrue(e.getMessage().contains("srun --mpi=none") && e.getMessage().contains("`srun --mpi=pmix` or `srun --mpi=pmi2`"),
                e.getMessage());
        e = assertThrows(BootstrapException.class, () -> Bootstrap.open(Map.of("PMI_RANK", "0", "PMI_SIZE", "2")));
        assertTrue(e.getMessage().contains("neither PMI_FD nor PMI_PORT"), e.getMessage());
        assertTrue(Bootstrap.launched(Map.of("SLURM_PROCID", "1", "SLURM_NTASKS", "2")));
        assertTrue(Bootstrap.launched(Map.of("PMI_PORT", "h:1")));
        assertFalse(Bootstrap.launched(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "1")));
    }

    @Test
    void aPmiFdThatIsNotASocketIsOneLine() {
        BootstrapException e = assertThrows(BootstrapException.class,
                () -> Bootstrap.open(Map.of("PMI_FD", "0", "PMI_RANK", "0", "PMI_SIZE", "2"), null));
        assertTrue(e.getMessage().startsWith("pmi1 bootstrap (PMI_FD set) failed: PMI_FD=0 is "), e.getMessage());
        e = assertThrows(BootstrapException.class,
                () -> Bootstrap.open(Map.of("PMI_FD", "999", "PMI_RANK", "0", "PMI_SIZE", "2"), null));
        assertTrue(e.getMessage().contains("PMI_FD=999 is not an open descriptor of this process"), e.getMessage());
    }

    @Test
    void aLaunchByMpiNonePrintsOneLineNamingTheFixAndExitsTwo() throws Exception {
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
