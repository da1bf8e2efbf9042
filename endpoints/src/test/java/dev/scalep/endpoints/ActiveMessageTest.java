package dev.scalep.endpoints;

import dev.scalep.spmd.LocalWorld;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The active-message suite ({@link ActiveMessageSuite}) in one JVM: ranks are threads of a
 * {@link LocalWorld}, on both simulated devices (sim:efa delivers out of order), at a level with
 * everything per thread, per-thread QPs in shared contexts, and one shared QP; worlds of one,
 * two and three ranks (the tagged-message suite's matrix).
 */
class ActiveMessageTest {
    static final List<String> SCENARIOS = List.of("dispatch", "reply", "back-pressure", "hostile", "rendezvous", "slots");

    @ParameterizedTest(name = "{0} {1} ranks={2} threads={3}")
    @MethodSource("dev.scalep.endpoints.MessageTest#matrix")
    @Timeout(180)
    void theActiveMessageSuitePassesOnEveryRank(String dev, String level, int ranks, int threads) throws Exception {
        List<Object> results = LocalRanks.run(ranks, 60_000, w -> ActiveMessageSuite.runAll(w, Devices.byName(dev), level, threads));
        for (int r = 0; r < ranks; r++) {
            assertEquals(SCENARIOS, results.get(r), "rank " + r);
        }
    }
}
