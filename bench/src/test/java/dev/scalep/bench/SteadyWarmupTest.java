package dev.scalep.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** When a configuration's warm-up ends: the decision on given rates and JIT times, then this JVM's own readings. */
class SteadyWarmupTest {
    private static final long ROUND = 100_000_000L; // 100 ms

    @Test
    void endsAfterTheMinimumWhenTheJitIsQuietAndTheRateSteady() {
        SteadyWarmup w = new SteadyWarmup();
        assertTrue(w.another(10e6, 0, true, ROUND), "one round is never enough");
        assertFalse(w.another(10.5e6, 0, true, ROUND), "quiet, and within 10 % of the round before");
        assertEquals(SteadyWarmup.MIN_ROUNDS, w.rounds());
    }

    @Test
    void goesOnWhileTheCompilersWorkOrHaveWorkQueued() {
        SteadyWarmup w = new SteadyWarmup();
        w.another(16e6, 0, true, ROUND);
        assertTrue(w.another(16e6, 60_000_000L, true, ROUND), "a compiler thread ran for 60 % of the round");
        assertTrue(w.another(16e6, 0, false, ROUND), "a compilation waits in a queue");
        assertFalse(w.another(16e6, 5_000_000L, true, ROUND), "5 % of the round is quiet enough");
    }

    @Test
    void goesOnWhileTheRateMoves() {
        SteadyWarmup w = new SteadyWarmup();
        w.another(15e6, 0, true, ROUND);
        assertTrue(w.another(30e6, 0, true, ROUND), "the rate doubled");
        assertTrue(w.another(26e6, 0, true, ROUND), "13 % below");
        assertFalse(w.another(28e6, 0, true, ROUND));
    }

    @Test
    void boundedInRoundsAndInTime() {
        SteadyWarmup w = new SteadyWarmup();
        int n = 0;
        while (w.another(n % 2 == 0 ? 1e6 : 2e6, 0, false, 1_000_000L)) {
            n++;
        }
        assertEquals(SteadyWarmup.MAX_ROUNDS, w.rounds(), "never steady: stops at the round limit");
        SteadyWarmup slow = new SteadyWarmup();
        int rounds = 0;
        while (slow.another(1e6, 0, false, 4_000_000_000L)) {
            rounds++;
        }
        assertEquals(SteadyWarmup.MAX_NANOS / 4_000_000_000L, slow.rounds(), "4-second rounds: stops at the time limit");
    }

    @Test
    void thisJvmsCompilerThreadsAreFoundAndTheirTimeOnlyGrows() {
        long a = SteadyWarmup.compilerCpuNanos();
        assertTrue(a >= 0, "HotSpot on Linux names its compiler threads C1/C2 CompilerThread in /proc/self/task");
        SteadyWarmup w = new SteadyWarmup();
        long b = w.jitNanos();
        assertTrue(b >= a, a + " then " + b);
    }
}
