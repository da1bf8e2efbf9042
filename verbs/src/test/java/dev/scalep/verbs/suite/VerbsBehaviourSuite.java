package dev.scalep.verbs.suite;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.AsyncEvent;
import dev.scalep.verbs.ClosedException;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.TdSharing;
import dev.scalep.verbs.ThreadDomain;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The provider-neutral behavioural suite: every WR type, UD/SRD, postlist, unsignaled, inline, SRQ,
 * batched polling, and the failures a device can produce (wrong state, full queues, limits, bad keys,
 * RNR, dead peers, flushes, close and reuse), each test named after the behaviour it proves.
 * Subclasses supply a {@link VerbsFixture}; tests pick QP types from the capabilities (RC where it
 * exists, else SRD) and skip what a device lacks. Only the public API is used.
 */
@Timeout(60)
public abstract class VerbsBehaviourSuite {
    protected static final long TIMEOUT_NANOS = 10_000_000_000L;
    private static final int MEM = 64 * 1024;

    protected abstract VerbsFixture fixture();

    /** A completion copied out of a {@link WorkCompletions} batch. */
    public record Wc(long wrId, int status, int opcode, int byteLen, int imm, boolean hasImm, int qpNum, int srcQp) {
        @Override
        public String toString() {
            return "wc(" + wrId + ", " + WcStatus.name(status) + ", op=" + opcode + ", len=" + byteLen + ")";
        }
    }

    /** One side of a connection: its context, PD, CQ, QP, registered memory and an AH to the peer. */
    public static final class End implements AutoCloseable {
        public final Context ctx;
        public final ProtectionDomain pd;
        public final CompletionQueue cq;
        public final QueuePair qp;
        public final Arena arena = Arena.ofShared();
        public final MemorySegment mem;
        public final MemoryRegion mr;
        public AddressHandle ah;

        End(Device d, VerbsFixture f, QpType type, int depth, int inline, int access, int mrAccess) {
            this(d, f, type, depth, inline, access, mrAccess, 4 * depth);
        }

        End(Device d, VerbsFixture f, QpType type, int depth, int inline, int access, int mrAccess, int cqDepth) {
            ctx = d.open(f.options());
            pd = ctx.allocPd();
            cq = ctx.createCq(cqOptions(ctx, cqDepth));
            QpInitAttr a = QpInitAttr.of(type, cq, depth).withSges(Math.min(2, ctx.capabilities().maxSge()), 1)
                    .withInline(inline);
            qp = pd.createQp(a);
            mem = pd.allocate(MEM, 64);
            mr = pd.register(mem, mrAccess);
            qp.init(access);
        }

        @Override
        public void close() {
            ctx.close();
            arena.close();
        }
    }

    /** A connected requester (a, in this JVM) and responder (b, wherever {@link #responder} puts it). */
    public final class Pair implements AutoCloseable {
        public final End a;
        public final Responder b;
        public final QpType type;

        Pair(QpType type, int depth, int inline, int rnrRetry, int mrAccessB) {
            this(type, depth, inline, rnrRetry, mrAccessB, 7);
        }

        Pair(QpType type, int depth, int inline, int rnrRetry, int mrAccessB, int retryCount) {
            this(type, depth, inline, rnrRetry, mrAccessB, retryCount, 4 * depth);
        }

        Pair(QpType type, int depth, int inline, int rnrRetry, int mrAccessB, int retryCount, int cqDepthA) {
            this.type = type;
            VerbsFixture f = fixture();
            a = new End(f.requester(), f, type, depth, inline, Access.ALL_RDMA, Access.ALL_RDMA, cqDepthA);
            Responder r = null;
            try {
                r = responder(Responder.Spec.of(type, depth, inline, mrAccessB));
                if (type == QpType.RC) {
                    a.qp.readyToReceive(r.address());
                } else {
                    a.qp.readyToReceive(null);
                    a.ah = a.pd.createAh(r.address());
                }
                r.connect(0, a.qp.address(), retryCount, rnrRetry);
                a.qp.readyToSend(retryCount, rnrRetry);
            } catch (RuntimeException | Error e) {
                a.close();
                if (r != null) {
                    r.close();
                }
                throw e;
            }
            b = r;
        }

        /** Add a WR from a to b: local range of a's MR, remote offset in b's MR for RDMA opcodes. */
        public int add(SendWorkRequests w, long id, Opcode op, int flags, long localOff, int len, long remoteOff) {
            int i = w.add(id, op, flags);
            if (len > 0) {
                w.sge(i, a.mr, localOff, len);
            }
            long raddr = b.mrAddress() + remoteOff;
            if (type == QpType.RC) {
                if (op.isRdma()) {
                    w.rdma(i, raddr, b.rkey());
                }
            } else if (type == QpType.SRD && op.isRdma()) {
                w.srdRdma(i, a.ah, b.qpNum(), QueuePair.QKEY, raddr, b.rkey());
            } else {
                w.ud(i, a.ah, b.qpNum(), QueuePair.QKEY);
            }
            return i;
        }

        @Override
        public void close() {
            a.close();
            b.close();
        }
    }

    /**
     * The responder of a pair: in this JVM on the fixture's responder device unless a subclass puts
     * it elsewhere (another process). Every test's responder-side step goes through it.
     */
    protected Responder responder(Responder.Spec spec) {
        return new LocalResponder(fixture().responder(), fixture().options(), spec);
    }

    protected static CqOptions cqOptions(Context ctx, int depth) {
        return CqOptions.of(depth).withExtended(ctx.capabilities().extendedCqOnly());
    }

    protected DeviceCapabilities caps() {
        return fixture().requester().capabilities();
    }

    /** RC where the device has it, else SRD (both reliable). */
    protected QpType reliable() {
        return caps().qpTypes().contains(QpType.RC) ? QpType.RC : QpType.SRD;
    }

    protected Pair pair() {
        return new Pair(reliable(), 64, 0, 7, Access.ALL_RDMA);
    }

    protected static void fill(MemorySegment m, long off, int len, int seed) {
        for (int i = 0; i < len; i++) {
            m.set(JAVA_BYTE, off + i, (byte) (seed + i * 7));
        }
    }

    protected static byte[] bytes(MemorySegment m, long off, int len) {
        return m.asSlice(off, len).toArray(JAVA_BYTE);
    }

    protected static void postRecv(Responder b, long id, long off, int len) {
        assertEquals(0, b.postRecv(id, off, len));
    }

    /** Poll the responder until {@code n} completions arrived (fails after 10 s). */
    protected static List<Wc> poll(Responder b, int n) {
        List<Wc> out = b.poll(n, TIMEOUT_NANOS);
        assertEquals(n, out.size(), "timed out with " + out.size() + "/" + n + ": " + out);
        return out;
    }

    protected static void post(QueuePair qp, SendWorkRequests w) {
        int rc = qp.postSend(w);
        assertEquals(0, rc, "post failed: " + Errno.name(rc) + " at " + w.badIndex());
    }

    /** Poll until {@code n} completions arrived (fails after 10 s). */
    protected static List<Wc> poll(CompletionQueue cq, int n) {
        return poll(cq, n, TIMEOUT_NANOS);
    }

    /** Poll until {@code n} completions arrived (fails after {@code timeoutNanos}). */
    protected static List<Wc> poll(CompletionQueue cq, int n, long timeoutNanos) {
        List<Wc> out = new ArrayList<>();
        try (WorkCompletions wc = new WorkCompletions(16)) {
            long deadline = System.nanoTime() + timeoutNanos;
            while (out.size() < n) {
                int k = cq.poll(wc, Math.min(16, n - out.size()));
                assertTrue(k >= 0, "poll returned " + k);
                LocalResponder.collect(wc, k, out);
                if (k == 0) {
                    assertTrue(System.nanoTime() < deadline, "timed out with " + out.size() + "/" + n + ": " + out);
                    Thread.onSpinWait();
                }
            }
        }
        return out;
    }

    /**
     * A send posted to a QP in ERR must fail and lose nothing: either the post is refused with EINVAL
     * (the simulator, which knows the state) or the device accepts it and completes it with
     * WR_FLUSH_ERR exactly once (real verbs: mlx5 and rxe flush WRs posted in ERR).
     */
    protected static void assertPostInErrorFails(End e, SendWorkRequests w, long wrId) {
        int rc = e.qp.postSend(w);
        if (rc == 0) {
            List<Wc> c = poll(e.cq, 1);
            assertEquals(wrId, c.get(0).wrId());
            assertEquals(WcStatus.WR_FLUSH_ERR, c.get(0).status(), "a send posted in ERR is flushed");
            assertTrue(drain(e.cq).isEmpty(), "flushed exactly once");
        } else {
            assertEquals(Errno.EINVAL, rc, "a QP in ERR takes no new sends");
            assertEquals(0, w.badIndex());
        }
    }

    /** Poll a while and return what arrived (expected: nothing). */
    protected static List<Wc> drain(CompletionQueue cq) {
        List<Wc> out = new ArrayList<>();
        try (WorkCompletions wc = new WorkCompletions(16)) {
            for (int round = 0; round < 50; round++) {
                LocalResponder.collect(wc, cq.poll(wc), out);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ every WR type

    @Test
    void rdmaWriteMovesBytes() {
        assumeTrue(caps().rdmaWrite());
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 2)) {
            fill(p.a.mem, 0, 256, 3);
            p.add(w, 7, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 256, 1024);
            post(p.a.qp, w);
            Wc c = poll(p.a.cq, 1).get(0);
            assertEquals(WcStatus.SUCCESS, c.status());
            assertEquals(7, c.wrId());
            assertEquals(WcOpcode.RDMA_WRITE, c.opcode());
            assertEquals(p.a.qp.qpNum(), c.qpNum());
            assertArrayEquals(bytes(p.a.mem, 0, 256), p.b.bytes(1024, 256));
            assertEquals(0, p.b.bytes(1024 + 256, 1)[0], "nothing written past the range");
            assertTrue(p.b.drain().isEmpty(), "an RDMA write consumes no receive");
        }
    }

    @Test
    void rdmaWriteGathersSges() {
        assumeTrue(caps().rdmaWrite() && caps().maxSge() >= 2);
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 2)) {
            fill(p.a.mem, 0, 100, 1);
            fill(p.a.mem, 4000, 50, 9);
            int i = p.add(w, 1, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 100, 512);
            w.sge(i, p.a.mr, 4000, 50);
            post(p.a.qp, w);
            assertEquals(WcStatus.SUCCESS, poll(p.a.cq, 1).get(0).status());
            assertArrayEquals(bytes(p.a.mem, 0, 100), p.b.bytes(512, 100));
            assertArrayEquals(bytes(p.a.mem, 4000, 50), p.b.bytes(612, 50));
        }
    }

    @Test
    void writeWithImmConsumesReceive() {
        assumeTrue(caps().writeWithImm());
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 2)) {
            postRecv(p.b, 99, 0, 0 + 16);
            fill(p.a.mem, 0, 64, 5);
            int i = p.add(w, 8, Opcode.RDMA_WRITE_WITH_IMM, SendFlags.SIGNALED, 0, 64, 2048);
            w.imm(i, 0xCAFE);
            post(p.a.qp, w);
            assertEquals(WcStatus.SUCCESS, poll(p.a.cq, 1).get(0).status());
            Wc r = poll(p.b, 1).get(0);
            assertEquals(WcStatus.SUCCESS, r.status());
            assertEquals(99, r.wrId());
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, r.opcode());
            assertTrue(r.hasImm());
            assertEquals(0xCAFE, r.imm());
            assertEquals(64, r.byteLen());
            assertEquals(p.b.qpNum(), r.qpNum());
            assertArrayEquals(bytes(p.a.mem, 0, 64), p.b.bytes(2048, 64));
        }
    }

    @Test
    void rdmaReadFetchesRemoteBytes() {
        assumeTrue(caps().rdmaRead());
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 2)) {
            p.b.fill(8192, 300, 11);
            p.add(w, 3, Opcode.RDMA_READ, SendFlags.SIGNALED, 100, 300, 8192);
            post(p.a.qp, w);
            Wc c = poll(p.a.cq, 1).get(0);
            assertEquals(WcStatus.SUCCESS, c.status());
            assertEquals(WcOpcode.RDMA_READ, c.opcode());
            assertArrayEquals(p.b.bytes(8192, 300), bytes(p.a.mem, 100, 300));
        }
    }

    @Test
    void sendAndSendWithImm() {
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(2, 2)) {
            postRecv(p.b, 50, 0, 512);
            postRecv(p.b, 51, 512, 512);
            fill(p.a.mem, 0, 200, 2);
            fill(p.a.mem, 1000, 100, 4);
            p.add(w, 1, Opcode.SEND, SendFlags.SIGNALED, 0, 200, 0);
            int i = p.add(w, 2, Opcode.SEND_WITH_IMM, SendFlags.SIGNALED, 1000, 100, 0);
            w.imm(i, 42);
            post(p.a.qp, w);
            List<Wc> s = poll(p.a.cq, 2);
            assertTrue(s.stream().allMatch(c -> c.status() == WcStatus.SUCCESS && c.opcode() == WcOpcode.SEND), s::toString);
            List<Wc> r = poll(p.b, 2);
            assertEquals(Set.of(50L, 51L), Set.of(r.get(0).wrId(), r.get(1).wrId()));
            for (Wc c : r) {
                assertEquals(WcStatus.SUCCESS, c.status());
                assertEquals(WcOpcode.RECV, c.opcode());
                assertEquals(p.a.qp.qpNum(), c.srcQp());
                assertEquals(p.b.qpNum(), c.qpNum());
                long off = c.wrId() == 50 ? 0 : 512;
                // receives are consumed in order; which send reached which receive depends on ordering
                if (c.byteLen() == 200) {
                    assertFalse(c.hasImm());
                    assertArrayEquals(bytes(p.a.mem, 0, 200), p.b.bytes(off, 200));
                } else {
                    assertEquals(100, c.byteLen());
                    assertTrue(c.hasImm());
                    assertEquals(42, c.imm());
                    assertArrayEquals(bytes(p.a.mem, 1000, 100), p.b.bytes(off, 100));
                }
            }
        }
    }

    @Test
    void udSendThroughAddressHandleCarriesGrh() {
        assumeTrue(caps().qpTypes().contains(QpType.UD));
        try (Pair p = new Pair(QpType.UD, 16, 0, 7, Access.ALL_RDMA); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            postRecv(p.b, 5, 0, 40 + 128);
            fill(p.a.mem, 0, 128, 6);
            p.add(w, 9, Opcode.SEND, SendFlags.SIGNALED, 0, 128, 0);
            post(p.a.qp, w);
            assertEquals(WcStatus.SUCCESS, poll(p.a.cq, 1).get(0).status());
            Wc r = poll(p.b, 1).get(0);
            assertEquals(WcStatus.SUCCESS, r.status());
            assertEquals(40 + 128, r.byteLen(), "UD receives carry a 40-byte GRH");
            assertEquals(p.a.qp.qpNum(), r.srcQp());
            assertArrayEquals(bytes(p.a.mem, 0, 128), p.b.bytes(40, 128));
        }
    }

    @Test
    void udRejectsRdma() {
        assumeTrue(caps().qpTypes().contains(QpType.UD) && caps().rdmaWrite());
        try (Pair p = new Pair(QpType.UD, 16, 0, 7, Access.ALL_RDMA); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            int i = w.add(1, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
            w.sge(i, p.a.mr, 0, 8).ud(i, p.a.ah, p.b.qpNum(), QueuePair.QKEY);
            assertEquals(Errno.EINVAL, p.a.qp.postSend(w));
            assertEquals(0, w.badIndex());
        }
    }

    // ------------------------------------------------------------------ features

    @Test
    void postlistRingsOneDoorbell() {
        assumeTrue(caps().rdmaWrite());
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(16, 1)) {
            long db = p.a.qp.counters().doorbells();
            long wq = p.a.qp.counters().wqes();
            for (int k = 0; k < 16; k++) {
                fill(p.a.mem, k * 8L, 8, k);
                p.add(w, k, Opcode.RDMA_WRITE, SendFlags.SIGNALED, k * 8L, 8, 4096 + k * 8L);
            }
            post(p.a.qp, w);
            assertEquals(db + 1, p.a.qp.counters().doorbells());
            assertEquals(wq + 16, p.a.qp.counters().wqes());
            List<Wc> c = poll(p.a.cq, 16);
            Set<Long> ids = new HashSet<>();
            c.forEach(x -> {
                assertEquals(WcStatus.SUCCESS, x.status());
                ids.add(x.wrId());
            });
            assertEquals(16, ids.size());
            assertArrayEquals(bytes(p.a.mem, 0, 128), p.b.bytes(4096, 128));
        }
    }

    @Test
    void unsignaledWritesFewerCompletionsAndRetiresOnSignal() {
        assumeTrue(caps().unsignaled() && caps().rdmaWrite());
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(16, 1)) {
            long before = p.a.cq.cqesWritten();
            for (int k = 0; k < 15; k++) {
                p.add(w, k, Opcode.RDMA_WRITE, 0, 0, 8, 0);
            }
            post(p.a.qp, w);
            assertTrue(drain(p.a.cq).isEmpty(), "unsignaled WRs write no CQE");
            assertEquals(15, p.a.qp.outstandingSends(), "unsignaled WQEs stay outstanding until a later CQE");
            w.clear();
            p.add(w, 15, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 8, 0);
            post(p.a.qp, w);
            List<Wc> c = poll(p.a.cq, 1);
            assertEquals(15, c.get(0).wrId());
            assertEquals(1, p.a.cq.cqesWritten() - before);
            assertEquals(0, p.a.qp.outstandingSends(), "the CQE retired every earlier WQE");
        }
    }

    @Test
    void unsignaledWritesBeforeAFailureWriteNoCqeAndTheRestFlush() {
        assumeTrue(caps().unsignaled() && caps().rdmaWrite() && caps().inOrder());
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(6, 1)) {
            fill(p.a.mem, 0, 48, 11);
            for (int k = 0; k < 6; k++) {
                int i = p.add(w, k, Opcode.RDMA_WRITE, k == 5 ? SendFlags.SIGNALED : 0, 8L * k, 8, 8L * k);
                if (k == 3) { // a wrong rkey in the middle of the list
                    long raddr = p.b.mrAddress() + 8L * k;
                    if (p.type == QpType.SRD) {
                        w.srdRdma(i, p.a.ah, p.b.qpNum(), QueuePair.QKEY, raddr, p.b.rkey() ^ 0x5a5a00);
                    } else {
                        w.rdma(i, raddr, p.b.rkey() ^ 0x5a5a00);
                    }
                }
            }
            post(p.a.qp, w);
            List<Wc> c = poll(p.a.cq, 3);
            assertEquals(List.of(3L, 4L, 5L), c.stream().map(Wc::wrId).toList(), c::toString);
            assertEquals(WcStatus.REM_ACCESS_ERR, c.get(0).status());
            assertEquals(WcStatus.WR_FLUSH_ERR, c.get(1).status());
            assertEquals(WcStatus.WR_FLUSH_ERR, c.get(2).status());
            assertTrue(drain(p.a.cq).isEmpty(), "the unsignaled WRs executed before the failure write no CQE");
            assertArrayEquals(bytes(p.a.mem, 0, 24), p.b.bytes(0, 24), "the WRs before the failure wrote");
            assertArrayEquals(new byte[24], p.b.bytes(24, 24), "the failed and flushed WRs wrote nothing");
        }
    }

    @Test
    void unsignaledWritesHoldTheirPlaceUntilACqeOrAFlush() {
        assumeTrue(caps().unsignaled() && caps().rdmaWrite() && caps().inOrder());
        try (Pair p = pair()) {
            int max = p.a.qp.attributes().maxSendWr();
            try (SendWorkRequests w = new SendWorkRequests(max, 1)) {
                for (int k = 0; k < max; k++) {
                    p.add(w, k, Opcode.RDMA_WRITE, 0, 0, 8, 8L * k);
                }
                post(p.a.qp, w);
                assertEquals(max, p.a.qp.outstandingSends(), "no CQE yet: every unsignaled WQE still counts");
                w.clear();
                p.add(w, max, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 8, 0);
                assertEquals(Errno.ENOMEM, p.a.qp.postSend(w), "the send queue is full of unsignaled WQEs");
                assertEquals(0, w.badIndex());
                p.a.qp.toError();
                List<Wc> flushed = drain(p.a.cq);
                if (fixture().name().startsWith("sim")) { // ibv counts a WQE retired when a CQE is polled
                    assertTrue(flushed.isEmpty(), "executed unsignaled WQEs retire silently when the QP flushes");
                    assertEquals(0, p.a.qp.outstandingSends());
                } else {
                    // rxe's completer may not have seen every ACK when the QP enters the error state:
                    // the WQEs still queued are flushed with a CQE each, never completed successfully.
                    assertTrue(flushed.size() <= max, "at most one CQE per posted WQE: " + flushed.size());
                    for (Wc c : flushed) {
                        assertEquals(WcStatus.WR_FLUSH_ERR, c.status(), "a WQE left in the queue is flushed, not completed");
                    }
                }
            }
        }
    }

    @Test
    void unsignaledRejectedWhereUnsupported() {
        assumeFalse(caps().unsignaled());
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(2, 1)) {
            postRecv(p.b, 1, 0, 64);
            p.add(w, 1, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0);
            p.add(w, 2, Opcode.SEND, 0, 0, 8, 0);
            assertEquals(Errno.EINVAL, p.a.qp.postSend(w));
            assertEquals(1, w.badIndex());
            assertEquals(1, poll(p.a.cq, 1).size(), "the WR before bad_wr was posted");
        }
    }

    private static void assumeFalse(boolean b) {
        assumeTrue(!b);
    }

    @Test
    void inlinePayloadIsCopiedAtPost() {
        assumeTrue(caps().maxInline() >= 16);
        int inline = Math.min(32, caps().maxInline());
        try (Pair p = new Pair(reliable(), 16, inline, 7, Access.ALL_RDMA); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            postRecv(p.b, 1, 0, 64);
            fill(p.a.mem, 0, 16, 77);
            byte[] original = bytes(p.a.mem, 0, 16);
            long inl = p.a.qp.counters().inlineWqes();
            p.add(w, 1, Opcode.SEND, SendFlags.SIGNALED | SendFlags.INLINE, 0, 16, 0);
            post(p.a.qp, w);
            fill(p.a.mem, 0, 16, 1); // reuse the buffer immediately
            assertEquals(inl + 1, p.a.qp.counters().inlineWqes());
            assertEquals(WcStatus.SUCCESS, poll(p.a.cq, 1).get(0).status());
            assertEquals(16, poll(p.b, 1).get(0).byteLen());
            assertArrayEquals(original, p.b.bytes(0, 16));
        }
    }

    @Test
    void sharedReceiveQueueServesSeveralQps() {
        assumeTrue(caps().maxSrq() > 0 && caps().qpTypes().contains(QpType.RC));
        VerbsFixture f = fixture();
        try (Context ca = f.requester().open(f.options());
             Responder b = responder(new Responder.Spec(QpType.RC, 16, 0, Access.ALL_RDMA, 2, 16, 0));
             SendWorkRequests w = new SendWorkRequests(1, 1)) {
            ProtectionDomain pa = ca.allocPd();
            CompletionQueue qa = ca.createCq(cqOptions(ca, 64));
            MemorySegment ma = pa.allocate(4096, 64);
            MemoryRegion ra = pa.register(ma, Access.ALL_RDMA);
            QueuePair[] as = new QueuePair[2];
            for (int k = 0; k < 2; k++) {
                as[k] = pa.createQp(QpInitAttr.of(QpType.RC, qa, 8));
            }
            for (int k = 0; k < 2; k++) {
                as[k].connect(b.address(k), Access.ALL_RDMA, 7);
                b.connect(k, as[k].address(), 7, 7);
            }
            assertEquals(0, b.postRecv(100, 4, 0, 256, 256).rc());
            assertEquals(4, b.srqPosted());
            for (int k = 0; k < 2; k++) {
                w.clear();
                ma.set(JAVA_BYTE, k, (byte) (k + 1));
                w.sge(w.add(k, Opcode.SEND, SendFlags.SIGNALED), ra, k, 1);
                post(as[k], w);
            }
            poll(qa, 2);
            List<Wc> got = poll(b, 2);
            assertEquals(Set.of(b.address(0).qpn(), b.address(1).qpn()), Set.of(got.get(0).qpNum(), got.get(1).qpNum()));
            assertEquals(2, b.srqPosted());
            assertEquals(Errno.EBUSY, b.closeSrq(), "an SRQ with QPs on it is busy");
        }
    }

    @Test
    void pollsCompletionsInBatches() {
        assumeTrue(caps().rdmaWrite());
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(32, 1); WorkCompletions wc = new WorkCompletions(8)) {
            for (int k = 0; k < 32; k++) {
                p.add(w, 1000 + k, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 4, 0);
            }
            post(p.a.qp, w);
            Set<Long> ids = new HashSet<>();
            int batches = 0;
            long deadline = System.nanoTime() + TIMEOUT_NANOS;
            while (ids.size() < 32 && System.nanoTime() < deadline) {
                int n = p.a.cq.poll(wc);
                assertTrue(n >= 0 && n <= 8);
                if (n > 0) {
                    batches++;
                }
                for (int i = 0; i < n; i++) {
                    assertTrue(ids.add(wc.wrId(i)), "duplicate " + wc.wrId(i));
                }
            }
            assertEquals(32, ids.size());
            assertTrue(batches >= 4);
            assertEquals(0, p.a.cq.poll(wc, 8));
        }
    }

    // ------------------------------------------------------------------ failures and their statuses

    @Test
    void postBeforeReadyToSendIsEinvalAndQueuesNothing() {
        try (End e = new End(fixture().requester(), fixture(), reliable(), 8, 0, Access.ALL_RDMA, Access.ALL_RDMA);
             SendWorkRequests w = new SendWorkRequests(1, 1); RecvWorkRequests r = new RecvWorkRequests(1, 1)) {
            w.sge(w.add(1, Opcode.SEND, SendFlags.SIGNALED), e.mr, 0, 8);
            assertEquals(QpState.INIT, e.qp.state());
            assertEquals(Errno.EINVAL, e.qp.postSend(w));
            assertEquals(0, w.badIndex());
            assertEquals(0, e.qp.counters().wqes());
            e.qp.reset();
            r.sge(r.add(1), e.mr, 0, 8);
            assertEquals(Errno.EINVAL, e.qp.postRecv(r));
            assertEquals(0, r.badIndex());
            assertThrows(VerbsException.class, () -> e.qp.readyToSend(7, 7), "RESET → RTS is illegal");
            assertTrue(drain(e.cq).isEmpty());
        }
    }

    /**
     * Connection attributes on every provider: the path MTU each side advertises is the smaller one
     * after RTR (RC), the address carries it through its byte encoding, and a port, GID index or
     * read/atomic depth the device lacks is refused at creation with one line naming the device.
     */
    @Test
    void connectionAttributesAgreeAndAreValidated() {
        VerbsFixture f = fixture();
        QpType type = reliable();
        try (Context ca = f.requester().open(f.options());
             Responder b = responder(new Responder.Spec(type, 4, 0, Access.ALL_RDMA, 1, 0, 1024))) {
            CompletionQueue qa = ca.createCq(cqOptions(ca, 8));
            ProtectionDomain pa = ca.allocPd();
            int active = f.requester().ports().getFirst().activeMtu();
            QueuePair a = pa.createQp(QpInitAttr.of(type, qa, 4));
            assertEquals(active, a.address().mtu(), "automatic: the port's active MTU");
            assertEquals(1024, b.address().mtu());
            assertEquals(b.address(), QpAddress.fromBytes(b.address().toBytes()));
            if (type == QpType.RC) {
                a.connect(QpAddress.fromBytes(b.address().toBytes()), Access.ALL_RDMA, 7);
                b.connect(0, a.address(), 7, 7);
                assertEquals(1024, a.pathMtu(), "the smaller side's MTU");
                assertEquals(1024, b.pathMtu(0));
            }
            String name = f.requester().name();
            for (var bad : List.of(ConnectionOptions.DEFAULTS.withPort(9),
                    ConnectionOptions.DEFAULTS.withGidIndex(255),
                    ConnectionOptions.DEFAULTS.withRdAtomic(255, 0))) {
                VerbsException e = assertThrows(VerbsException.class,
                        () -> pa.createQp(QpInitAttr.of(type, qa, 4).withConnection(bad)), bad.toString());
                assertTrue(e.getMessage().contains(name), e.getMessage());
                assertFalse(e.getMessage().contains("\n"));
            }
            assertEquals(1, ca.resources().qps(), "the refused QPs were never created");
        }
    }

    @Test
    void postBeyondQueueDepthIsEnomemAtTheFirstExtraWr() {
        assumeTrue(caps().rdmaWrite());
        try (Pair p = pair()) {
            int max = p.a.qp.attributes().maxSendWr();
            try (SendWorkRequests w = new SendWorkRequests(max + 1, 1)) {
                for (int k = 0; k <= max; k++) {
                    p.add(w, k, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 4, 0);
                }
                assertEquals(Errno.ENOMEM, p.a.qp.postSend(w), "send " + (max + 1) + " on a send queue of " + max);
                assertEquals(max, w.badIndex());
                List<Wc> c = poll(p.a.cq, max);
                assertEquals(max, c.stream().map(Wc::wrId).distinct().count());
                assertTrue(c.stream().allMatch(x -> x.status() == WcStatus.SUCCESS));
            }
            int rmax = p.b.maxRecvWr();
            Responder.RecvResult r = p.b.postRecv(0, rmax + 1, 0, 0, 8);
            assertEquals(Errno.ENOMEM, r.rc(), "receive " + (rmax + 1) + " on a receive queue of " + rmax);
            assertEquals(rmax, r.badIndex());
        }
    }

    @Test
    void wrBeyondSgeOrInlineLimitsIsEinval() {
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(2, 4)) {
            int maxSge = p.a.qp.attributes().maxSendSge();
            postRecv(p.b, 1, 0, 64);
            p.add(w, 1, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0);
            int i = p.add(w, 2, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0);
            for (int k = 0; k < maxSge; k++) {
                w.sge(i, p.a.mr, 8 + k, 1);
            }
            assertEquals(Errno.EINVAL, p.a.qp.postSend(w), "num_sge above max_send_sge");
            assertEquals(1, w.badIndex());
            assertEquals(1, poll(p.a.cq, 1).size());
            w.clear();
            // The device may round the inline size up (rxe does): refuse what exceeds what the QP reports.
            int inl = p.a.qp.attributes().maxInline();
            p.add(w, 3, Opcode.SEND, SendFlags.SIGNALED | SendFlags.INLINE, 0, inl + 1, 0);
            assertEquals(Errno.EINVAL, p.a.qp.postSend(w), "inline of " + (inl + 1) + " bytes on a QP with max_inline_data " + inl);
            assertEquals(0, w.badIndex());
        }
    }

    @Test
    void createAboveDeviceLimitsIsRefusedAndLeaksNothing() {
        VerbsFixture f = fixture();
        try (Context c = f.requester().open(f.options())) {
            ResourceUsage base = c.resources();
            int maxCqe = c.capabilities().maxCqe();
            VerbsException e = assertThrows(VerbsException.class, () -> c.createCq(cqOptions(c, maxCqe + 1)));
            assertTrue(e.getMessage().contains(String.valueOf(maxCqe)), e.getMessage());
            assertTrue(e.getMessage().contains(f.requester().name()), e.getMessage());
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(cqOptions(c, 64));
            int maxWr = c.capabilities().maxQpWr();
            VerbsException q = assertThrows(VerbsException.class,
                    () -> pd.createQp(QpInitAttr.of(reliable(), cq, maxWr + 1)));
            assertEquals(Errno.EINVAL, q.errno());
            assertTrue(q.getMessage().contains(String.valueOf(maxWr)), q.getMessage());
            assertThrows(VerbsException.class, () -> pd.createQp(QpInitAttr.of(reliable(), cq, 4)
                    .withInline(c.capabilities().maxInline() + 1)));
            assertThrows(VerbsException.class, () -> pd.createQp(QpInitAttr.of(reliable(), cq, 4)
                    .withSges(c.capabilities().maxSge() + 1, 1)));
            cq.close();
            pd.close();
            assertEquals(base, c.resources(), "nothing leaked");
        }
    }

    @Test
    void writeToMrWithoutRemoteWriteIsRemAccessErrAndMovesNoData() {
        assumeTrue(caps().rdmaWrite());
        try (Pair p = new Pair(reliable(), 16, 0, 7, Access.LOCAL_WRITE | Access.REMOTE_READ);
             SendWorkRequests w = new SendWorkRequests(3, 1)) {
            fill(p.a.mem, 0, 64, 9);
            p.add(w, 1, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 64, 0); // b's MR lacks REMOTE_WRITE
            p.add(w, 2, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 64, 64);
            post(p.a.qp, w);
            List<Wc> c = poll(p.a.cq, 2);
            // The first WR to execute fails and flushes the other: WR 1 on an in-order device, either one
            // on an out-of-order device (EFA executes its window in a seeded-random order).
            assertEquals(WcStatus.REM_ACCESS_ERR, c.get(0).status());
            assertEquals(WcStatus.WR_FLUSH_ERR, c.get(1).status());
            if (caps().inOrder()) {
                assertEquals(1, c.get(0).wrId());
            }
            assertEquals(Set.of(1L, 2L), Set.of(c.get(0).wrId(), c.get(1).wrId()), "each WR completes once");
            assertEquals(QpState.ERR, p.a.qp.state());
            assertArrayEquals(new byte[128], p.b.bytes(0, 128), "target memory unchanged");
            w.clear();
            p.add(w, 3, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 64, 0);
            assertPostInErrorFails(p.a, w, 3);
            assertArrayEquals(new byte[128], p.b.bytes(0, 128), "target memory unchanged");
        }
    }

    @Test
    void writePastTheMrOrWithWrongRkeyIsRemAccessErr() {
        assumeTrue(caps().rdmaWrite());
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            int i = p.add(w, 1, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 64, MEM - 32); // runs past the MR
            post(p.a.qp, w);
            assertEquals(WcStatus.REM_ACCESS_ERR, poll(p.a.cq, 1).get(0).status());
            assertArrayEquals(new byte[32], p.b.bytes(MEM - 32, 32));
            assertTrue(i == 0);
        }
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            int i = p.add(w, 1, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 64, 0);
            if (p.type == QpType.SRD) {
                w.srdRdma(i, p.a.ah, p.b.qpNum(), QueuePair.QKEY, p.b.mrAddress(), p.b.rkey() ^ 0x5a5a00);
            } else {
                w.rdma(i, p.b.mrAddress(), p.b.rkey() ^ 0x5a5a00);
            }
            post(p.a.qp, w);
            assertEquals(WcStatus.REM_ACCESS_ERR, poll(p.a.cq, 1).get(0).status());
        }
    }

    /** Every asynchronous event of {@code c} that arrives within {@code nanos}, waiting until {@code done} holds. */
    protected static List<AsyncEvent> events(Context c, long nanos, Predicate<List<AsyncEvent>> done) {
        List<AsyncEvent> out = new ArrayList<>();
        long deadline = System.nanoTime() + nanos;
        while (!done.test(out)) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            AsyncEvent e = c.pollAsyncEvent(left);
            if (e != null) {
                out.add(e);
            }
        }
        return out;
    }

    @Test
    void asyncEventNothingPendingTimesOut() {
        try (Pair p = pair()) {
            long t0 = System.nanoTime();
            assertEquals(null, p.a.ctx.pollAsyncEvent(50_000_000L));
            assertTrue(System.nanoTime() - t0 >= 40_000_000L, "waited for the timeout");
            assertEquals(null, p.a.ctx.pollAsyncEvent(0));
            p.a.ctx.close();
            assertThrows(ClosedException.class, () -> p.a.ctx.pollAsyncEvent(0));
        }
    }

    /**
     * Whether the responder of an RC RDMA write with a rejected rkey raises an affiliated QP event
     * (IBA local access violation; mlx5 and the simulator raise QP_ACCESS_ERR). Providers that move
     * the responder to ERR silently override this with false and say where that was observed.
     */
    protected boolean responderAccessErrorRaisesEvent() {
        return true;
    }

    /**
     * An RDMA write with an rkey the responder rejects: the requester gets REM_ACCESS_ERR (a
     * completion, no event), the responder's RC QP goes to ERR and, where the provider raises one,
     * reports a QP error event naming it. Every event either side sees must name the responder QP.
     */
    @Test
    void asyncEventRemoteAccessViolationNamesTheResponderQp() {
        assumeTrue(reliable() == QpType.RC && caps().rdmaWrite());
        boolean expected = responderAccessErrorRaisesEvent();
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            int i = p.add(w, 1, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 64, 0);
            w.rdma(i, p.b.mrAddress(), p.b.rkey() ^ 0x5a5a00);
            post(p.a.qp, w);
            assertEquals(WcStatus.REM_ACCESS_ERR, poll(p.a.cq, 1).get(0).status());
            List<Responder.Event> eb = p.b.events(expected ? 5_000_000_000L : 1_000_000_000L, true);
            List<AsyncEvent> ea = events(p.a.ctx, 200_000_000L, l -> false);
            System.out.println("[async] " + fixture().name() + " bad rkey: responder " + eb + ", requester " + ea);
            assertTrue(ea.isEmpty(), "the requester's error is a completion, not an event: " + ea);
            for (Responder.Event e : eb) {
                assertTrue(e.qpIndex() == 0 && e.qpNum() == p.b.qpNum(), "event for another object: " + e);
                assertTrue(e.type() == AsyncEvent.QP_ACCESS_ERR || e.type() == AsyncEvent.QP_FATAL
                        || e.type() == AsyncEvent.QP_REQ_ERR, e.toString());
            }
            if (expected) {
                assertFalse(eb.isEmpty(), "no event naming the responder QP");
            }
            assertEquals(QpState.ERR, p.b.state(), "the responder QP is in error");
        }
    }

    /** More signaled completions than a CQ holds: CQ_ERR naming that CQ. */
    @Test
    void asyncEventCqOverrunIsCqErr() {
        assumeTrue(reliable() == QpType.RC && caps().rdmaWrite());
        Pair made;
        System.setProperty("scalep.sim.allowCqOvercommit", "true");
        try {
            made = new Pair(QpType.RC, 32, 0, 7, Access.ALL_RDMA, 7, 4);
        } finally {
            System.clearProperty("scalep.sim.allowCqOvercommit");
        }
        try (Pair p = made; SendWorkRequests w = new SendWorkRequests(32, 1)) {
            int n = p.a.cq.depth() + 2;
            assertTrue(n <= 32, "CQ depth " + p.a.cq.depth());
            for (int k = 0; k < n; k++) {
                p.add(w, k, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 8, 64L * k);
            }
            post(p.a.qp, w);
            List<AsyncEvent> ea = events(p.a.ctx, 5_000_000_000L, l -> l.stream().anyMatch(e -> e.cq() == p.a.cq));
            System.out.println("[async] " + fixture().name() + " CQ overrun (depth " + p.a.cq.depth() + "): " + ea);
            AsyncEvent e = ea.stream().filter(x -> x.cq() == p.a.cq).findFirst().orElse(null);
            assertTrue(e != null, "no event naming the CQ; saw " + ea);
            assertEquals(AsyncEvent.CQ_ERR, e.type());
            assertEquals("CQ_ERR", e.typeName());
        }
    }

    @Test
    void badLkeyIsALocalErrorAndMovesNoData() {
        assumeTrue(caps().rdmaWrite());
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            int i = w.add(1, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
            w.sge(i, p.a.mr.address(), 64, p.a.mr.lkey() ^ 0x5a5a00);
            if (p.type == QpType.SRD) {
                w.srdRdma(i, p.a.ah, p.b.qpNum(), QueuePair.QKEY, p.b.mrAddress(), p.b.rkey());
            } else {
                w.rdma(i, p.b.mrAddress(), p.b.rkey());
            }
            fill(p.a.mem, 0, 64, 1);
            post(p.a.qp, w);
            int st = poll(p.a.cq, 1).get(0).status();
            // mlx5 reports LOC_PROT_ERR; rxe reports the bad lkey as LOC_QP_OP_ERR.
            assertTrue(st == WcStatus.LOC_PROT_ERR || st == WcStatus.LOC_QP_OP_ERR, "local error expected, got " + WcStatus.name(st));
            assertArrayEquals(new byte[64], p.b.bytes(0, 64), "no data moved");
        }
    }

    @Test
    void receiveSmallerThanTheSendFailsBothSides() {
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            postRecv(p.b, 77, 0, 16);
            p.add(w, 1, Opcode.SEND, SendFlags.SIGNALED, 0, 64, 0);
            post(p.a.qp, w);
            int st = poll(p.a.cq, 1).get(0).status();
            // mlx5 reports REM_INV_REQ_ERR to the requester; rxe reports REM_OP_ERR.
            assertTrue(st == WcStatus.REM_INV_REQ_ERR || st == WcStatus.REM_OP_ERR, "remote error expected, got " + WcStatus.name(st));
            Wc r = poll(p.b, 1).get(0);
            assertEquals(77, r.wrId());
            // mlx5 reports LOC_LEN_ERR at the responder; rxe reports LOC_QP_OP_ERR.
            assertTrue(r.status() == WcStatus.LOC_LEN_ERR || r.status() == WcStatus.LOC_QP_OP_ERR,
                    "receiver length error expected, got " + WcStatus.name(r.status()));
        }
    }

    @Test
    void sendWithoutReceiveExhaustsRnrRetries() {
        try (Pair p = new Pair(reliable(), 16, 0, 1, Access.ALL_RDMA); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            p.add(w, 1, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0);
            post(p.a.qp, w);
            assertEquals(WcStatus.RNR_RETRY_EXC_ERR, poll(p.a.cq, 1).get(0).status());
            assertEquals(QpState.ERR, p.a.qp.state());
        }
    }

    @Test
    void sendWithInfiniteRnrRetryWaitsForAReceive() {
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            fill(p.a.mem, 0, 8, 3);
            p.add(w, 1, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0);
            post(p.a.qp, w);
            assertTrue(drain(p.a.cq).isEmpty(), "the send waits for a receive");
            postRecv(p.b, 2, 100, 64);
            assertEquals(WcStatus.SUCCESS, poll(p.a.cq, 1).get(0).status());
            assertEquals(8, poll(p.b, 1).get(0).byteLen());
            assertArrayEquals(bytes(p.a.mem, 0, 8), p.b.bytes(100, 8));
        }
    }

    /**
     * A stream of sends longer than the receives posted: the first ones are taken, the next meets no
     * receive (RNR, retried for ever) and everything behind it waits; as receives come in batches,
     * every send arrives exactly once, and on RC in post order (each receive holds the send of its
     * index). Across processes the requester keeps many sends in flight, so this is the go-back the
     * target forces on what follows a refused send.
     */
    /**
     * Poll the responder until {@code n} completions arrived (fails after 10 s), polling the
     * requester's CQ in between into {@code sends} (a simulated EFA window releases what it holds
     * when its device's CQ is polled empty).
     */
    private static List<Wc> pollBoth(Pair p, int n, List<Wc> sends) {
        List<Wc> out = new ArrayList<>();
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        try (WorkCompletions wc = new WorkCompletions(16)) {
            while (out.size() < n) {
                out.addAll(p.b.poll(n - out.size(), 1_000_000));
                LocalResponder.collect(wc, p.a.cq.poll(wc), sends);
                assertTrue(System.nanoTime() < deadline, "timed out with " + out.size() + "/" + n + ": " + out);
            }
        }
        return out;
    }

    @Test
    void aStreamOfSendsAheadOfTheReceivesArrivesOnceAndInOrder() {
        int n = 48;
        int batch = 16;
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(n, 1)) {
            for (int k = 0; k < n; k++) {
                fill(p.a.mem, 8L * k, 8, k);
                p.add(w, k, Opcode.SEND, SendFlags.SIGNALED, 8L * k, 8, 0);
            }
            List<Wc> r = new ArrayList<>();
            for (int k = 0; k < batch; k++) {
                postRecv(p.b, 100 + k, 4096 + 16L * k, 16);
            }
            List<Wc> s = new ArrayList<>();
            post(p.a.qp, w);
            r.addAll(pollBoth(p, batch, s));
            for (int from = batch; from < n; from += batch) {
                for (int k = from; k < from + batch; k++) {
                    postRecv(p.b, 100 + k, 4096 + 16L * k, 16);
                }
                r.addAll(pollBoth(p, batch, s));
            }
            s.addAll(poll(p.a.cq, n - s.size()));
            assertTrue(s.stream().allMatch(c -> c.status() == WcStatus.SUCCESS), s::toString);
            Set<Integer> seen = new HashSet<>();
            for (Wc c : r) {
                assertEquals(WcStatus.SUCCESS, c.status(), c::toString);
                assertEquals(8, c.byteLen());
                int k = (int) c.wrId() - 100;
                byte[] got = p.b.bytes(4096 + 16L * k, 8);
                int from = got[0];
                assertTrue(from >= 0 && from < n && seen.add(from), "send " + from + " twice or unknown, in receive " + k);
                assertArrayEquals(bytes(p.a.mem, 8L * from, 8), got);
                if (p.type == QpType.RC) {
                    assertEquals(k, from, "RC delivers in post order: receive " + k + " got send " + from);
                }
            }
            assertEquals(n, seen.size());
            if (p.type == QpType.RC) {
                assertEquals(LongStream.range(0, n).boxed().toList(), s.stream().map(Wc::wrId).toList(),
                        "send completions in post order");
            }
            assertTrue(p.b.drain().isEmpty(), "nothing received twice");
            assertTrue(drain(p.a.cq).isEmpty(), "nothing completed twice");
        }
    }

    @Test
    void deadPeerIsRetryExceededReportedOnce() {
        try (Pair p = new Pair(reliable(), 64, 0, 7, Access.ALL_RDMA, 1); SendWorkRequests w = new SendWorkRequests(2, 1)) {
            p.b.closeQp();
            p.add(w, 1, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0);
            p.add(w, 2, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0);
            post(p.a.qp, w);
            List<Wc> c = poll(p.a.cq, 2, 6 * TIMEOUT_NANOS); // a real device gives up after its retransmission timeouts
            assertEquals(WcStatus.RETRY_EXC_ERR, c.get(0).status());
            assertEquals(WcStatus.WR_FLUSH_ERR, c.get(1).status());
            assertEquals(1, c.stream().filter(x -> x.status() == WcStatus.RETRY_EXC_ERR).count(), "reported once");
            w.clear();
            p.add(w, 3, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0);
            assertPostInErrorFails(p.a, w, 3);
        }
    }

    @Test
    void errorFlushesEachWrOnceInSqOrderThenQpIsReusable() {
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(5, 1); RecvWorkRequests r = new RecvWorkRequests(3, 1)) {
            for (int k = 0; k < 5; k++) {
                p.add(w, k, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0); // no receive at b: they wait (rnr 7)
            }
            post(p.a.qp, w);
            for (int k = 0; k < 3; k++) {
                r.sge(r.add(100 + k), p.a.mr, 1024 + k * 64L, 64);
            }
            assertEquals(0, p.a.qp.postRecv(r));
            assertTrue(drain(p.a.cq).isEmpty());
            p.a.qp.toError();
            List<Wc> c = poll(p.a.cq, 8);
            assertTrue(c.stream().allMatch(x -> x.status() == WcStatus.WR_FLUSH_ERR), c::toString);
            List<Long> sends = c.stream().map(Wc::wrId).filter(x -> x < 100).toList();
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L), sends, "each send flushed once, in SQ order");
            assertEquals(Set.of(100L, 101L, 102L), c.stream().map(Wc::wrId).filter(x -> x >= 100)
                    .collect(Collectors.toSet()));
            assertTrue(drain(p.a.cq).isEmpty(), "nothing twice");
            assertEquals(0, p.a.qp.outstandingSends());
            p.a.qp.reset();
            p.a.qp.init(Access.ALL_RDMA);
            p.a.qp.readyToReceive(p.type == QpType.RC ? p.b.address() : null);
            p.a.qp.readyToSend(7, 7);
            postRecv(p.b, 9, 0, 64);
            w.clear();
            p.add(w, 42, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0);
            post(p.a.qp, w);
            Wc ok = poll(p.a.cq, 1).get(0);
            assertEquals(42, ok.wrId());
            assertEquals(WcStatus.SUCCESS, ok.status());
        }
    }

    @Test
    void closeWithLiveChildrenIsEbusyAndBothStayUsable() {
        VerbsFixture f = fixture();
        try (Context c = f.requester().open(f.options()); Arena arena = Arena.ofShared()) {
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(cqOptions(c, 16));
            MemoryRegion mr = pd.register(arena.allocate(4096, 64), Access.LOCAL_WRITE);
            QueuePair qp = pd.createQp(QpInitAttr.of(reliable(), cq, 4));
            VerbsException e = assertThrows(VerbsException.class, pd::close);
            assertEquals(Errno.EBUSY, e.errno());
            assertTrue(e.getMessage().contains("MR") && e.getMessage().contains("QP"), e.getMessage());
            VerbsException e2 = assertThrows(VerbsException.class, cq::close);
            assertEquals(Errno.EBUSY, e2.errno());
            // both stay usable
            MemoryRegion mr2 = pd.register(arena.allocate(4096, 64), Access.LOCAL_WRITE);
            try (WorkCompletions wc = new WorkCompletions(1)) {
                assertEquals(0, cq.poll(wc));
            }
            qp.close();
            qp.close();
            mr.close();
            mr2.close();
            pd.close();
            pd.close();
            cq.close();
            cq.close();
            if (c.capabilities().threadDomains()) {
                ProtectionDomain pd2 = c.allocPd();
                ThreadDomain td = c.allocTd(TdSharing.DEFAULT);
                ProtectionDomain parent = pd2.parentDomain(td);
                assertEquals(Errno.EBUSY, assertThrows(VerbsException.class, td::close).errno());
                assertEquals(Errno.EBUSY, assertThrows(VerbsException.class, pd2::close).errno());
                parent.close();
                td.close();
                pd2.close();
            }
        }
    }

    @Test
    void closingACqAcknowledgesItsUnackedEvents() {
        assumeTrue(caps().rdmaWrite());
        VerbsFixture f = fixture();
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            CompletionQueue cq = p.a.ctx.createCq(cqOptions(p.a.ctx, 16).withCompletionChannel(true));
            assertFalse(cq.awaitEvent(1_000_000), "no event before a completion");
            cq.requestNotify();
            QueuePair qp = p.a.pd.createQp(QpInitAttr.of(p.type, cq, 4));
            qp.init(Access.ALL_RDMA);
            if (p.type == QpType.RC) {
                p.b.reconnect(qp.address());
                qp.readyToReceive(p.b.address());
            } else {
                qp.readyToReceive(null);
            }
            qp.readyToSend(7, 7);
            p.add(w, 5, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 8, 0);
            post(qp, w);
            assertTrue(cq.awaitEvent(TIMEOUT_NANOS));
            assertEquals(1, cq.unackedEvents());
            assertEquals(5, poll(cq, 1).get(0).wrId());
            qp.close();
            long t0 = System.nanoTime();
            cq.close(); // acknowledges the outstanding event
            assertTrue(System.nanoTime() - t0 < 2_000_000_000L);
            assertTrue(f.name() != null);
        }
    }

    @Test
    void useAfterCloseIsClosedException() {
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(1, 1); WorkCompletions wc = new WorkCompletions(1)) {
            p.add(w, 1, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0);
            p.a.qp.close();
            assertThrows(ClosedException.class, () -> p.a.qp.postSend(w));
            p.a.qp.close();
            MemoryRegion mr = p.a.pd.register(p.a.mem.asSlice(0, 64), Access.LOCAL_WRITE);
            mr.deregister();
            assertThrows(ClosedException.class, mr::deregister);
            mr.close();
            p.a.ctx.close();
            assertTrue(p.a.ctx.isClosed());
            assertThrows(ClosedException.class, () -> p.a.cq.poll(wc));
            assertThrows(ClosedException.class, () -> p.a.ctx.allocPd());
            assertThrows(ClosedException.class, () -> p.a.mr.deregister());
        }
    }

    @Test
    void createDestroyCyclesReturnToTheResourceBaseline() {
        VerbsFixture f = fixture();
        Device d = f.requester();
        ResourceUsage deviceBase = d.resources();
        try (Context c = d.open(f.options()); Arena arena = Arena.ofShared()) {
            MemorySegment m = c.allocPd().allocate(4096, 64);
            ResourceUsage base = c.resources();
            for (int k = 0; k < 1000; k++) {
                ProtectionDomain pd = c.allocPd();
                CompletionQueue cq = c.createCq(cqOptions(c, 16));
                MemoryRegion mr = pd.register(m, Access.ALL_RDMA);
                QueuePair qp = pd.createQp(QpInitAttr.of(reliable(), cq, 4));
                qp.close();
                mr.close();
                cq.close();
                pd.close();
            }
            assertEquals(base, c.resources());
        }
        for (int k = 0; k < 50; k++) {
            d.open(f.options()).close();
        }
        assertEquals(deviceBase, d.resources(), "device-wide counts back to the baseline");
    }

    @Test
    void contextCloseCascades() {
        VerbsFixture f = fixture();
        Context c = f.requester().open(f.options());
        try (Arena arena = Arena.ofShared()) {
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(cqOptions(c, 16));
            MemoryRegion mr = pd.register(arena.allocate(4096, 64), Access.LOCAL_WRITE);
            QueuePair qp = pd.createQp(QpInitAttr.of(reliable(), cq, 4));
            assertNotEquals(ResourceUsage.ZERO, c.resources());
            c.close();
            c.close();
            assertEquals(0, c.resources().qps());
            assertEquals(0, c.resources().contexts());
            assertThrows(ClosedException.class, () -> qp.postRecv(new RecvWorkRequests(1, 1)));
            assertThrows(ClosedException.class, mr::deregister);
        }
    }

    // ------------------------------------------------------------------ 64-bit atomics

    /** Skip where the device has no remote atomics (sim:efa, EFA), saying so. */
    private void assumeAtomics() {
        assumeTrue(caps().atomicCap().supported() && caps().qpTypes().contains(QpType.RC),
                fixture().name() + " has no RDMA atomics (atomic_cap " + caps().atomicCap() + ")");
    }

    /** An RC pair whose responder MR (and QP) grant REMOTE_ATOMIC. */
    private Pair atomicPair(int mrAccessB) {
        return new Pair(QpType.RC, 64, 0, 7, mrAccessB);
    }

    /** An atomic WR from a to {@code remoteAddr}, its result into a's MR at {@code localOff}. */
    private static int addAtomic(Pair p, SendWorkRequests w, long id, Opcode op, long localOff, long remoteAddr,
                                 long compareAdd, long swap) {
        int i = w.add(id, op, SendFlags.SIGNALED);
        w.sge(i, p.a.mr, localOff, 8).atomic(i, remoteAddr, p.b.rkey(), compareAdd, swap);
        return i;
    }

    /** The responder's 64-bit word at {@code off}, read as the host reads it. */
    private static long word(Responder b, long off) {
        return ByteBuffer.wrap(b.bytes(off, 8)).order(ByteOrder.nativeOrder()).getLong();
    }

    @Test
    void fetchAndAddReturnsTheOriginalWordInHostOrderAndAddsExactly() {
        assumeAtomics();
        try (Pair p = atomicPair(Access.ALL_RDMA | Access.REMOTE_ATOMIC); SendWorkRequests w = new SendWorkRequests(3, 1)) {
            p.b.fill(1024, 8, 1); // eight different bytes: a byte-swapped result or sum cannot pass
            long initial = word(p.b, 1024);
            long[] adds = {0x0102030405060708L, -1L, Long.MAX_VALUE};
            for (int k = 0; k < adds.length; k++) {
                addAtomic(p, w, 10 + k, Opcode.ATOMIC_FETCH_AND_ADD, 8L * k, p.b.mrAddress() + 1024, adds[k], 0);
            }
            post(p.a.qp, w);
            List<Wc> c = poll(p.a.cq, 3);
            long expect = initial;
            for (int k = 0; k < adds.length; k++) {
                assertEquals(10 + k, c.get(k).wrId());
                assertEquals(WcStatus.SUCCESS, c.get(k).status(), c.toString());
                assertEquals(WcOpcode.FETCH_ADD, c.get(k).opcode());
                assertEquals(expect, p.a.mem.get(JAVA_LONG_UNALIGNED, 8L * k),
                        "add " + k + " fetched the word as it was, in host order");
                expect += adds[k];
            }
            assertEquals(expect, word(p.b, 1024), "the word is the original plus every addend (wrapping)");
            assertArrayEquals(new byte[8], p.b.bytes(1016, 8), "nothing before the word changed");
            assertArrayEquals(new byte[8], p.b.bytes(1032, 8), "nothing after the word changed");
        }
    }

    @Test
    void compareAndSwapSwapsOnlyWhenTheWordMatches() {
        assumeAtomics();
        try (Pair p = atomicPair(Access.ALL_RDMA | Access.REMOTE_ATOMIC); SendWorkRequests w = new SendWorkRequests(3, 1)) {
            p.b.fill(2048, 8, 5);
            long initial = word(p.b, 2048);
            long x = 0x1122334455667788L;
            long y = 0x0badc0ffee0ddf00L;
            long target = p.b.mrAddress() + 2048;
            addAtomic(p, w, 1, Opcode.ATOMIC_CMP_AND_SWP, 0, target, initial + 1, y); // no match: unchanged
            addAtomic(p, w, 2, Opcode.ATOMIC_CMP_AND_SWP, 8, target, initial, x);     // match: swapped
            addAtomic(p, w, 3, Opcode.ATOMIC_CMP_AND_SWP, 16, target, initial, y);    // stale compare: unchanged
            post(p.a.qp, w);
            List<Wc> c = poll(p.a.cq, 3);
            for (int k = 0; k < 3; k++) {
                assertEquals(WcStatus.SUCCESS, c.get(k).status(), c.toString());
                assertEquals(WcOpcode.COMP_SWAP, c.get(k).opcode());
                assertEquals(k + 1, c.get(k).wrId());
            }
            assertEquals(initial, p.a.mem.get(JAVA_LONG_UNALIGNED, 0), "a failed CAS returns the word");
            assertEquals(initial, p.a.mem.get(JAVA_LONG_UNALIGNED, 8), "a successful CAS returns the old word");
            assertEquals(x, p.a.mem.get(JAVA_LONG_UNALIGNED, 16), "the stale CAS sees the swapped word");
            assertEquals(x, word(p.b, 2048));
        }
    }

    /**
     * T requester threads (each its own context and QP) and a thread of the responder's own process
     * (a loopback QP there; another JVM in the two-process suites) each do M fetch-and-adds of 1 on one
     * word: the word ends at exactly (T + 1) × M more, and the fetched values are each value from the
     * original to the original + (T + 1) × M - 1 exactly once (no add lost, none seen twice).
     */
    @Test
    void concurrentFetchAndAddsFromThreadsAndProcessesAreExact() throws Exception {
        assumeAtomics();
        int threads = 3;
        int adds = 1500;
        long off = 4096;
        VerbsFixture f = fixture();
        List<End> ends = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (Responder r = responder(new Responder.Spec(QpType.RC, 64, 0, Access.ALL_RDMA | Access.REMOTE_ATOMIC,
                threads + 1, 0, 0))) {
            for (int t = 0; t < threads; t++) {
                End e = new End(f.requester(), f, QpType.RC, 64, 0, Access.ALL_RDMA, Access.ALL_RDMA);
                ends.add(e);
                e.qp.readyToReceive(r.address(t));
                r.connect(t, e.qp.address(), 7, 7);
                e.qp.readyToSend(7, 7);
            }
            long initial = word(r, off);
            CyclicBarrier start = new CyclicBarrier(threads);
            List<Future<long[]>> mine = new ArrayList<>();
            r.startFetchAdds(threads, adds, off);
            for (End e : ends) {
                mine.add(pool.submit(() -> {
                    start.await();
                    return fetchAdds(e, r.mrAddress() + off, r.rkey(), adds);
                }));
            }
            long[] all = new long[(threads + 1) * adds];
            int n = 0;
            for (Future<long[]> m : mine) {
                long[] v = m.get(120, TimeUnit.SECONDS);
                System.arraycopy(v, 0, all, n, v.length);
                n += v.length;
            }
            long[] theirs = r.joinFetchAdds();
            assertEquals(adds, theirs.length);
            System.arraycopy(theirs, 0, all, n, adds);
            Arrays.sort(all);
            for (int i = 0; i < all.length; i++) {
                assertEquals(initial + i, all[i], "fetched value " + i + " of " + all.length);
            }
            assertEquals(initial + all.length, word(r, off), "(T + 1) x M adds of 1, none lost");
        } finally {
            pool.shutdownNow();
            ends.forEach(End::close);
        }
    }

    /** {@code n} fetch-and-adds of 1 on the word at {@code raddr} through e, 16 in flight; the fetched values. */
    private static long[] fetchAdds(End e, long raddr, int rkey, int n) {
        int window = 16;
        long[] out = new long[n];
        try (SendWorkRequests w = new SendWorkRequests(window, 1)) {
            for (int done = 0; done < n; ) {
                int k = Math.min(window, n - done);
                w.clear();
                for (int j = 0; j < k; j++) {
                    int i = w.add(done + j, Opcode.ATOMIC_FETCH_AND_ADD, SendFlags.SIGNALED);
                    w.sge(i, e.mr, 8L * j, 8).atomic(i, raddr, rkey, 1, 0);
                }
                post(e.qp, w);
                for (Wc c : poll(e.cq, k)) {
                    assertEquals(WcStatus.SUCCESS, c.status(), c.toString());
                    assertEquals(WcOpcode.FETCH_ADD, c.opcode());
                }
                for (int j = 0; j < k; j++) {
                    out[done + j] = e.mem.get(JAVA_LONG_UNALIGNED, 8L * j);
                }
                done += k;
            }
        }
        return out;
    }

    @Test
    void atomicOnAMisalignedWordIsRemInvReqErrAndChangesNothing() {
        assumeAtomics();
        try (Pair p = atomicPair(Access.ALL_RDMA | Access.REMOTE_ATOMIC); SendWorkRequests w = new SendWorkRequests(2, 1)) {
            addAtomic(p, w, 1, Opcode.ATOMIC_FETCH_AND_ADD, 0, p.b.mrAddress() + 1028, 1, 0);
            addAtomic(p, w, 2, Opcode.ATOMIC_FETCH_AND_ADD, 8, p.b.mrAddress() + 1032, 1, 0);
            int rc = p.a.qp.postSend(w);
            if (rc == Errno.EINVAL && fixture().requester().name().startsWith("rxe")) {
                // rxe's provider checks the alignment when posting (mlx5 and the sim let the responder refuse it).
                assertEquals(0, w.badIndex(), "the misaligned request is the one refused");
                assertArrayEquals(new byte[16], p.b.bytes(1024, 16), "target memory unchanged");
                return;
            }
            assertEquals(0, rc, "post");
            List<Wc> c = poll(p.a.cq, 2);
            assertEquals(WcStatus.REM_INV_REQ_ERR, c.get(0).status(), c.toString());
            assertEquals(1, c.get(0).wrId());
            assertEquals(WcStatus.WR_FLUSH_ERR, c.get(1).status(), "the QP is in ERR: the next WR flushes");
            assertEquals(QpState.ERR, p.a.qp.state());
            assertArrayEquals(new byte[16], p.b.bytes(1024, 16), "target memory unchanged");
        }
    }

    @Test
    void atomicPastTheMrOrWithoutRemoteAtomicIsRemAccessErr() {
        assumeAtomics();
        try (Pair p = atomicPair(Access.ALL_RDMA | Access.REMOTE_ATOMIC); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            addAtomic(p, w, 1, Opcode.ATOMIC_FETCH_AND_ADD, 0, p.b.mrAddress() + MEM, 1, 0); // the word after the MR
            post(p.a.qp, w);
            assertEquals(WcStatus.REM_ACCESS_ERR, poll(p.a.cq, 1).get(0).status());
        }
        try (Pair p = atomicPair(Access.ALL_RDMA); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            addAtomic(p, w, 1, Opcode.ATOMIC_CMP_AND_SWP, 0, p.b.mrAddress() + 64, 0, -1L); // MR lacks REMOTE_ATOMIC
            post(p.a.qp, w);
            assertEquals(WcStatus.REM_ACCESS_ERR, poll(p.a.cq, 1).get(0).status());
            assertArrayEquals(new byte[8], p.b.bytes(64, 8), "the word was not swapped");
        }
    }

    @Test
    void atomicResultIntoMemoryWithoutLocalWriteIsLocProtErr() {
        assumeAtomics();
        try (Pair p = atomicPair(Access.ALL_RDMA | Access.REMOTE_ATOMIC); SendWorkRequests w = new SendWorkRequests(1, 1)) {
            MemoryRegion readOnly = p.a.pd.register(p.a.mem.asSlice(4096, 4096), Access.REMOTE_READ);
            int i = w.add(1, Opcode.ATOMIC_FETCH_AND_ADD, SendFlags.SIGNALED);
            w.sge(i, readOnly, 0, 8).atomic(i, p.b.mrAddress() + 128, p.b.rkey(), 1, 0);
            post(p.a.qp, w);
            assertEquals(WcStatus.LOC_PROT_ERR, poll(p.a.cq, 1).get(0).status());
            assertArrayEquals(new byte[8], p.a.mem.asSlice(4096, 8).toArray(JAVA_BYTE), "no result written");
        }
    }

    /**
     * A device without atomics (EFA: atomic_cap NONE) refuses them as its provider does: the post is
     * EINVAL at the atomic (rdma-core's EFA post_send takes only send opcodes), and a QP or an MR
     * asking for REMOTE_ATOMIC is refused naming the device.
     */
    @Test
    void atomicsWhereTheDeviceHasNoneAreRefused() {
        assumeTrue(!caps().atomicCap().supported(), fixture().name() + " has atomics (" + caps().atomicCap() + ")");
        assertFalse(caps().supports(Opcode.ATOMIC_FETCH_AND_ADD));
        assertFalse(caps().supports(Opcode.ATOMIC_CMP_AND_SWP));
        String dev = fixture().requester().name();
        try (Pair p = pair(); SendWorkRequests w = new SendWorkRequests(2, 1)) {
            for (Opcode op : List.of(Opcode.ATOMIC_FETCH_AND_ADD, Opcode.ATOMIC_CMP_AND_SWP)) {
                w.clear();
                int i = w.add(1, op, SendFlags.SIGNALED);
                w.sge(i, p.a.mr, 0, 8).atomic(i, p.b.mrAddress(), p.b.rkey(), 1, 2);
                if (p.type != QpType.RC) {
                    w.srdDestination(i, p.a.ah.handle(), p.b.qpNum(), QueuePair.QKEY);
                }
                assertEquals(Errno.EINVAL, p.a.qp.postSend(w), op + " on " + dev);
                assertEquals(0, w.badIndex());
            }
            assertTrue(drain(p.a.cq).isEmpty(), "nothing was posted");
            QueuePair q = p.a.pd.createQp(QpInitAttr.of(p.type, p.a.cq, 4));
            VerbsException qe = assertThrows(VerbsException.class, () -> q.init(Access.ALL_RDMA | Access.REMOTE_ATOMIC));
            assertTrue(qe.getMessage().contains(dev), qe.getMessage());
            assertEquals(Errno.EOPNOTSUPP, qe.errno());
            q.close();
            VerbsException me = assertThrows(VerbsException.class,
                    () -> p.a.pd.register(p.a.mem.asSlice(8192, 4096), Access.LOCAL_WRITE | Access.REMOTE_ATOMIC));
            assertTrue(me.getMessage().contains(dev), me.getMessage());
            assertEquals(Errno.EOPNOTSUPP, me.errno());
        }
    }
}
