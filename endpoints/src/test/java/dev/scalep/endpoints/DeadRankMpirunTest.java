package dev.scalep.endpoints;

import dev.scalep.spmd.Launch;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rank that dies (halts: no close, no finalize) while the other waits in a receive and in a
 * barrier of {@link Collectives}: both waiters fail with {@link MessageStatus#PEER_LOST} naming
 * rank 1, within a bound well under the 60 s a wait gives up after ({@link DeadRankMain}). The
 * launcher is told that a process may end without finalizing, so it leaves rank 0 running.
 */
class DeadRankMpirunTest {
    /** What the waiters must take at most: the probe comes after 1 s, the simulator notices a dead process in 50 ms. */
    private static final long BOUND_MS = 20_000;

    @ParameterizedTest(name = "mpirun -np 2 {0} {1}")
    @CsvSource({"sim:mlx5, static", "sim:efa, mpi-threads"})
    void waitersOnADeadRankFailNamingItWithinABound(String device, String level) throws Exception {
        List<String> cmd = Launch.mpirun(2, Launch.java(DeadRankMain.class, device, level));
        cmd.addAll(1, List.of("--mca", "orte_allowed_exit_without_sync", "1"));
        Launch.Result r = Launch.run(cmd, Map.of(), 110); // below JUnit's 120-s default
        String recv = line(r, "deadrank: recv from rank 1: ");
        assertTrue(recv.contains("source=1") && recv.contains("PEER_LOST"), r.output());
        assertTrue(millis(recv) < BOUND_MS, recv);
        String barrier = line(r, "deadrank: barrier failed: ");
        assertTrue(barrier.contains("rank 1") && barrier.contains("PEER_LOST"), r.output());
        assertTrue(millis(barrier) < BOUND_MS, barrier);
    }

    private static String line(Launch.Result r, String prefix) {
        List<String> l = r.lines().stream().filter(s -> s.startsWith(prefix)).toList();
        assertEquals(1, l.size(), "one line " + prefix + "...:\n" + r.output());
        return l.get(0);
    }

    private static long millis(String line) {
        Matcher m = Pattern.compile(" after ([0-9]+) ms$").matcher(line);
        assertTrue(m.find(), line);
        return Long.parseLong(m.group(1));
    }
}
