package dev.scalep.bench.tune;

import dev.scalep.bench.Workload;
import dev.scalep.policies.BlueFlame;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The candidates a tune measures, counted and checked without timing anything. */
class TuneCandidatesTest {
    private static final Workload WRITE = Workload.DEFAULT;

    @Test
    void mlx5AtFourThreadsHasNineLevelsWithEveryFeatureAndWithoutEachOfFour() {
        Device mlx5 = Devices.byName("sim:mlx5");
        List<TuneCandidates.Entry> all = TuneCandidates.build(mlx5, 4, WRITE, new TuneCandidates.Features(null, null), 1000);
        assertEquals(9 * 5, all.size());
        assertEquals(List.of("mpi-everywhere", "2x-dynamic", "dynamic", "shared-dynamic", "static", "mpi-threads",
                "mpi-threads+combining", "qp 2-way", "ctx 2-way"), all.stream().map(TuneCandidates.Entry::level).distinct().toList());
        for (TuneCandidates.Entry e : all) {
            var c = e.cls();
            assertEquals(e.variant().equals("w/o postlist") ? 1 : 32, c.postlist(), e.name());
            assertEquals(e.variant().equals("w/o unsignaled") ? 1 : 64, c.unsignaled(), e.name());
            assertEquals(e.variant().equals("w/o inline"), c.inlineThreshold() < WRITE.size(), e.name());
            assertEquals(e.variant().equals("w/o blueflame"), c.blueFlame() == BlueFlame.OFF, e.name());
            assertEquals(4, e.point().threads(), e.name());
            assertEquals(1000, e.point().messages(), e.name());
        }
    }

    @Test
    void aFixedFeatureIsNotVariedAndXWayLevelsFollowTheDivisors() {
        Device mlx5 = Devices.byName("sim:mlx5");
        List<TuneCandidates.Entry> six = TuneCandidates.build(mlx5, 6, WRITE, new TuneCandidates.Features(8, 16), 10);
        assertTrue(six.stream().noneMatch(e -> e.variant().equals("w/o postlist") || e.variant().equals("w/o unsignaled")));
        assertTrue(six.stream().allMatch(e -> e.cls().postlist() == 8 && e.cls().unsignaled() == 16));
        assertEquals(List.of("qp 2-way", "ctx 2-way", "qp 3-way", "ctx 3-way"), six.stream().map(TuneCandidates.Entry::level)
                .filter(l -> l.contains("-way")).distinct().toList());
    }

    @Test
    void efaHasNoThreadDomainsAndSignalsEveryRequest() {
        Device efa = Devices.byName("sim:efa");
        List<TuneCandidates.Entry> all = TuneCandidates.build(efa, 4, WRITE, new TuneCandidates.Features(null, null), 1000);
        assertEquals(6 * 3, all.size()); // no TD levels; all, w/o postlist, w/o inline
        assertTrue(all.stream().allMatch(e -> e.cls().unsignaled() == 1 && e.cls().sharing().toString().contains("td=none")));
    }
}
