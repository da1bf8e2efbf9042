package dev.scalep.verbs.ibv;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.ClosedException;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceKind;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.SharedReceiveQueue;
import dev.scalep.verbs.TdSharing;
import dev.scalep.verbs.UnsupportedFeatureException;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Real verbs on SoftRoCE: two rxe devices (rxe0 over veth0, rxe1 over veth1) inside the VM that
 * {@code verbs/src/test/rxe/run} boots. Skipped where no rxe devices exist (the build host).
 */
@Timeout(120)
class RxeVerbsTest {
    static final long POLL_TIMEOUT_NS = 30_000_000_000L;
    static Device dev0, dev1;
    static Context c0, c1;
    static Arena arena;

    @BeforeAll
    static void open() {
        List<Device> devices = new IbvProvider().devices();
        dev0 = devices.stream().filter(d -> d.name().equals("rxe0")).findFirst().orElse(null);
        dev1 = devices.stream().filter(d -> d.name().equals("rxe1")).findFirst().orElse(null);
        assumeTrue(dev0 != null && dev1 != null, "rxe0/rxe1 not present: " + new IbvProvider().unavailableReason());
        c0 = dev0.open();
        c1 = dev1.open();
        arena = Arena.ofShared();
    }

    @AfterAll
    static void close() {
        if (c0 != null) {
            c0.close();
            c1.close();
            arena.close();
        }
    }

    /** One side of a connection: PD, CQ, QP and a registered 4 KiB buffer. */
    record Side(ProtectionDomain pd, CompletionQueue cq, QueuePair qp, MemoryRegion mr, MemorySegment buf) {
        void close() {
            qp.close();
            mr.close();
            cq.close();
            pd.close();
        }
    }

    static Side side(Context c, QpType type, CqOptions cqo, int inline) {
        ProtectionDomain pd = c.allocPd();
        CompletionQueue cq = c.createCq(cqo);
        QueuePair qp = pd.createQp(QpInitAttr.of(type, cq, 32).withSges(2, 2).withInline(inline));
        MemorySegment buf = arena.allocate(4096, 4096);
        MemoryRegion mr = pd.register(buf, Access.ALL_RDMA);
        return new Side(pd, cq, qp, mr, buf);
    }

    static Side[] rcPair(CqOptions cqo, int rnrRetry) {
        Side a = side(c0, QpType.RC, cqo, 64);
        Side b = side(c1, QpType.RC, cqo, 64);
        a.qp.init(Access.ALL_RDMA);
        b.qp.init(Access.ALL_RDMA);
        a.qp.readyToReceive(b.qp.address());
        b.qp.readyToReceive(a.qp.address());
        a.qp.readyToSend(7, rnrRetry);
        b.qp.readyToSend(7, rnrRetry);
        return new Side[]{a, b};
    }

    /** Poll until {@code n} completions arrived (batches of up to 16); returns them in {@code out}. */
    static int pollN(CompletionQueue cq, WorkCompletions out, int n) {
        int got = 0;
        long deadline = System.nanoTime() + POLL_TIMEOUT_NS;
        try (WorkCompletions batch = new WorkCompletions(16)) {
            while (got < n) {
                int r = cq.poll(batch, Math.min(16, n - got));
                assertTrue(r >= 0, "poll failed: " + r);
                for (int i = 0; i < r; i++) {
                    out.put(got + i, batch.wrId(i), batch.status(i), batch.opcode(i), batch.byteLen(i), batch.imm(i),
                            batch.hasImm(i), batch.qpNum(i), batch.srcQp(i));
                }
                got += r;
                if (r == 0) {
                    assertTrue(System.nanoTime() < deadline, "only " + got + " of " + n + " completions arrived");
                    Thread.onSpinWait();
                }
            }
        }
        return got;
    }

    static void fill(MemorySegment s, int off, int len, byte v) {
        s.asSlice(off, len).fill(v);
    }

    @Test
    void devicesAreQueriedRxe() {
        for (Device d : List.of(dev0, dev1)) {
            assertEquals(DeviceKind.RXE, d.kind());
            assertTrue(d.capabilities().qpTypes().containsAll(Set.of(QpType.RC, QpType.UD)));
            assertTrue(d.capabilities().maxQp() > 0 && d.capabilities().maxQpWr() > 0);
            assertTrue(d.capabilities().maxInline() > 0, "inline probed: " + d.capabilities().maxInline());
            assertFalse(d.capabilities().threadDomains(), "rxe has no thread domains");
            assertTrue(d.capabilities().maxSrq() > 0);
        }
        assertEquals(1, c0.resources().contexts());
        assertTrue(c0.uarDescription().startsWith("rxe"));
    }

    @Test
    void rcWriteWriteImmReadSendRecvWithPostlistUnsignaledAndInline() {
        Side[] p = rcPair(CqOptions.of(64), 7);
        Side a = p[0], b = p[1];
        try (SendWorkRequests s = new SendWorkRequests(8, 2); RecvWorkRequests r = new RecvWorkRequests(8, 1);
             WorkCompletions wc = new WorkCompletions(16)) {
            // RDMA write 128 bytes a[0..128) -> b[1024..]
            fill(a.buf, 0, 128, (byte) 0x5a);
            s.add(1, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
            s.sge(0, a.mr, 0, 128).rdma(0, b.mr.address() + 1024, b.mr.rkey());
            assertEquals(0, a.qp.postSend(s));
            assertEquals(1, pollN(a.cq, wc, 1));
            assertEquals(WcStatus.SUCCESS, wc.status(0), WcStatus.name(wc.status(0)));
            assertEquals(WcOpcode.RDMA_WRITE, wc.opcode(0));
            assertEquals(1L, wc.wrId(0));
            for (int i = 0; i < 128; i++) {
                assertEquals((byte) 0x5a, b.buf.get(JAVA_BYTE, 1024 + i));
            }
            // write-with-imm consumes a receive on b
            r.clear();
            r.add(100);
            r.sge(0, b.mr, 2048, 64);
            assertEquals(0, b.qp.postRecv(r));
            s.clear();
            s.add(2, Opcode.RDMA_WRITE_WITH_IMM, SendFlags.SIGNALED);
            s.sge(0, a.mr, 0, 16).rdma(0, b.mr.address() + 1536, b.mr.rkey()).imm(0, 0xC0FFEE);
            assertEquals(0, a.qp.postSend(s));
            pollN(a.cq, wc, 1);
            assertEquals(WcStatus.SUCCESS, wc.status(0));
            pollN(b.cq, wc, 1);
            assertEquals(WcStatus.SUCCESS, wc.status(0));
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, wc.opcode(0));
            assertTrue(wc.hasImm(0));
            assertEquals(0xC0FFEE, wc.imm(0));
            assertEquals(100L, wc.wrId(0));
            // RDMA read b[3000..3064) -> a[512..]
            fill(b.buf, 3000, 64, (byte) 0x33);
            s.clear();
            s.add(3, Opcode.RDMA_READ, SendFlags.SIGNALED);
            s.sge(0, a.mr, 512, 64).rdma(0, b.mr.address() + 3000, b.mr.rkey());
            assertEquals(0, a.qp.postSend(s));
            pollN(a.cq, wc, 1);
            assertEquals(WcStatus.SUCCESS, wc.status(0));
            assertEquals(WcOpcode.RDMA_READ, wc.opcode(0));
            assertEquals((byte) 0x33, a.buf.get(JAVA_BYTE, 512 + 63));
            // postlist of 4 sends, 3 unsignaled + inline, the last signaled: one completion on a, four on b
            r.clear();
            for (int i = 0; i < 4; i++) {
                r.add(200 + i);
                r.sge(i, b.mr, i * 64L, 64);
            }
            assertEquals(0, b.qp.postRecv(r));
            s.clear();
            for (int i = 0; i < 4; i++) {
                a.buf.set(JAVA_LONG, 256 + i * 8L, 1000L + i);
                s.add(10 + i, Opcode.SEND, i == 3 ? SendFlags.SIGNALED : SendFlags.INLINE);
                s.sge(i, a.mr, 256 + i * 8L, 8);
            }
            long dbBefore = a.qp.counters().doorbells();
            assertEquals(0, a.qp.postSend(s));
            assertEquals(dbBefore + 1, a.qp.counters().doorbells(), "one post call for the chain");
            assertEquals(3, a.qp.counters().inlineWqes());
            pollN(a.cq, wc, 1);
            assertEquals(13L, wc.wrId(0), "only the signaled WR completes");
            assertEquals(0, a.qp.outstandingSends());
            assertEquals(4, pollN(b.cq, wc, 4));
            for (int i = 0; i < 4; i++) {
                assertEquals(WcStatus.SUCCESS, wc.status(i));
                assertEquals(WcOpcode.RECV, wc.opcode(i));
                assertEquals(200L + i, wc.wrId(i));
                assertEquals(8, wc.byteLen(i));
                assertEquals(1000L + i, b.buf.get(JAVA_LONG, i * 64L));
            }
            assertEquals(0, a.cq.poll(wc), "no completions for unsignaled WRs");
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void extendedCqAndSrq() {
        CqOptions ex = CqOptions.of(32).withExtended(true);
        Side a = side(c0, QpType.RC, ex, 0);
        ProtectionDomain pd = c1.allocPd();
        CompletionQueue cq = c1.createCq(ex);
        SharedReceiveQueue srq = pd.createSrq(16, 1);
        QueuePair qb = pd.createQp(QpInitAttr.of(QpType.RC, cq, 16).withSrq(srq));
        MemorySegment buf = arena.allocate(4096, 4096);
        MemoryRegion mr = pd.register(buf, Access.LOCAL_WRITE);
        try (SendWorkRequests s = new SendWorkRequests(4, 1); RecvWorkRequests r = new RecvWorkRequests(4, 1);
             WorkCompletions wc = new WorkCompletions(8)) {
            a.qp.init(Access.ALL_RDMA);
            qb.init(Access.ALL_RDMA);
            a.qp.readyToReceive(qb.address());
            qb.readyToReceive(a.qp.address());
            a.qp.readyToSend(7, 7);
            qb.readyToSend(7, 7);
            for (int i = 0; i < 3; i++) {
                r.add(300 + i);
                r.sge(i, mr, i * 128L, 128);
            }
            assertEquals(0, srq.postRecv(r));
            assertEquals(3, srq.posted());
            assertThrows(IllegalStateException.class, () -> qb.postRecv(r));
            for (int i = 0; i < 2; i++) {
                s.add(20 + i, Opcode.SEND_WITH_IMM, SendFlags.SIGNALED);
                s.sge(i, a.mr, 0, 32).imm(i, 7 + i);
            }
            assertEquals(0, a.qp.postSend(s));
            assertEquals(2, pollN(a.cq, wc, 2));
            assertEquals(2, pollN(cq, wc, 2));
            Set<Long> ids = new HashSet<>();
            for (int i = 0; i < 2; i++) {
                assertEquals(WcStatus.SUCCESS, wc.status(i));
                assertEquals(WcOpcode.RECV, wc.opcode(i));
                assertEquals(qb.qpNum(), wc.qpNum(i));
                assertEquals(32, wc.byteLen(i));
                assertTrue(wc.hasImm(i));
                ids.add(wc.wrId(i));
            }
            assertEquals(Set.of(300L, 301L), ids);
            assertEquals(1, srq.posted());
            VerbsException busy = assertThrows(VerbsException.class, srq::close);
            assertEquals(Errno.EBUSY, busy.errno());
        } finally {
            qb.close();
            srq.close();
            mr.close();
            cq.close();
            pd.close();
            a.close();
        }
    }

    @Test
    void udSendThroughAnAddressHandle() {
        Side a = side(c0, QpType.UD, CqOptions.of(16), 0);
        Side b = side(c1, QpType.UD, CqOptions.of(16), 0);
        try (SendWorkRequests s = new SendWorkRequests(1, 1); RecvWorkRequests r = new RecvWorkRequests(1, 1);
             WorkCompletions wc = new WorkCompletions(4);
             var ah = a.pd.createAh(b.qp.address())) {
            for (Side x : new Side[]{a, b}) {
                x.qp.init(0);
                x.qp.readyToReceive(null);
                x.qp.readyToSend(0, 0);
            }
            r.add(400);
            r.sge(0, b.mr, 0, 40 + 64); // 40 bytes of GRH first
            assertEquals(0, b.qp.postRecv(r));
            a.buf.set(JAVA_LONG, 0, 0x1122334455667788L);
            s.add(30, Opcode.SEND, SendFlags.SIGNALED);
            s.sge(0, a.mr, 0, 8).ud(0, ah, b.qp.qpNum(), QueuePair.QKEY);
            assertEquals(0, a.qp.postSend(s));
            pollN(a.cq, wc, 1);
            assertEquals(WcStatus.SUCCESS, wc.status(0));
            pollN(b.cq, wc, 1);
            assertEquals(WcStatus.SUCCESS, wc.status(0));
            assertEquals(40 + 8, wc.byteLen(0));
            assertEquals(a.qp.qpNum(), wc.srcQp(0));
            assertEquals(0x1122334455667788L, b.buf.get(JAVA_LONG, 40));
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void wrongRkeyGivesRemoteAccessErrorAndLeavesTargetUnchangedThenFlushes() {
        Side[] p = rcPair(CqOptions.of(32), 7);
        Side a = p[0], b = p[1];
        try (SendWorkRequests s = new SendWorkRequests(4, 1); WorkCompletions wc = new WorkCompletions(8)) {
            fill(b.buf, 0, 64, (byte) 0x11);
            fill(a.buf, 0, 64, (byte) 0x77);
            s.add(40, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
            s.sge(0, a.mr, 0, 64).rdma(0, b.mr.address(), b.mr.rkey() ^ 0x5500);
            s.add(41, Opcode.RDMA_WRITE, 0);
            s.sge(1, a.mr, 0, 8).rdma(1, b.mr.address(), b.mr.rkey());
            s.add(42, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
            s.sge(2, a.mr, 0, 8).rdma(2, b.mr.address(), b.mr.rkey());
            assertEquals(0, a.qp.postSend(s));
            int n = pollN(a.cq, wc, 3);
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status(0), WcStatus.name(wc.status(0)));
            assertEquals(40L, wc.wrId(0));
            Set<Long> flushed = new HashSet<>();
            for (int i = 1; i < n; i++) {
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status(i));
                assertTrue(flushed.add(wc.wrId(i)), "each WR flushed once");
            }
            assertEquals(Set.of(41L, 42L), flushed);
            for (int i = 0; i < 64; i++) {
                assertEquals((byte) 0x11, b.buf.get(JAVA_BYTE, i), "target unchanged");
            }
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void errFlushesEveryPostedReceiveExactlyOnce() {
        Side[] p = rcPair(CqOptions.of(32), 7);
        Side a = p[0], b = p[1];
        try (RecvWorkRequests r = new RecvWorkRequests(5, 1); WorkCompletions wc = new WorkCompletions(8)) {
            for (int i = 0; i < 5; i++) {
                r.add(500 + i);
                r.sge(i, b.mr, 0, 64);
            }
            assertEquals(0, b.qp.postRecv(r));
            b.qp.toError();
            assertEquals(QpState.ERR, b.qp.state());
            assertEquals(5, pollN(b.cq, wc, 5));
            for (int i = 0; i < 5; i++) {
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status(i));
                assertEquals(500L + i, wc.wrId(i));
            }
            assertEquals(0, b.cq.poll(wc));
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void sendWithoutReceiveAndNoRnrRetryFails() {
        Side[] p = rcPair(CqOptions.of(16), 0);
        Side a = p[0], b = p[1];
        try (SendWorkRequests s = new SendWorkRequests(1, 1); WorkCompletions wc = new WorkCompletions(4)) {
            s.add(60, Opcode.SEND, SendFlags.SIGNALED);
            s.sge(0, a.mr, 0, 8);
            assertEquals(0, a.qp.postSend(s));
            pollN(a.cq, wc, 1);
            assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wc.status(0), WcStatus.name(wc.status(0)));
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void wrongStateDestroyOrderUseAfterCloseAndTds() {
        Context c = dev0.open();
        ProtectionDomain pd = c.allocPd();
        CompletionQueue cq = c.createCq(4);
        QueuePair qp = pd.createQp(QpInitAttr.of(QpType.RC, cq, 4));
        MemoryRegion mr = pd.register(arena.allocate(4096, 4096), Access.LOCAL_WRITE);
        assertEquals(1, c.resources().qps());
        assertEquals(1, c.resources().mrs());
        VerbsException e = assertThrows(VerbsException.class, () -> qp.readyToSend(7, 7));
        assertEquals(Errno.EINVAL, e.errno());
        qp.init(Access.LOCAL_WRITE);
        try (SendWorkRequests s = new SendWorkRequests(1, 1)) {
            s.add(1, Opcode.SEND, SendFlags.SIGNALED);
            s.sge(0, mr, 0, 8);
            int rc = qp.postSend(s);
            try (WorkCompletions wc = new WorkCompletions(2)) {
                assertTrue(rc != 0 || (cq.poll(wc) >= 0 && qp.state() == QpState.INIT),
                        "a send on an INIT QP is refused");
            }
            if (rc != 0) {
                assertEquals(0, s.badIndex());
            }
        }
        VerbsException busyPd = assertThrows(VerbsException.class, pd::close);
        assertEquals(Errno.EBUSY, busyPd.errno());
        assertTrue(busyPd.getMessage().contains("MR") && busyPd.getMessage().contains("QP"), busyPd.getMessage());
        VerbsException busyCq = assertThrows(VerbsException.class, cq::close);
        assertEquals(Errno.EBUSY, busyCq.errno());
        UnsupportedFeatureException td = assertThrows(UnsupportedFeatureException.class,
                () -> c.allocTd(TdSharing.DEFAULT));
        assertEquals("rxe0", td.device());
        assertTrue(td.getMessage().contains("thread domains"), td.getMessage());
        c.close();
        assertTrue(c.isClosed());
        assertEquals(0, dev0.resources().minus(c0.resources()).qps());
        assertThrows(ClosedException.class, c::allocPd);
        assertThrows(ClosedException.class, () -> pd.register(arena.allocate(64), 0));
        assertThrows(ClosedException.class, () -> qp.postSend(new SendWorkRequests(1, 1)));
        assertThrows(ClosedException.class, () -> cq.poll(new WorkCompletions(1)));
        assertThrows(ClosedException.class, mr::deregister);
        c.close(); // idempotent
    }

    @Test
    void completionChannelDeliversAnEvent() {
        Side[] p = rcPair(CqOptions.of(16).withCompletionChannel(true), 7);
        Side a = p[0], b = p[1];
        try (SendWorkRequests s = new SendWorkRequests(1, 1); WorkCompletions wc = new WorkCompletions(4)) {
            assertFalse(a.cq.awaitEvent(1_000_000L), "no event before anything completes");
            a.cq.requestNotify();
            s.add(70, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
            s.sge(0, a.mr, 0, 8).rdma(0, b.mr.address(), b.mr.rkey());
            assertEquals(0, a.qp.postSend(s));
            assertTrue(a.cq.awaitEvent(POLL_TIMEOUT_NS));
            assertEquals(1, a.cq.unackedEvents());
            pollN(a.cq, wc, 1);
            assertEquals(70L, wc.wrId(0));
            a.cq.ackEvents(1);
            assertEquals(0, a.cq.unackedEvents());
        } finally {
            a.close();
            b.close();
        }
    }
}
