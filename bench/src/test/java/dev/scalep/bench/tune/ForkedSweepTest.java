package dev.scalep.bench.tune;

import dev.scalep.bench.Measurement;
import dev.scalep.bench.SweepRunner;
import dev.scalep.bench.Workload;
import dev.scalep.policies.Policy;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A candidate measured by {@code scalep sweep --policy} in a JVM of its own, and a sweep that fails. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ForkedSweepTest {
    private static final String MAIN = "dev.scalep.cli.Main";

    @Test
    void aForkedSweepMeasuresTheCandidateAndCleansUp() throws Exception {
        Device d = Devices.byName("sim:mlx5");
        TuneCandidates.Entry e = TuneCandidates.build(d, 2, Workload.DEFAULT, new TuneCandidates.Features(32, 64), 500)
                .getFirst();
        String yaml = Policy.of("candidate.yaml", e.cls()).effective(d).toYaml();
        Path scratch;
        try (ForkedSweep fork = new ForkedSweep(MAIN)) {
            List<Measurement> ms = fork.measure(e.name(), yaml, e.point(), Workload.DEFAULT, 1000, 2);
            assertEquals(2, ms.size());
            for (Measurement m : ms) {
                assertTrue(m.point() == e.point(), "measurements come back on the caller's point");
                assertEquals(1000, m.messages());
                assertTrue(m.seconds() > 0 && m.mmsgPerSec() > 0, m.toString());
                // the child built what this JVM builds for the same point
                assertEquals(SweepRunner.resources(d, e.point(), Workload.DEFAULT), m.resources());
            }
            scratch = fork.scratch();
            try (var files = Files.list(scratch)) {
                assertEquals(List.of(), files.toList(), "each run's policy, output and log are removed");
            }
        }
        assertFalse(Files.exists(scratch), "the scratch directory is removed on close");
    }

    @Test
    void aSweepThatFailsIsReportedWithItsExitCodeAndLastLine() throws Exception {
        Device d = Devices.byName("sim:mlx5");
        TuneCandidates.Entry e = TuneCandidates.build(d, 2, Workload.DEFAULT, new TuneCandidates.Features(32, 64), 500)
                .getFirst();
        try (ForkedSweep fork = new ForkedSweep("dev.scalep.cli.NoSuchMain")) {
            IllegalStateException x = assertThrows(IllegalStateException.class, () -> fork.measure(e.name(),
                    Policy.of("c.yaml", e.cls()).effective(d).toYaml(), e.point(), Workload.DEFAULT, 1000, 1));
            assertTrue(x.getMessage().startsWith("scalep sweep --policy for candidate '" + e.name() + "' exited with 1: "),
                    x.getMessage());
            assertTrue(x.getMessage().contains("dev.scalep.cli.NoSuchMain"), x.getMessage());
        }
    }
}
