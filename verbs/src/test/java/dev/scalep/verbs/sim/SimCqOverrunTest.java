package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AsyncEvent;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** CQ overcommit is refused; forced, the CQ overruns and its QPs go fatal. */
@Timeout(30)
class SimCqOverrunTest {
    @Test
    void overcommitRefusedThenForcedOverrun() {
        SimDevice dev = SimDevice.newMlx5();
        try (Context c = dev.open(); Arena arena = Arena.ofShared();
             SendWorkRequests w = new SendWorkRequests(8, 1); WorkCompletions wc = new WorkCompletions(8)) {
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(3);
            assertEquals(3, cq.depth());
            VerbsException e = assertThrows(VerbsException.class, () -> pd.createQp(QpInitAttr.of(QpType.RC, cq, 8)));
            assertTrue(e.getMessage().contains("CQ depth 3"), e.getMessage());
            QueuePair q;
            System.setProperty("scalep.sim.allowCqOvercommit", "true");
            try {
                q = pd.createQp(QpInitAttr.of(QpType.RC, cq, 8));
            } finally {
                System.clearProperty("scalep.sim.allowCqOvercommit");
            }
            q.connect(q.address(), Access.ALL_RDMA, 7); // loopback
            MemoryRegion mr = pd.register(arena.allocate(4096, 64), Access.ALL_RDMA);
            for (int k = 0; k < 8; k++) {
                int i = w.add(k, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
                w.sge(i, mr, 0, 8).rdma(i, mr.address() + 64, mr.rkey());
            }
            assertEquals(0, q.postSend(w));
            assertTrue(cq.isOverrun());
            assertEquals(-Errno.EIO, cq.poll(wc));
            assertEquals(QpState.ERR, q.state());
            assertEquals(3, cq.cqesWritten());
            AsyncEvent cqErr = c.pollAsyncEvent(0);
            assertEquals(AsyncEvent.CQ_ERR, cqErr.type());
            assertSame(cq, cqErr.cq());
            AsyncEvent fatal = c.pollAsyncEvent(0);
            assertEquals(AsyncEvent.QP_FATAL, fatal.type(), fatal.toString());
            assertSame(q, fatal.qp());
            assertEquals(q.qpNum(), fatal.qpNum());
            assertNull(c.pollAsyncEvent(0), "one event each, no repeats");
            w.clear();
            w.sge(w.add(9, Opcode.RDMA_WRITE, SendFlags.SIGNALED), mr, 0, 8);
            assertEquals(Errno.EINVAL, q.postSend(w));
            assertFalse(c.isClosed());
        }
    }

    @Test
    void eventQueueIsBoundedAndCloseWakesWaiters() throws Exception {
        SimDevice dev = SimDevice.newMlx5();
        SimContext c = (SimContext) dev.open();
        CompletionQueue cq = c.createCq(4);
        for (int i = 0; i < SimContext.ASYNC_QUEUE + 10; i++) {
            c.raise(AsyncEvent.ofCq(AsyncEvent.CQ_ERR, cq));
        }
        assertEquals(10, c.asyncEventsLost());
        for (int i = 0; i < SimContext.ASYNC_QUEUE; i++) {
            assertSame(cq, c.pollAsyncEvent(0).cq());
        }
        assertNull(c.pollAsyncEvent(0));
        Thread closer = new Thread(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            c.close();
        });
        closer.start();
        assertThrows(dev.scalep.verbs.ClosedException.class, () -> c.pollAsyncEvent(10_000_000_000L));
        closer.join();
    }
}
