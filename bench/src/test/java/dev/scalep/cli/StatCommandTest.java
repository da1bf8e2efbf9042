package dev.scalep.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.scalep.endpoints.Completion;
import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointManager;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.Launch;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.counters.Counters;
import dev.scalep.verbs.sim.ShmAccess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code scalep stat}: reads the counters files of a job, this process's and those of the two
 * ranks of a running {@code mpirun -np 2} sweep; refuses bad input in one line with exit 2.
 */
class StatCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The sample's process whose pid is {@code pid}, or null. */
    private static JsonNode process(JsonNode sample, long pid) {
        for (JsonNode p : sample.get("processes")) {
            if (p.get("pid").asLong() == pid) {
                return p;
            }
        }
        return null;
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void showsThisProcesssCountersAndTheirRates() throws Exception {
        EndpointOptions o = EndpointOptions.DEFAULTS.withDepths(256, 16).withFeatures(4, 8, 0);
        try (EndpointManager a = EndpointManager.open(Devices.byName("sim:mlx5"), SharingConfig.parse("static"), 1, o);
             EndpointManager b = EndpointManager.open(Devices.byName("sim:mlx5"), SharingConfig.parse("static"), 1, o)) {
            a.connect(b);
            Completion c = new Completion();
            try (Endpoint e = a.acquire()) {
                for (int m = 0; m < 1024; m++) {
                    while (e.write(m, 0, 8, 0) == Endpoint.BACK_PRESSURED) {
                        while (e.poll(c)) {
                            assertTrue(c.ok());
                        }
                    }
                }
                assertTrue(e.drain(20_000_000_000L));
            }
            Map<String, Long> mine = a.counterTotals();
            Counters.publish(); // QP and CQ counters reach the file through the publisher (every 100 ms): now, before sampling
            assertNotNull(Counters.path(), "this process has a counters file");
            String job = ShmAccess.sanitize(ShmAccess.defaultJob());
            SweepCommandTest.Run r = SweepCommandTest.run("stat", "--job", job, "--count", "2", "--interval", "0.2", "--json");
            assertEquals(0, r.rc(), r.err());
            List<String> lines = r.out().lines().toList();
            assertEquals(2, lines.size(), r.out());
            long pid = ProcessHandle.current().pid();
            JsonNode first = process(JSON.readTree(lines.get(0)), pid);
            JsonNode second = process(JSON.readTree(lines.get(1)), pid);
            assertNotNull(first, r.out());
            assertNotNull(second, r.out());
            // the totals of both managers of this process: each counter at least what manager a counted
            JsonNode t = second.get("totals");
            assertTrue(t.get("qp.wrs").get("value").asLong() >= mine.get("qp.wrs"), t.toString());
            assertTrue(t.get("qp.doorbells").get("value").asLong() >= mine.get("qp.doorbells"), t.toString());
            assertTrue(first.get("totals").get("qp.wrs").get("perSecond").isNull(), "no rate on the first sample");
            assertEquals(0.0, t.get("qp.wrs").get("perSecond").asDouble(), 0.0, "nothing posted between the samples");

            SweepCommandTest.Run text = SweepCommandTest.run("stat", "--job", job, "--count", "1");
            assertEquals(0, text.rc(), text.err());
            assertTrue(text.out().contains("pid " + pid), text.out());
            assertTrue(text.out().contains("qp.doorbells") && text.out().contains("doorbells/WR"), text.out());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void badInputIsOneLineAndExitTwo() {
        for (String[] args : List.of(new String[]{"stat", "--interval", "0"}, new String[]{"stat", "--count", "-1"},
                new String[]{"stat", "--job", "a/b"}, new String[]{"stat", "--interval", "x"},
                new String[]{"stat", "--jobb", "x"})) {
            SweepCommandTest.Run r = SweepCommandTest.run(args);
            assertEquals(2, r.rc(), String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.err().lines().count(), r.err());
            assertTrue(r.err().startsWith("scalep stat: "), r.err());
            assertFalse(r.err().contains("Exception"), r.err());
        }
        String job = "nobody-" + UUID.randomUUID().toString().substring(0, 8);
        SweepCommandTest.Run none = SweepCommandTest.run("stat", "--job", job, "--count", "1");
        assertEquals(1, none.rc(), none.err());
        assertTrue(none.err().contains("no running scalep process of job '" + job + "'"), none.err());
    }

    /**
     * A two-rank sweep under mpirun, run long enough to be watched: {@code scalep stat} (another
     * JVM, as a user runs it) sees both ranks of the job, rank 0's WRs and doorbells rising; when the
     * job ends its files are gone.
     */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void showsBothRanksOfARunningMpirunSweep() throws Exception {
        String job = "stat-" + UUID.randomUUID().toString().substring(0, 8);
        List<String> cmd = Launch.mpirun(2, Launch.java(Main.class, "sweep", "--threads", "1", "--categories", "static",
                "--device", "sim:mlx5", "--messages", "3000000", "--repeat", "4", "--size", "8", "--no-progress",
                "--out", Files.createTempDirectory("stat-sweep").toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Path log = Files.createTempFile("stat-mpirun", ".log");
        pb.redirectOutput(log.toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("PMIX_") || k.startsWith("PMI_") || k.startsWith("OMPI_"));
        pb.environment().put("SCALEP_JOB", job);
        Process sweep = pb.start();
        try {
            JsonNode seen = null;
            List<String> outputs = new ArrayList<>();
            for (int attempt = 0; attempt < 60 && seen == null && sweep.isAlive(); attempt++) {
                Launch.Result r = Launch.run(Launch.java(Main.class, "stat", "--job", job, "--count", "2",
                        "--interval", "0.5", "--json"), Map.of(), 60);
                outputs.add(r.output());
                List<JsonNode> samples = new ArrayList<>();
                for (String l : r.lines()) {
                    if (l.startsWith("{")) {
                        samples.add(JSON.readTree(l));
                    }
                }
                if (r.exit() == 0 && samples.size() == 2 && samples.get(1).get("processes").size() == 2) {
                    JsonNode rank0 = samples.get(1).get("processes").get(0);
                    JsonNode t = rank0.get("totals");
                    if (t.has("qp.wrs") && t.get("qp.wrs").get("perSecond").asDouble() > 0) {
                        seen = samples.get(1);
                    }
                }
                if (seen == null) {
                    Thread.sleep(500);
                }
            }
            assertNotNull(seen, "stat never saw two ranks with rank 0 posting:\n" + String.join("\n---\n", outputs)
                    + "\nsweep:\n" + Files.readString(log, StandardCharsets.UTF_8));
            JsonNode p0 = seen.get("processes").get(0);
            JsonNode p1 = seen.get("processes").get(1);
            assertEquals(0, p0.get("rank").asInt(), seen.toString());
            assertEquals(1, p1.get("rank").asInt(), seen.toString());
            assertEquals(2, p0.get("size").asInt());
            assertEquals(2, p1.get("size").asInt());
            assertTrue(p0.get("totals").get("qp.doorbells").get("value").asLong() > 0, seen.toString());
            assertTrue(sweep.waitFor(240, TimeUnit.SECONDS), "the sweep ends");
            assertEquals(0, sweep.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
            Launch.Result after = Launch.run(Launch.java(Main.class, "stat", "--job", job, "--count", "1"), Map.of(), 60);
            assertEquals(1, after.exit(), "the ranks' files are removed when they end: " + after.output());
        } finally {
            sweep.descendants().forEach(ProcessHandle::destroyForcibly);
            sweep.destroyForcibly();
            Files.deleteIfExists(log);
        }
    }
}
