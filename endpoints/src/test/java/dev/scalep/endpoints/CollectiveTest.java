package dev.scalep.endpoints;

import dev.scalep.spmd.LocalWorld;
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
 * The collectives suite ({@link CollectiveSuite}) in one JVM: ranks are threads of a {@link LocalWorld},
 * on both simulated devices, at three sharing levels, with worlds of one to four ranks (three: the
 * non-power-of-two paths) and two threads running their collectives at once.
 */
class CollectiveTest {
    static final List<String> SCENARIOS = List.of("barrier", "broadcast", "allreduce", "allgather", "alltoall",
            "shortcut");

    static Stream<Arguments> matrix() {
        List<Arguments> out = new ArrayList<>();
        for (String dev : new String[]{"sim:mlx5", "sim:efa"}) {
            for (String level : new String[]{"mpi-everywhere", "static", "mpi-threads"}) {
                for (int[] pt : new int[][]{{1, 2}, {2, 2}, {3, 2}, {4, 2}}) {
                    out.add(Arguments.of(dev, level, pt[0], pt[1]));
                }
            }
            out.add(Arguments.of(dev, "mpi-everywhere+mapped", 4, 2));
            out.add(Arguments.of(dev, "static+mapped:even", 3, 2));
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} ranks={2} threads={3}")
    @MethodSource("matrix")
    @Timeout(180)
    void theCollectiveSuitePassesOnEveryRank(String dev, String level, int ranks, int threads) throws Exception {
        List<Object> results = LocalRanks.run(ranks, 60_000, w -> CollectiveSuite.runAll(w, Devices.byName(dev), level, threads));
        for (int r = 0; r < ranks; r++) {
            assertEquals(SCENARIOS, results.get(r), "rank " + r);
        }
    }
}
