package dev.scalep.endpoints;

import dev.scalep.spmd.Launch;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One rank of a behavioural suite as a process, and the check that every rank of an
 * {@code mpirun} job of it passed: each rank prints {@code NAME: rank R of P on DEVICE LEVEL:
 * passed [scenarios]} and exits 0, or {@code NAME: rank R FAILED: ...} with the trace and exits 1.
 */
final class SuiteMain {
    /** A suite's {@code runAll(world, device, level, threads)}. */
    @FunctionalInterface
    interface Suite {
        List<String> runAll(World world, Device device, String level, int threads) throws Exception;
    }

    private SuiteMain() {
    }

    /** The body of a suite's {@code main(DEVICE LEVEL THREADS)}; never returns. */
    static void main(String name, String usage, Suite suite, String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: " + usage + " DEVICE LEVEL THREADS");
            System.exit(2);
        }
        int status = 0;
        try (World world = World.open()) {
            try {
                List<String> ran = suite.runAll(world, Devices.byName(args[0]), args[1], Integer.parseInt(args[2]));
                System.out.println(name + ": rank " + world.rank() + " of " + world.size() + " on " + args[0] + " "
                        + args[1] + ": passed " + ran);
            } catch (Throwable t) {
                System.out.println(name + ": rank " + world.rank() + " FAILED: " + t);
                t.printStackTrace(System.out);
                status = 1;
            }
        }
        System.out.flush();
        System.exit(status);
    }

    /** Runs {@code main} under {@code mpirun -np ranks} and checks every rank printed its pass line once. */
    static void assertEveryRankPassed(Class<?> main, String name, int ranks, String device, String level, int threads,
                                      List<String> scenarios) throws Exception {
        Launch.Result r = Launch.run(Launch.mpirun(ranks, Launch.java(main, device, level, Integer.toString(threads))),
                Map.of(), 110); // below JUnit's 120-s default, so a hang fails with the ranks' output and thread dumps
        assertEquals(0, r.exit(), r.output());
        for (int rank = 0; rank < ranks; rank++) {
            String line = name + ": rank " + rank + " of " + ranks + " on " + device + " " + level + ": passed " + scenarios;
            assertEquals(1, r.lines().stream().filter(line::equals).count(), "rank " + rank + ":\n" + r.output());
        }
    }
}
