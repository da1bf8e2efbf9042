package dev.scalep.endpoints;

import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The attentiveness suite ({@link ProgressSuite}) in one JVM: two ranks as threads, two slots
 * each, on both simulated devices, at a level with everything per thread, per-thread QPs in
 * shared contexts, and one shared QP; each case runs without and with the progress thread.
 */
class ProgressTest {
    static Stream<Arguments> matrix() {
        List<Arguments> out = new ArrayList<>();
        for (String dev : new String[]{"sim:mlx5", "sim:efa"}) {
            for (String level : new String[]{"mpi-everywhere", "static", "mpi-threads"}) {
                out.add(Arguments.of(dev, level, 2, 2));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} ranks={2} threads={3}")
    @MethodSource("matrix")
    @Timeout(240)
    void anInattentiveSlotStallsItsPeersUnlessTheProgressThreadRuns(String dev, String level, int ranks, int threads)
            throws Exception {
        List<Object> results = LocalRanks.run(ranks, 120_000, w -> ProgressSuite.runAll(w, Devices.byName(dev), level, threads));
        for (int r = 0; r < ranks; r++) {
            assertEquals(ProgressSuite.SCENARIOS, results.get(r), "rank " + r);
        }
    }
}
