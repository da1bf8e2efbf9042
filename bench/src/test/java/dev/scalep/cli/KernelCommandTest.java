package dev.scalep.cli;

import dev.scalep.bench.kernels.KernelSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 120, unit = TimeUnit.SECONDS) // a hang guard: the warm-up runs each level in up to 15 passes
class KernelCommandTest {
    @Test
    void dgemmAndStencilPrintVerifiedPerLevel() {
        SweepCommandTest.Run r = SweepCommandTest.run("kernel", "dgemm", "--threads", "2", "--categories", "static,mpi-threads",
                "--size", "32", "--tile", "16");
        assertEquals(0, r.rc(), r.out() + r.err());
        assertEquals(2, r.out().lines().filter(l -> l.endsWith("verified")).count(), r.out());
        assertTrue(r.out().contains("GFLOP/s"), r.out());
        assertTrue(r.out().contains("warming up 2 levels ... done"), "every level runs untimed first, 3 passes: " + r.out());
        r = SweepCommandTest.run("kernel", "stencil", "--threads", "3", "--categories", "mpi-threads,qp=shared:combining;dynamic",
                "--size", "16", "--iterations", "5");
        assertEquals(0, r.rc(), r.out() + r.err());
        assertEquals(2, r.out().lines().filter(l -> l.endsWith("verified")).count(), r.out());
        assertTrue(r.out().contains("warming up 2 levels " + ".".repeat(15) + " done"),
                "at most 15 passes of 5 iterations (1500 wanted): " + r.out());
        r = SweepCommandTest.run("kernel", "gups", "--threads", "2", "--categories", "static,mpi-threads", "--size", "10",
                "--warmup", "0");
        assertEquals(0, r.rc(), r.out() + r.err());
        assertEquals(2, r.out().lines().filter(l -> l.endsWith("verified")).count(), r.out());
        assertTrue(r.out().contains("no warm-up (--warmup 0)") && !r.out().contains("warming up"), r.out());
    }

    @Test
    void aWarmUpPassThatDoesNotVerifyIsNamedWithItsDetail() {
        KernelSupport.Result bad = new KernelSupport.Result("gups", "mpi-threads", 2, 2, 0.05, 0.0003, "GUP/s", 5.5e5, false,
                "45 of 4096 words wrong (HPCC allows 40)", null);
        assertEquals("warm-up pass 3 of 15, mpi-threads (2x2): FAILED: 45 of 4096 words wrong (HPCC allows 40)",
                KernelCommand.warmUpFailure(2, 15, bad));
    }

    @Test
    void mistakesExitTwoWithoutStackTrace() {
        for (String[] args : new String[][]{
                {"kernel", "fft"},
                {"kernel", "dgemm", "--size", "30", "--tile", "8"},
                {"kernel", "stencil", "--device", "nope"},
                {"kernel", "stencil", "--categories", "bogus"},
                {"kernel", "dgemm", "--threads", "0"},
                {"kernel", "gups", "--variant", "xor"},
                {"kernel", "gups", "--transport", "pcie"},
                {"kernel", "stencil", "--transport", "shm"},
                {"kernel", "gups", "--size", "31"},
                {"kernel", "stencil", "--variant", "atomic"},
                {"kernel", "gups", "--iterations", "3"},
                {"kernel", "gups", "--warmup", "-1"}}) {
            SweepCommandTest.Run r = SweepCommandTest.run(args);
            assertEquals(2, r.rc(), String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
            assertFalse(r.err().contains("\tat "), r.err());
        }
    }
}
