package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A responder's fault (a refused RDMA write moves the target RC QP to ERR) racing the target's own
 * reset, in one process: the fault is found by the requester's engine, in the requester's thread,
 * while another thread resets the target and brings it to INIT. The fault belongs to the target's
 * incarnation before the reset, so it must never land on the reset QP: before the fault was made
 * under the target's engine lock with its incarnation checked, it could, and the target's next
 * {@code init} failed ("illegal transition ERR -> INIT") or the target ended in ERR. Bounded by
 * work ({@value #ROUNDS} rounds, each with a different small head start for the requester, so that
 * the two threads meet at many offsets); the requester thread's failure reaches the test thread.
 */
@Timeout(120)
class ResponderFaultRaceTest {
    private static final int ROUNDS = 20_000;

    @Test
    void aFaultOfTheEarlierIncarnationNeverMovesTheResetTargetToErr() throws Exception {
        SimDevice dev = SimDevice.newMlx5();
        try (SimPair p = SimPair.rc(dev, ContextOptions.DEFAULTS, 8);
             SendWorkRequests bad = new SendWorkRequests(1, 1);
             WorkCompletions wc = new WorkCompletions(8)) {
            int i = bad.add(7, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
            bad.sge(i, p.mrA, 0, 8).rdma(i, p.mrB.address(), p.mrB.rkey() ^ 0x5a5a00); // no such rkey at b
            // A spinning hand-off, not a parking barrier: both threads leave it within a few hundred
            // nanoseconds of each other, so the requester's head start below decides how they meet.
            AtomicInteger go = new AtomicInteger();
            AtomicInteger done = new AtomicInteger();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            int[] rc = new int[1];
            Thread requester = new Thread(() -> {
                try {
                    for (int r = 1; r <= ROUNDS; r++) {
                        while (go.get() != r) {
                            if (stop.get()) {
                                return;
                            }
                            Thread.onSpinWait();
                        }
                        rc[0] = p.a.postSend(bad);
                        done.set(r);
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            }, "requester");
            requester.start();
            int faults = 0;
            int refusedAsGone = 0;
            try {
                for (int r = 1; r <= ROUNDS; r++) {
                    go.set(r);
                    for (int k = r % 97; k > 0; k--) {
                        Thread.onSpinWait(); // a head start for the requester that varies from round to round
                    }
                    p.b.reset();
                    p.b.init(Access.ALL_RDMA);
                    while (done.get() != r) { // the requester's post, and with it the fault, is over
                        assertNull(failure.get(), () -> "the requester thread failed: " + failure.get());
                        assertTrue(requester.isAlive());
                        Thread.onSpinWait();
                    }
                    assertEquals(QpState.INIT, p.b.state(), "round " + r + ": the reset target is still in INIT");
                    assertEquals(0, rc[0], "round " + r + ": the requester posted its write");
                    int st = oneCompletion(p, wc);
                    if (st == WcStatus.REM_ACCESS_ERR) {
                        faults++;
                    } else {
                        assertEquals(WcStatus.RETRY_EXC_ERR, st, "round " + r + ": the target was already reset");
                        refusedAsGone++;
                    }
                    while (p.ctxB.pollAsyncEvent(0) != null) {
                        // QP_ACCESS_ERR of a fault that came before the reset
                    }
                    p.b.readyToReceive(p.a.address());
                    p.b.readyToSend(7, 7);
                    p.a.reset();
                    p.a.connect(p.b.address(), Access.ALL_RDMA, 7);
                }
            } finally {
                stop.set(true);
                requester.join();
            }
            assertNull(failure.get(), () -> "the requester thread failed: " + failure.get());
            assertEquals(ROUNDS, faults + refusedAsGone);
            assertTrue(faults > 0, "some writes met the target before its reset: " + faults);
        }
    }

    /** The bad write's one completion at a (its QP then in ERR; nothing else was posted). */
    private static int oneCompletion(SimPair p, WorkCompletions wc) {
        for (;;) {
            int n = p.cqA.poll(wc, 8);
            assertTrue(n >= 0);
            if (n > 0) {
                assertEquals(1, n);
                assertEquals(7L, wc.wrId(0));
                return wc.status(0);
            }
        }
    }
}
