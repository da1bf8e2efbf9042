package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
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

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The post-time write path ({@link DirectWrites}) where a list leaves it or changes what it
 * writes through, towards a QP of another process (two device objects of one job) and of this one:
 * a list whose writes name two local MRs and two target MRs, has signaled WRs in the middle and an
 * RDMA read (which the ordinary path takes, with every WR after it) completes whole and in order;
 * on a QP created with sig_all every write of a list completes; once a completion overran the CQ
 * (which fails the QP), the writes after it in the list are not executed.
 */
@Timeout(60)
class DirectWritesTest {
    /** One side: context, PD, CQ, RC QP (sig_all as asked), 64 KiB of PD memory in two MRs (the second over its upper half). */
    private static final class Side implements AutoCloseable {
        final Context ctx;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemorySegment mem;
        final MemoryRegion mr;
        final MemoryRegion upper;

        Side(SimDevice d, boolean sigAll, int cqDepth) {
            ctx = d.open();
            ProtectionDomain pd = ctx.allocPd();
            cq = ctx.createCq(CqOptions.of(cqDepth));
            qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq, null, 64, 64, 1, 1, 0, sigAll));
            mem = pd.allocate(65536, 4096);
            mr = pd.register(mem, Access.ALL_RDMA);
            upper = pd.register(mem.asSlice(32768), Access.ALL_RDMA);
        }

        /** Completions until {@code n} came (bounded wait): wr_id and status. */
        List<long[]> poll(int n) {
            List<long[]> out = new ArrayList<>();
            try (WorkCompletions wc = new WorkCompletions(16)) {
                long deadline = System.nanoTime() + 20_000_000_000L;
                while (out.size() < n && System.nanoTime() < deadline) {
                    int k = cq.poll(wc, 16);
                    for (int i = 0; i < k; i++) {
                        out.add(new long[] {wc.wrId(i), wc.status(i)});
                    }
                }
            }
            return out;
        }

        @Override
        public void close() {
            ctx.close();
        }
    }

    private static String job(String what) {
        return "test-direct-" + what + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    }

    /** A test body for a connected requester a and responder b; cross says whether they are two processes. */
    private interface Body {
        void run(boolean cross, Side a, Side b, SendWorkRequests w);
    }

    /**
     * Run {@code body} with a requester in another process (another device object of the job) and
     * in the same one, each with a list of {@code listSize} WRs; the requester's QP is sig_all as
     * asked and its CQ {@code cqDepth} deep (allowed below what the QP could need).
     */
    private static void bothPlaces(String what, boolean sigAll, int cqDepth, int listSize, Body body) {
        for (boolean cross : new boolean[] {true, false}) {
            String job = job(what + cross);
            SimDevice d = SimDevice.mlx5(job);
            Side made;
            System.setProperty("scalep.sim.allowCqOvercommit", "true");
            try {
                made = new Side(cross ? SimDevice.mlx5(job) : d, sigAll, cqDepth);
            } finally {
                System.clearProperty("scalep.sim.allowCqOvercommit");
            }
            try (Side a = made; Side b = new Side(d, false, 256); SendWorkRequests w = new SendWorkRequests(listSize, 1)) {
                a.qp.connect(b.qp.address(), Access.ALL_RDMA, 7);
                b.qp.connect(a.qp.address(), Access.ALL_RDMA, 7);
                body.run(cross, a, b, w);
            }
        }
    }

    private static void write(SendWorkRequests w, long id, int flags, MemoryRegion from, long off, MemoryRegion to,
                              long toOff) {
        int i = w.add(id, Opcode.RDMA_WRITE, flags);
        w.sge(i, from, off, 8).rdma(i, to.address() + toOff, to.rkey());
    }

    @Test
    void aListChangingMrsWithSignaledWrsInsideAndAReadCompletesWholeInOrder() {
        bothPlaces("mixed", false, 256, 8, (cross, a, b, w) -> {
            for (int k = 0; k < 8; k++) {
                a.mem.set(JAVA_LONG_UNALIGNED, 8L * k, 0x1000L + k);
                a.mem.set(JAVA_LONG_UNALIGNED, 32768 + 8L * k, 0x2000L + k);
            }
            b.mem.set(JAVA_LONG_UNALIGNED, 1024, 0x3333L);
            long wqes = a.qp.counters().wqes();
            long doorbells = a.qp.counters().doorbells();
            write(w, 0, 0, a.mr, 0, b.mr, 0);
            write(w, 1, 0, a.upper, 8, b.mr, 8);                     // another local MR
            write(w, 2, SendFlags.SIGNALED, a.mr, 16, b.upper, 16);   // another target MR, signaled
            write(w, 3, 0, a.mr, 24, b.mr, 24);
            write(w, 4, SendFlags.SIGNALED, a.upper, 32, b.upper, 32);
            write(w, 5, 0, a.mr, 40, b.mr, 40);
            int r = w.add(6, Opcode.RDMA_READ, 0);                    // the ordinary path from here on
            w.sge(r, a.mr, 2048, 8).rdma(r, b.mr.address() + 1024, b.mr.rkey());
            write(w, 7, SendFlags.SIGNALED, a.mr, 56, b.mr, 56);
            assertEquals(0, a.qp.postSend(w));
            List<long[]> c = a.poll(3);
            assertEquals(List.of(2L, 4L, 7L), c.stream().map(x -> x[0]).toList(), "cross=" + cross);
            c.forEach(x -> assertEquals(WcStatus.SUCCESS, (int) x[1], "cross=" + cross));
            assertEquals(0, a.qp.outstandingSends(), "the last CQE retired every WQE");
            assertEquals(wqes + 8, a.qp.counters().wqes());
            assertEquals(doorbells + 1, a.qp.counters().doorbells());
            long[] want = {0x1000, 0x2001, 0x1002, 0x1003, 0x2004, 0x1005, 0, 0x1007};
            for (int k = 0; k < 8; k++) {
                long got = b.mem.get(JAVA_LONG_UNALIGNED, (k == 2 || k == 4 ? 32768 : 0) + 8L * k);
                assertEquals(want[k], got, "cross=" + cross + ", WR " + k);
            }
            assertEquals(0x3333L, a.mem.get(JAVA_LONG_UNALIGNED, 2048), "the read in the middle");
        });
    }

    @Test
    void everyWriteOfAListCompletesOnASigAllQp() {
        bothPlaces("sigall", true, 256, 5, (cross, a, b, w) -> {
            for (int k = 0; k < 5; k++) {
                write(w, k, 0, a.mr, 8L * k, b.mr, 8L * k);
            }
            assertEquals(0, a.qp.postSend(w));
            List<long[]> c = a.poll(5);
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L), c.stream().map(x -> x[0]).toList(), "cross=" + cross);
            assertEquals(0, a.qp.outstandingSends());
        });
    }

    @Test
    void writesAfterACompletionThatOverranTheCqAreNotExecuted() {
        bothPlaces("overrun", false, 4, 32, (cross, a, b, w) -> {
            int depth = a.cq.depth();
            assertTrue(depth + 4 <= 32, "CQ depth " + depth);
            for (int k = 0; k < 32; k++) {
                a.mem.set(JAVA_LONG_UNALIGNED, 8L * k, 0x4000L + k);
                write(w, k, SendFlags.SIGNALED, a.mr, 8L * k, b.mr, 8L * k);
            }
            assertEquals(0, a.qp.postSend(w));
            assertEquals(QpState.ERR, a.qp.state(), "cross=" + cross);
            for (int k = 0; k <= depth; k++) { // the WR whose CQE overran the CQ executed before it
                assertEquals(0x4000L + k, b.mem.get(JAVA_LONG_UNALIGNED, 8L * k), "cross=" + cross + ", WR " + k);
            }
            for (int k = depth + 1; k < 32; k++) {
                assertEquals(0L, b.mem.get(JAVA_LONG_UNALIGNED, 8L * k), "cross=" + cross + ", WR " + k);
            }
        });
    }
}
