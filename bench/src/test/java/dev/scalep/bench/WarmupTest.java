package dev.scalep.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reading HotSpot's compile queues to tell when the JIT has finished the warm-up's work. */
class WarmupTest {
    @Test
    void idleOnlyWhenNothingCompilesAndEveryQueueIsEmpty() {
        assertTrue(Warmup.idle("Current compiles: \n\nC1 compile queue:\nEmpty\n\nC2 compile queue:\nEmpty\n\n"));
        // CHECKSTYLE.IGNORE RegexpSinglelineJava FOR NEXT 4 LINES: the inputs quote HotSpot's output, class names included
        assertFalse(Warmup.idle("Current compiles: \nC2 CompilerThread0  1717       4       java.lang.StringLatin1::toLowerCase (155 bytes)\n\n"
                + "C1 compile queue:\nEmpty\n\nC2 compile queue:\nEmpty\n"));
        assertFalse(Warmup.idle("Current compiles: \n\nC1 compile queue:\nEmpty\n\nC2 compile queue:\n"
                + "1721   !   4       java.lang.ref.ReferenceQueue::poll (44 bytes)\n"));
    }

    @Test
    void thisJvmAnswersTheQueueCommand() throws InterruptedException {
        String q = Warmup.compilerQueue();
        assertNotNull(q, "HotSpot's DiagnosticCommand MBean answers compilerQueue");
        assertTrue(q.contains("compile queue"), q);
        Warmup.awaitJitQuiet(); // returns (bounded at 30 s)
    }

    @Test
    void awaitJitIdleSeesTheCompilersIdleWithinItsBound() throws InterruptedException {
        // Work for the compilers: code run often enough to be queued for compilation.
        long sink = 0;
        for (int i = 0; i < 200_000; i++) {
            sink += Long.toString(i).hashCode();
        }
        long t0 = System.nanoTime();
        boolean idle = Warmup.awaitJitIdle();
        long waited = System.nanoTime() - t0;
        assertTrue(idle, "the compilers did not go idle within " + Warmup.IDLE_WAIT_NANOS + " ns (" + sink + ")");
        assertTrue(waited < Warmup.IDLE_WAIT_NANOS + 1_000_000_000L, "bounded: waited " + waited + " ns");
    }
}
