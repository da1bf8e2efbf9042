package dev.scalep.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code scalep spmd} with ranks as threads of this process; the launched form is in {@code MpirunSpmdTest}. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SpmdCommandTest {
    @Test
    void everyThreadOfEveryRankVerifiesOnBothSimulatedDevices() {
        for (String dev : new String[]{"sim:mlx5", "sim:efa"}) {
            for (String level : new String[]{"static", "mpi-threads"}) {
                SweepCommandTest.Run r = SweepCommandTest.run("spmd", "--ranks", "3", "--threads", "2", "--device", dev,
                        "--category", level, "--rounds", "2");
                assertEquals(0, r.rc(), r.out() + r.err());
                // 3 ranks x 2 peers x 2 threads x 2 rounds
                assertTrue(r.out().contains("spmd: 3 ranks x 2 threads on " + dev + " (" + level + ", ")
                        && r.out().contains("verified 24 writes and 24 reads of 24"), r.out());
            }
        }
    }

    @Test
    void mistakesExitTwoWithOneLine() {
        for (String[] args : new String[][]{
                {"spmd"},
                {"spmd", "--ranks", "1"},
                {"spmd", "--ranks", "2", "--threads", "0"},
                {"spmd", "--ranks", "2", "--rounds", "0"},
                {"spmd", "--ranks", "2", "--category", "bogus"},
                {"spmd", "--ranks", "2", "--device", "nope"},
                {"sweep", "--size", "0"}}) {
            SweepCommandTest.Run r = SweepCommandTest.run(args);
            assertEquals(2, r.rc(), String.join(" ", args) + ": " + r.out() + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
            assertFalse(r.err().contains("\tat "), r.err());
        }
    }
}
