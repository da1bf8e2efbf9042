package dev.scalep.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.scalep.spmd.Launch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code scalep perftest}: ucx_perftest's one-sided tests over windows, in one process and under mpirun. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PerftestCommandTest {
    @ParameterizedTest(name = "{0} on {1}")
    @CsvSource({"ucp_put_bw, sim:mlx5", "ucp_put_lat, sim:mlx5", "ucp_get, sim:mlx5", "ucp_add, sim:mlx5", "ucp_fadd, sim:mlx5",
            "ucp_swap, sim:mlx5", "ucp_cswap, sim:mlx5", "ucp_put_bw, sim:efa", "ucp_put_lat, sim:efa", "ucp_get, sim:efa",
            "ucp_add, sim:efa", "ucp_fadd, sim:efa", "ucp_swap, sim:efa", "ucp_cswap, sim:efa",
            "tag_lat, sim:mlx5", "tag_bw, sim:mlx5", "tag_lat, sim:efa", "tag_bw, sim:efa",
            "ucp_am_lat, sim:mlx5", "ucp_am_bw, sim:mlx5", "ucp_am_lat, sim:efa", "ucp_am_bw, sim:efa"})
    void eachTestRunsBetweenTwoRanksOfThisProcess(String test, String device) throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run("perftest", "-t", test, "-s", "8", "-n", "3000", "-w", "100", "-T", "2",
                "--device", device, "--json");
        assertEquals(0, r.rc(), r.out() + r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        assertEquals(test, j.get("test").asText());
        assertEquals(3000, j.get("iterations").asLong());
        assertTrue(j.get("checked").asBoolean(), r.out());
        assertTrue(j.get("message_rate").asDouble() > 0, r.out());
        assertTrue(j.get("bandwidth_mb_s").asDouble() > 0, r.out());
    }

    /** Through mapped windows (--transport shm): every one-sided test, the atomics' words adding up on the target. */
    @ParameterizedTest(name = "{0} --transport shm on {1}")
    @CsvSource({"ucp_put_bw, sim:mlx5", "ucp_put_lat, sim:mlx5", "ucp_get, sim:mlx5", "ucp_add, sim:mlx5", "ucp_fadd, sim:mlx5",
            "ucp_swap, sim:mlx5", "ucp_cswap, sim:mlx5", "ucp_put_lat, sim:efa", "ucp_get, sim:efa", "ucp_add, sim:efa",
            "ucp_fadd, sim:efa", "ucp_cswap, sim:efa"})
    void oneSidedTestsRunThroughMappedWindows(String test, String device) throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run("perftest", "-t", test, "-s", "8", "-n", "3000", "-w", "100", "-T", "2",
                "--device", device, "--transport", "shm", "--json");
        assertEquals(0, r.rc(), r.out() + r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        assertEquals("shm", j.get("transport").asText(), r.out());
        assertEquals(3000, j.get("iterations").asLong());
        assertTrue(j.get("checked").asBoolean(), r.out());
        assertTrue(j.get("message_rate").asDouble() > 0, r.out());
    }

    /** --rndv-thresh moves the eager/rendezvous crossover below the eager limit: both protocols at one size. */
    @ParameterizedTest(name = "{0} -s 1024 --rndv-thresh {1} on {2}")
    @CsvSource({"tag_lat, 0, sim:mlx5", "tag_bw, 512, sim:efa", "ucp_am_lat, 1023, sim:mlx5", "ucp_am_bw, 0, sim:mlx5"})
    void theRendezvousThresholdIsTheMessageTestsToSet(String test, int threshold, String device) throws Exception {
        JsonNode j = json("perftest", "-t", test, "-s", "1024", "-n", "2000", "-w", "100", "--device", device,
                "--transport", "shm", "--rndv-thresh", Integer.toString(threshold), "--json");
        assertEquals(threshold, j.get("rendezvous_threshold").asLong(), j.toString());
        assertTrue(j.get("message_rate").asDouble() > 0, j.toString());
    }

    /** Run {@code args} in this JVM, expect exit status 0, and return what it printed as JSON. */
    private static JsonNode json(String... args) throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run(args);
        assertEquals(0, r.rc(), r.out() + r.err());
        return new ObjectMapper().readTree(r.out());
    }

    /** Through mapped mailboxes (--transport shm): the tagged and active-message tests, eager and by rendezvous. */
    @ParameterizedTest(name = "{0} -s {1} --transport shm on {2}")
    @CsvSource({"tag_lat, 8, sim:mlx5", "tag_bw, 8, sim:mlx5", "ucp_am_lat, 8, sim:mlx5", "ucp_am_bw, 8, sim:mlx5",
            "tag_lat, 8, sim:efa", "ucp_am_bw, 8, sim:efa", "tag_bw, 1048576, sim:mlx5", "ucp_am_lat, 65536, sim:efa"})
    void messageTestsRunThroughMappedMailboxes(String test, int size, String device) throws Exception {
        JsonNode j = json("perftest", "-t", test, "-s", Integer.toString(size), "-n", "2000", "-w", "100", "-T", "2",
                "--device", device, "--transport", "shm", "--json");
        assertEquals("shm", j.get("transport").asText(), j.toString());
        assertEquals(2000, j.get("iterations").asLong());
        assertTrue(j.get("message_rate").asDouble() > 0, j.toString());
    }

    /** Between processes the target's window and mailboxes are mappings of its shared file; the adds still add up there. */
    @ParameterizedTest(name = "mpirun -np 2 perftest -t {0} --transport shm on {1}")
    @CsvSource({"ucp_put_lat, sim:mlx5", "ucp_fadd, sim:mlx5", "ucp_add, sim:efa", "tag_bw, sim:mlx5", "ucp_am_lat, sim:efa"})
    void underMpirunMappedWindowsReachTheOtherProcess(String test, String device) throws Exception {
        Launch.Result r = Launch.run(Launch.mpirun(2, Launch.java(Main.class, "perftest", "-t", test, "-s", "8", "-n", "2000",
                "-w", "100", "--device", device, "--transport", "shm", "--json")), Map.of(), 110);
        assertEquals(0, r.exit(), r.output());
        String json = r.output().substring(r.output().indexOf('{'), r.output().lastIndexOf('}') + 1);
        JsonNode j = new ObjectMapper().readTree(json);
        assertEquals("shm", j.get("transport").asText(), r.output());
        assertTrue(j.get("checked").asBoolean(), r.output());
    }

    /** Above the eager limit the tagged tests go by rendezvous (the receiver reads the sender's window). */
    @ParameterizedTest(name = "{0} -s {1} on {2}")
    @CsvSource({"tag_lat, 65536, sim:mlx5", "tag_bw, 1048576, sim:mlx5", "tag_lat, 65536, sim:efa", "tag_bw, 1048576, sim:efa"})
    void taggedTestsRunAtRendezvousSizes(String test, int size, String device) throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run("perftest", "-t", test, "-s", Integer.toString(size), "-n", "200",
                "-w", "20", "-T", "2", "--device", device, "--json");
        assertEquals(0, r.rc(), r.out() + r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        assertEquals(size, j.get("size").asInt(), r.out());
        assertTrue(j.get("checked").asBoolean(), r.out());
        assertTrue(j.get("bandwidth_mb_s").asDouble() > 0, r.out());
    }

    /** Active messages: eager up to 64 KiB less the header (the receive slots are sized for -s), rendezvous above. */
    @ParameterizedTest(name = "{0} -s {1} on {2}")
    @CsvSource({"ucp_am_lat, 4096, sim:mlx5", "ucp_am_bw, 65480, sim:mlx5", "ucp_am_lat, 65480, sim:efa", "ucp_am_bw, 4096, sim:efa",
            "ucp_am_bw, 1048576, sim:mlx5", "ucp_am_bw, 65481, sim:efa", "ucp_am_lat, 1048576, sim:efa", "ucp_am_lat, 65481, sim:mlx5"})
    void activeMessageTestsRunEagerAndByRendezvous(String test, int size, String device) throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run("perftest", "-t", test, "-s", Integer.toString(size), "-n", "300",
                "-w", "20", "-T", "2", "--device", device, "--json");
        assertEquals(0, r.rc(), r.out() + r.err());
        JsonNode j = new ObjectMapper().readTree(r.out());
        assertEquals(size, j.get("size").asInt(), r.out());
        assertTrue(j.get("checked").asBoolean(), r.out());
        assertTrue(j.get("bandwidth_mb_s").asDouble() > 0, r.out());
    }

    @ParameterizedTest(name = "mpirun -np 2 perftest -t {0} on {1}")
    @CsvSource({"ucp_am_lat, sim:mlx5", "ucp_am_bw, sim:efa"})
    void underMpirunActiveMessagesRunBetweenProcesses(String test, String device) throws Exception {
        Launch.Result r = Launch.run(Launch.mpirun(2, Launch.java(Main.class, "perftest", "-t", test, "-n", "2000",
                "-w", "200", "--device", device)), Map.of(), 110);
        assertEquals(0, r.exit(), r.output());
        assertEquals(1, r.lines().stream().filter(l -> l.startsWith("Final:")).count(), r.output());
    }

    /**
     * Every one-sided test between two processes at a few iterations: the last operations of a
     * run (a ping-pong's last puts, a stream's tail) are complete before the windows close, so
     * each run ends with its one result and the atomics add up.
     */
    @ParameterizedTest(name = "mpirun -np 2 perftest -t {0} -n 10 on {1}")
    @CsvSource({"ucp_put_lat, sim:mlx5", "ucp_put_bw, sim:mlx5", "ucp_get, sim:mlx5", "ucp_add, sim:mlx5",
            "ucp_fadd, sim:mlx5", "ucp_swap, sim:mlx5", "ucp_cswap, sim:mlx5", "ucp_put_lat, sim:efa", "ucp_put_bw, sim:efa",
            "ucp_get, sim:efa", "ucp_add, sim:efa", "ucp_fadd, sim:efa", "ucp_swap, sim:efa", "ucp_cswap, sim:efa"})
    void underMpirunEveryOneSidedTestEndsCleanlyAtFewIterations(String test, String device) throws Exception {
        Launch.Result r = Launch.run(Launch.mpirun(2, Launch.java(Main.class, "perftest", "-t", test, "-s", "8", "-n", "10",
                "-w", "10", "--device", device, "--json")), Map.of(), 110);
        assertEquals(0, r.exit(), r.output());
        assertFalse(r.output().contains("internal error"), r.output());
        String json = r.output().substring(r.output().indexOf('{'), r.output().lastIndexOf('}') + 1);
        JsonNode j = new ObjectMapper().readTree(json);
        assertEquals(test, j.get("test").asText(), r.output());
        assertEquals(10, j.get("iterations").asLong(), r.output());
        assertTrue(j.get("checked").asBoolean(), r.output());
    }

    @Test
    void underMpirunTaggedMessagesRunBetweenProcesses() throws Exception {
        Launch.Result r = Launch.run(Launch.mpirun(2, Launch.java(Main.class, "perftest", "-t", "tag_lat", "-n", "5000",
                "-w", "1000", "--device", "sim:efa")), Map.of(), 110);
        assertEquals(0, r.exit(), r.output());
        assertEquals(1, r.lines().stream().filter(l -> l.startsWith("Final:")).count(), r.output());
    }

    /** A bandwidth test's percentile column holds the median time per operation of its batches, not 0. */
    @Test
    void aBandwidthTestsPercentileIsItsTypicalTimePerOperation() throws Exception {
        SweepCommandTest.Run r = SweepCommandTest.run("perftest", "-t", "ucp_put_bw", "-n", "20000", "-w", "1000", "--json");
        assertEquals(0, r.rc(), r.out() + r.err());
        JsonNode j = new ObjectMapper().readTree(r.out().substring(r.out().indexOf('{'), r.out().lastIndexOf('}') + 1));
        double p50 = j.get("overhead_p50_us").asDouble();
        assertTrue(p50 > 0 && p50 <= 10 * j.get("overhead_overall_us").asDouble(), r.out());
        assertFalse(j.has("latency_p50_us"), r.out());
    }

    @Test
    void theTablePrintsUcxPerftestsColumns() {
        SweepCommandTest.Run r = SweepCommandTest.run("perftest", "-t", "ucp_fadd", "-n", "2000", "-w", "1000");
        assertEquals(0, r.rc(), r.out() + r.err());
        assertTrue(r.out().contains("|    Stage     | # iterations | 50.0%ile | average | overall |  average |  overall |  average  |  overall  |"),
                r.out());
        assertTrue(r.out().contains("latency (usec)"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("Final: +2000( +[0-9.]+){7}")), r.out());
    }

    @Test
    void mistakesExitTwoWithoutStackTrace() {
        for (String[] args : new String[][]{
                {"perftest", "-t", "ucp_put_zz"},
                {"perftest", "-t", "ucp_fadd", "-s", "16"},
                {"perftest", "-t", "ucp_put_lat", "-s", "4"},
                {"perftest", "-t", "ucp_put_bw", "-n", "1", "-T", "2"},
                {"perftest", "-t", "ucp_get", "--postlist", "8"},
                {"perftest", "-t", "ucp_put_bw", "--category", "bogus"},
                {"perftest", "-t", "ucp_get", "--transport", "pcie"},
                {"perftest", "-t", "ucp_get", "--rndv-thresh", "0"},
                {"perftest", "-t", "tag_lat", "-s", "1024", "--rndv-thresh", "2000"},
                {"perftest", "-t", "tag_bw", "--rndv-thresh", "-5"},
                {"perftest"}}) {
            SweepCommandTest.Run r = SweepCommandTest.run(args);
            assertEquals(2, r.rc(), String.join(" ", args) + ": " + r.err());
            assertFalse(r.err().contains("\tat "), r.err());
        }
    }

    @Test
    void underMpirunRankZeroInitiatesAndPrintsOnce() throws Exception {
        Launch.Result r = Launch.run(Launch.mpirun(2, Launch.java(Main.class, "perftest", "-t", "ucp_fadd", "-n", "5000", "-w", "1000", "-T", "2")),
                Map.of(), 110);
        assertEquals(0, r.exit(), r.output());
        assertEquals(1, r.lines().stream().filter(l -> l.startsWith("scalep perftest ucp_fadd on sim:mlx5 (mpi-everywhere), "
                + "2 processes, 2 threads")).count(), r.output());
        assertEquals(1, r.lines().stream().filter(l -> l.startsWith("Final:")).count(), r.output());
    }

    /**
     * A message stream's receive slots: 256 KiB of them between 256 and 4096 slots, so an 8-byte
     * stream gets 1024 credits and a slot of 8 KiB the 256 it had.
     */
    @Test
    void streamsGetReceiveSlotsByBytes() {
        assertEquals(4096, PerftestCommand.streamRecvDepth(64));
        assertEquals(2048, PerftestCommand.streamRecvDepth(128));
        assertEquals(512, PerftestCommand.streamRecvDepth(512));
        assertEquals(256, PerftestCommand.streamRecvDepth(1088));
        assertEquals(256, PerftestCommand.streamRecvDepth(8256));
    }
}
