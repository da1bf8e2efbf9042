package dev.scalep.cli;

import dev.scalep.bench.Stats;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code scalep drift}: a cycle line per probe-and-burst cycle with a real rate, the summary, and refusals before any work. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DriftCommandTest {
    private static final Pattern CYCLE = Pattern.compile("(?m)^\\s+(\\d+)\\s+([\\d.]+)\\s+([\\d.]+)\\s+(\\d+)\\s+([\\d.]+)$");

    @ParameterizedTest(name = "{0} x{1}")
    @CsvSource({"shared-dynamic,2", "mpi-threads,3", "mpi-threads;qp=shared:combining,2"})
    void everyCyclePrintsAProbeAndARate(String level, int threads) {
        String category = level.replace(';', ',');
        SweepCommandTest.Run r = SweepCommandTest.run("drift", "--category", category, "--threads", String.valueOf(threads),
                "--cycles", "8", "--messages", "2000");
        assertEquals(0, r.rc(), r.err());
        Matcher m = CYCLE.matcher(r.out());
        int n = 0;
        while (m.find()) {
            n++;
            assertEquals(n, Integer.parseInt(m.group(1)), r.out());
            assertTrue(Double.parseDouble(m.group(3)) > 0, "probe time: " + m.group());
            assertTrue(Long.parseLong(m.group(4)) > 0, "line round trip: " + m.group());
            assertTrue(Double.parseDouble(m.group(5)) > 0, "rate: " + m.group());
        }
        assertEquals(8, n, r.out());
        assertTrue(r.out().contains("steady cycles: 3;"), r.out());
        assertTrue(r.out().contains("arithmetic probe "), r.out());
        assertTrue(r.out().contains("line round trip "), r.out());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "--threads 1|--threads: 1 is out of range 2..64 (the line probe needs two threads)",
            "--cycles 7|--cycles: 7 is out of range 8..100000",
            "--messages 10|--messages: 10 is out of range 1000..100000000",
            "--postlist 0|--postlist: 0 is out of range 1..256",
            "--category nonsense|nonsense",
            "--threads 3 --category qp=2way|3",
            "--device sim:nothing|sim:nothing"})
    void mistakesAreRefusedBeforeAnyWork(String args, String says) {
        SweepCommandTest.Run r = SweepCommandTest.run(("drift " + args).split(" "));
        assertEquals(2, r.rc(), r.out() + r.err());
        assertTrue(r.err().contains(says), r.err());
        assertFalse(r.out().contains("CYCLE"), "nothing ran: " + r.out());
        assertFalse(r.err().contains("\tat "), "no stack trace: " + r.err());
    }

    @Test
    void underALauncherItRefusesToRun() {
        UserException e = assertThrows(UserException.class,
                () -> DriftCommand.refuseLauncher(Map.of("OMPI_COMM_WORLD_SIZE", "2", "PMIX_RANK", "0", "PMIX_NAMESPACE", "j")));
        assertTrue(e.getMessage().contains("without a launcher"), e.getMessage());
        DriftCommand.refuseLauncher(Map.of("HOME", "/root")); // alone: runs
    }

    @Test
    void theSummaryStatisticsAreTheTextbookOnes() {
        assertEquals(-1.0, DriftCommand.correlation(new double[]{1, 2, 3, 4}, new double[]{8, 6, 4, 2}), 1e-12);
        assertEquals(1.0, DriftCommand.correlation(new double[]{1, 2, 3}, new double[]{10, 20, 30}), 1e-12);
        assertTrue(Double.isNaN(DriftCommand.correlation(new double[]{1, 1, 1}, new double[]{1, 2, 3})));
        assertEquals(2.5, Stats.of(new double[]{4, 1, 3, 2}).median(), 1e-12);
        assertEquals(3.0, Stats.of(new double[]{5, 3, 1}).median(), 1e-12);
        // near, far: the widest jump of at least 2x between sorted neighbours splits them
        assertEquals(4, DriftCommand.nearCount(new double[]{30, 70, 75, 80, 460, 470}));
        assertEquals(6, DriftCommand.nearCount(new double[]{30, 45, 70, 75, 80, 110}));
        assertEquals(0, DriftCommand.nearCount(new double[]{}));
        assertEquals(3, DriftCommand.nearCount(new double[]{339, 400, 472}));
    }
}
