package dev.scalep.bench;

import dev.scalep.spmd.Launch;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JVM's warm-up ({@link Warmup#run}) takes the paths a configuration's rounds take, so that no
 * compiled code of the send path goes back to the interpreter once a configuration is measured. A
 * fresh JVM (this test's JVM has run other tests, whose profiles would hide a path the warm-up
 * missed) runs the warm-up and then one configuration's rounds, with HotSpot logging every
 * deoptimization; none may name the endpoint or the sweep's loop after the warm-up.
 */
class WarmupCoversRoundsTest {
    static final String MARK = "scalep-probe: warm-up done";
    static final String END = "scalep-probe: rounds done";
    static final Workload W = new Workload(Workload.Op.WRITE, 8);

    /** The child JVM: the warm-up for one point, the marker, then the point's own warm-up and timed rounds. */
    public static void main(String[] args) throws Exception {
        SweepPoint p = new SweepPoint("sim:mlx5", "mpi-everywhere", "mpi-everywhere", 1, 32, 64, 256, 400_000, true, true,
                null, 1, "all");
        Device dev = Devices.byName("sim:mlx5");
        try (World world = World.single()) {
            Warmup.run(world, dev, List.of(p), W);
            System.out.println(MARK);
            System.out.flush();
            List<Measurement> ms = SweepRunner.run(world, dev, p, W, 3, p.messages() / 2, m -> { });
            System.out.println(END + " " + ms.size());
            System.out.flush();
        }
    }

    @Test
    void noSendPathCodeIsDeoptimizedOnceAConfigurationRuns() throws Exception {
        // Launch.java's command runs C1 alone, where nothing is deoptimized: this child gets C2
        Launch.Result r = Launch.run(Launch.jvm(List.of("-Xlog:deoptimization=debug:stdout"), WarmupCoversRoundsTest.class),
                Map.of(), 90);
        List<String> lines = r.lines();
        assertEquals(0, r.exit(), r.output());
        int mark = lines.indexOf(MARK);
        assertTrue(mark >= 0, r.output());
        assertTrue(lines.stream().anyMatch(l -> l.equals(END + " 3")), r.output());
        // the log names each trap's method; the warm-up's own traps (before the marker) are its purpose
        List<String> late = lines.subList(mark + 1, lines.size()).stream()
                .filter(l -> l.contains("[deoptimization]"))
                .filter(l -> l.contains("dev.scalep.endpoints.") || l.contains("dev.scalep.bench.SweepRunner")
                        || l.contains("dev.scalep.threading.ExclusivePoster"))
                .toList();
        assertTrue(late.isEmpty(), "send-path code deoptimized while a configuration ran:\n" + String.join("\n", late));
    }
}
