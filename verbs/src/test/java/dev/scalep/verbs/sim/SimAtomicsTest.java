package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AsyncEvent;
import dev.scalep.verbs.AtomicCap;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.CqOptions;
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
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * What the simulated NIC checks of an atomic beyond the behavioural suite: the device caps, the
 * one 8-byte local SGE (the sim is stricter than mlx5 and rxe here), inline and UD refusals at
 * post, and the responder's QP_REQ_ERR on a misaligned word.
 */
@Timeout(30)
class SimAtomicsTest {
    private final SimDevice dev = SimDevice.newMlx5();

    @Test
    void devicesReportTheirAtomicCapAndDepths() {
        assertEquals(AtomicCap.HCA, SimDevice.newMlx5().capabilities().atomicCap());
        assertEquals(AtomicCap.NONE, SimDevice.efa(1, 1).capabilities().atomicCap());
        assertEquals(16, SimDevice.newMlx5().capabilities().maxQpRdAtom());
        assertEquals(16, SimDevice.newMlx5().capabilities().maxQpInitRdAtom());
        assertEquals("hca", SimDevice.newMlx5().capabilities().toMap().get("atomicCap"));
    }

    /** One completion of {@code cq} (spins a bounded number of polls). */
    private static int status(CompletionQueue cq) {
        try (WorkCompletions wc = new WorkCompletions(1)) {
            for (int spins = 0; spins < 1_000_000; spins++) {
                if (cq.poll(wc) == 1) {
                    return wc.status(0);
                }
            }
        }
        throw new AssertionError("no completion");
    }

    @Test
    void anAtomicNeedsOneEightByteLocalSgeAndIsNeverInline() {
        try (SimPair p = SimPair.rc(dev, ContextOptions.DEFAULTS, 8); SendWorkRequests w = new SendWorkRequests(1, 2)) {
            int i = w.add(1, Opcode.ATOMIC_FETCH_AND_ADD, SendFlags.SIGNALED | SendFlags.INLINE);
            w.sge(i, p.mrA, 0, 8).atomic(i, p.mrB.address(), p.mrB.rkey(), 1, 0);
            assertEquals(Errno.EINVAL, p.a.postSend(w), "an atomic is not inline");
            w.clear();
            i = w.add(2, Opcode.ATOMIC_FETCH_AND_ADD, SendFlags.SIGNALED);
            w.sge(i, p.mrA, 0, 16).atomic(i, p.mrB.address(), p.mrB.rkey(), 1, 0);
            assertEquals(0, p.a.postSend(w));
            assertEquals(WcStatus.LOC_LEN_ERR, status(p.cqA));
            assertEquals(0L, p.memB.get(JAVA_LONG, 0), "nothing executed remotely");
        }
    }

    @Test
    void aMisalignedAtomicMovesTheResponderToErrWithQpReqErr() {
        try (Arena arena = Arena.ofShared(); Context ca = dev.open(); Context cb = dev.open()) {
            ProtectionDomain pa = ca.allocPd();
            ProtectionDomain pb = cb.allocPd();
            CompletionQueue qa = ca.createCq(CqOptions.of(16));
            CompletionQueue qb = cb.createCq(CqOptions.of(16));
            MemorySegment ma = arena.allocate(4096, 64);
            MemorySegment mb = arena.allocate(4096, 64);
            MemoryRegion ra = pa.register(ma, Access.ALL_RDMA);
            MemoryRegion rb = pb.register(mb, Access.ALL_RDMA | Access.REMOTE_ATOMIC);
            QueuePair a = pa.createQp(QpInitAttr.of(QpType.RC, qa, 4));
            QueuePair b = pb.createQp(QpInitAttr.of(QpType.RC, qb, 4));
            a.connect(b.address(), Access.ALL_RDMA, 7);
            b.connect(a.address(), Access.ALL_RDMA | Access.REMOTE_ATOMIC, 7);
            try (SendWorkRequests w = new SendWorkRequests(1, 1)) {
                int i = w.add(1, Opcode.ATOMIC_CMP_AND_SWP, SendFlags.SIGNALED);
                w.sge(i, ra, 0, 8).atomic(i, rb.address() + 12, rb.rkey(), 0, 1);
                assertEquals(0, a.postSend(w));
            }
            assertEquals(WcStatus.REM_INV_REQ_ERR, status(qa));
            AsyncEvent e = cb.pollAsyncEvent(5_000_000_000L);
            assertNotNull(e, "the responder's context reports the invalid request");
            assertEquals(AsyncEvent.QP_REQ_ERR, e.type());
            assertEquals(b.qpNum(), e.qpNum());
            assertEquals(QpState.ERR, b.state());
            assertEquals(0L, mb.get(JAVA_LONG, 8), "unchanged");
            assertEquals(0L, mb.get(JAVA_LONG, 16), "unchanged");
        }
    }

    @Test
    void aUdQpTakesNoAtomic() {
        try (Context c = dev.open(); Arena arena = Arena.ofShared()) {
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(CqOptions.of(8));
            MemoryRegion mr = pd.register(arena.allocate(64, 8), Access.ALL_RDMA);
            QueuePair ud = pd.createQp(QpInitAttr.of(QpType.UD, cq, 4));
            ud.init(Access.LOCAL_WRITE);
            ud.readyToReceive(null);
            ud.readyToSend(7, 7);
            try (SendWorkRequests w = new SendWorkRequests(1, 1)) {
                int i = w.add(1, Opcode.ATOMIC_FETCH_AND_ADD, SendFlags.SIGNALED);
                w.sge(i, mr, 0, 8).atomic(i, mr.address(), mr.rkey(), 1, 0);
                assertEquals(Errno.EINVAL, ud.postSend(w));
                assertEquals(0, w.badIndex());
            }
        }
    }
}
