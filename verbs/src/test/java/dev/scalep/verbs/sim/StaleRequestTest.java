package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A request of a QP of another process that the target's NIC agent has taken off its ring and
 * checked, but not yet executed, when the requester moves to ERR, is reset and brought back to RTS,
 * must not take a receive the target posts after that: it belongs to the requester's earlier
 * incarnation (its WQE was flushed), and the receive is meant for the new incarnation's send.
 * Two device objects of this JVM stand for the two processes; this test holds the target's
 * receive-queue lock, so the agent stops exactly between its check of the request and the
 * consumption of a receive, the window in which a descheduled agent lost the receive
 * ({@code VerbsBehaviourSuite.errorFlushesEachWrOnceInSqOrderThenQpIsReusable} across processes:
 * the new send then met RNR until the test's 10 s ran out).
 */
@Timeout(120)
class StaleRequestTest {
    private static final long WAIT_NANOS = 10_000_000_000L;

    @ParameterizedTest
    @ValueSource(strings = {"mlx5", "efa"})
    void aRequestOfAnEarlierIncarnationTakesNoReceivePostedAfterTheReset(String personality) {
        String job = CrossProcessTest.job("stale-" + personality);
        try (CrossProcessTest.Local a = new CrossProcessTest.Local(FabricPeer.device(personality, job));
             CrossProcessTest.Local b = new CrossProcessTest.Local(FabricPeer.device(personality, job));
             SendWorkRequests w = new SendWorkRequests(1, 1); RecvWorkRequests r = new RecvWorkRequests(1, 1)) {
            connect(a, b);
            connect(b, a);
            CrossProcessTest.fill(a.mem, 0, 8, 1); // the old incarnation's payload
            CrossProcessTest.fill(a.mem, 64, 8, 2); // the new one's
            SimLock rq = ((SimQp) b.qp).rq.lock;
            rq.lock();
            boolean held = true;
            try {
                a.add(w, 1, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0, 0);
                assertEquals(0, a.qp.postSend(w));
                awaitAgentAtReceiveQueue(a, b.dev.fabricSlot()); // polls at a release EFA's window

                a.qp.toError();
                List<long[]> flushed = a.poll(1);
                assertEquals(1, flushed.get(0)[0]);
                assertEquals(WcStatus.WR_FLUSH_ERR, (int) flushed.get(0)[1]);
                a.qp.reset();
                a.qp.init(Access.ALL_RDMA);
                a.qp.readyToReceive(a.efa ? null : a.peer);
                a.qp.readyToSend(7, 7);

                r.sge(r.add(9), b.mr, 0, 64);
                assertEquals(0, b.qp.postRecv(r)); // this thread holds the lock: it is reentrant
                w.clear();
                a.add(w, 42, Opcode.SEND, SendFlags.SIGNALED, 64, 8, 0, 0);
                assertEquals(0, a.qp.postSend(w));
                held = false;
                rq.unlock(); // the agent goes on with the old incarnation's request
            } finally {
                if (held) {
                    rq.unlock();
                }
            }
            List<long[]> tx = new ArrayList<>();
            long[] rx = receiveWhilePolling(b, a, tx); // polls at a release EFA's window
            assertEquals(9, rx[0]);
            assertEquals(WcStatus.SUCCESS, (int) rx[1]);
            assertArrayEquals(CrossProcessTest.pattern(8, 2), b.mem.asSlice(0, 8).toArray(JAVA_BYTE),
                    "the receive got the new incarnation's send, not the flushed one of the old");
            if (tx.isEmpty()) {
                tx.addAll(a.poll(1));
            }
            assertEquals(1, tx.size());
            assertEquals(42, tx.get(0)[0]);
            assertEquals(WcStatus.SUCCESS, (int) tx.get(0)[1]);
            try (WorkCompletions wc = new WorkCompletions(4)) {
                assertEquals(0, a.cq.poll(wc), "nothing more at the requester");
                assertEquals(0, b.cq.poll(wc), "nothing more at the target");
            }
        }
    }

    /** Poll b for one completion, polling a as well (its completions go to {@code aWcs}); fails after 10 s. */
    private static long[] receiveWhilePolling(CrossProcessTest.Local b, CrossProcessTest.Local a, List<long[]> aWcs) {
        long deadline = System.nanoTime() + WAIT_NANOS;
        try (WorkCompletions wc = new WorkCompletions(4)) {
            while (true) {
                if (b.cq.poll(wc, 1) == 1) {
                    return new long[] {wc.wrId(0), wc.status(0)};
                }
                int n = a.cq.poll(wc);
                for (int i = 0; i < n; i++) {
                    aWcs.add(new long[] {wc.wrId(i), wc.status(i)});
                }
                assertTrue(System.nanoTime() < deadline, "no receive completion within 10 s; requester: "
                        + aWcs.stream().map(x -> x[0] + ":" + WcStatus.name((int) x[1])).toList());
                Thread.onSpinWait();
            }
        }
    }

    private static void connect(CrossProcessTest.Local x, CrossProcessTest.Local y) {
        x.peer = y.qp.address();
        x.qp.init(Access.ALL_RDMA);
        x.qp.readyToReceive(x.efa ? null : x.peer);
        x.qp.readyToSend(7, 7);
        if (x.efa) {
            x.ah = x.pd.createAh(x.peer);
        }
    }

    /**
     * Poll a's CQ (a progress point: EFA's window releases the send) until the NIC agent of fabric
     * entry {@code slot} waits for the receive-queue lock in {@link Receives#deliver}: it took the
     * request and found its sender current.
     */
    private static void awaitAgentAtReceiveQueue(CrossProcessTest.Local a, int slot) {
        String name = "scalep-nic-" + slot;
        long deadline = System.nanoTime() + WAIT_NANOS;
        try (WorkCompletions wc = new WorkCompletions(4)) {
            while (true) {
                assertEquals(0, a.cq.poll(wc), "the send waits for the target's NIC");
                for (var e : Thread.getAllStackTraces().entrySet()) {
                    if (e.getKey().getName().equals(name) && waitsInDeliver(e.getValue())) {
                        return;
                    }
                }
                assertTrue(System.nanoTime() < deadline, "the target's NIC never took the request");
                Thread.onSpinWait();
            }
        }
    }

    private static boolean waitsInDeliver(StackTraceElement[] stack) {
        for (int i = 0; i + 1 < stack.length; i++) {
            if (stack[i].getClassName().equals(SimLock.class.getName()) && stack[i].getMethodName().equals("lock")
                    && stack[i + 1].getClassName().equals(Receives.class.getName())
                    && stack[i + 1].getMethodName().equals("deliver")) {
                return true;
            }
        }
        return false;
    }
}
