package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.TdSharing;
import dev.scalep.verbs.UnsupportedFeatureException;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** EFA personality: SRD out-of-order delivery (seeded, exactly once), missing features. */
@Timeout(30)
class SimEfaTest {
    static final int N = 256;

    /** Two SRD endpoints on one private sim:efa device; returns completion order of sends and receives. */
    static List<List<Long>> run(SimDevice dev, Opcode op) {
        try (Context ca = dev.open(); Context cb = dev.open(); Arena arena = Arena.ofShared();
             SendWorkRequests w = new SendWorkRequests(16, 1); RecvWorkRequests r = new RecvWorkRequests(N, 1)) {
            ProtectionDomain pa = ca.allocPd();
            ProtectionDomain pb = cb.allocPd();
            CompletionQueue qa = ca.createCq(new CqOptions(2 * N, false, true, false));
            CompletionQueue qb = cb.createCq(new CqOptions(2 * N, false, true, false));
            QueuePair a = pa.createQp(QpInitAttr.of(QpType.SRD, qa, N));
            QueuePair b = pb.createQp(QpInitAttr.of(QpType.SRD, qb, N));
            a.connect(null, Access.ALL_RDMA, 7);
            b.connect(null, Access.ALL_RDMA, 7);
            AddressHandle ah = pa.createAh(b.address());
            MemorySegment ma = arena.allocate(8L * N, 64);
            MemorySegment mb = arena.allocate(8L * N, 64);
            MemoryRegion ra = pa.register(ma, Access.ALL_RDMA);
            MemoryRegion rb = pb.register(mb, Access.ALL_RDMA);
            for (int k = 0; k < N; k++) {
                ma.setAtIndex(JAVA_LONG, k, 1000 + k);
                r.sge(r.add(k), rb, 8L * k, 8);
            }
            assertEquals(0, b.postRecv(r));
            for (int k = 0; k < N; k += 16) {
                w.clear();
                for (int j = k; j < k + 16; j++) {
                    int i = w.add(j, op, SendFlags.SIGNALED);
                    w.sge(i, ra, 8L * j, 8);
                    if (op == Opcode.RDMA_WRITE_WITH_IMM) {
                        w.srdRdma(i, ah, b.qpNum(), 1, rb.address() + 8L * j, rb.rkey()).imm(i, j);
                    } else {
                        w.ud(i, ah, b.qpNum(), 1);
                    }
                }
                assertEquals(0, a.postSend(w));
            }
            List<Long> sends = reap(qa, N);
            List<Long> recvs = reap(qb, N);
            if (op == Opcode.SEND) {
                // receives are consumed in ring order: which send reached receive r shows the arrival order
                recvs.replaceAll(rid -> mb.getAtIndex(JAVA_LONG, rid) - 1000);
            }
            for (int k = 0; k < N; k++) {
                long v = op == Opcode.RDMA_WRITE_WITH_IMM ? mb.getAtIndex(JAVA_LONG, k) : -1;
                if (op == Opcode.RDMA_WRITE_WITH_IMM) {
                    assertEquals(1000 + k, v, "every write applied at its address");
                }
            }
            return List.of(sends, recvs);
        }
    }

    static List<Long> reap(CompletionQueue cq, int n) {
        List<Long> ids = new ArrayList<>();
        try (WorkCompletions wc = new WorkCompletions(32)) {
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (ids.size() < n && System.nanoTime() < deadline) {
                int k = cq.poll(wc);
                assertTrue(k >= 0);
                for (int i = 0; i < k; i++) {
                    assertEquals(WcStatus.SUCCESS, wc.status(i));
                    ids.add(wc.opcode(i) >= 128 && wc.hasImm(i) ? wc.imm(i) : wc.wrId(i));
                }
            }
            assertEquals(0, cq.poll(wc), "no extra completions");
        }
        return ids;
    }

    static void assertPermutation(List<Long> ids) {
        assertEquals(N, ids.size());
        Set<Long> s = new HashSet<>(ids);
        assertEquals(N, s.size(), "every WR completes exactly once");
        for (long k = 0; k < N; k++) {
            assertTrue(s.contains(k));
        }
    }

    static boolean inOrder(List<Long> ids) {
        for (int i = 0; i < ids.size(); i++) {
            if (ids.get(i) != i) {
                return false;
            }
        }
        return true;
    }

    @Test
    void completionsArriveOutOfOrderExactlyOnce() {
        for (Opcode op : new Opcode[]{Opcode.SEND, Opcode.RDMA_WRITE_WITH_IMM}) {
            List<List<Long>> o = run(SimDevice.efa(42, 8), op);
            assertPermutation(o.get(0));
            assertPermutation(o.get(1));
            assertTrue(!inOrder(o.get(0)) && !inOrder(o.get(1)), op + ": out of order: " + o);
        }
    }

    @Test
    void orderIsReproducibleForASeedAndDiffersAcrossSeeds() {
        List<List<Long>> x = run(SimDevice.efa(7, 8), Opcode.SEND);
        List<List<Long>> y = run(SimDevice.efa(7, 8), Opcode.SEND);
        List<List<Long>> z = run(SimDevice.efa(8, 8), Opcode.SEND);
        assertEquals(x, y);
        assertNotEquals(x, z);
        for (long seed = 100; seed < 110; seed++) {
            List<List<Long>> s = run(SimDevice.efa(seed, 1 + (int) (seed % 16)), Opcode.RDMA_WRITE_WITH_IMM);
            assertPermutation(s.get(0));
            assertPermutation(s.get(1));
        }
    }

    @Test
    void windowOfOneIsInOrder() {
        List<List<Long>> o = run(SimDevice.efa(3, 1), Opcode.SEND);
        assertTrue(inOrder(o.get(0)) && inOrder(o.get(1)));
    }

    @Test
    void missingFeaturesAreReported() {
        SimDevice d = SimDevice.efa(1, 4, false, false);
        try (Context c = d.open()) {
            UnsupportedFeatureException td = assertThrows(UnsupportedFeatureException.class,
                    () -> c.allocTd(TdSharing.DEFAULT));
            assertEquals("thread domains", td.feature());
            assertTrue(td.getMessage().contains("sim:efa"));
            assertThrows(UnsupportedFeatureException.class, () -> c.createCq(CqOptions.of(16)));
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(CqOptions.of(64).withExtended(true));
            assertThrows(UnsupportedFeatureException.class, () -> pd.createQp(QpInitAttr.of(QpType.RC, cq, 4)));
            assertThrows(UnsupportedFeatureException.class, () -> pd.createSrq(4, 1));
            QueuePair q = pd.createQp(QpInitAttr.of(QpType.SRD, cq, 4));
            q.connect(null, Access.ALL_RDMA, 7);
            assertEquals(-1, q.uuar());
            try (Arena arena = Arena.ofShared(); SendWorkRequests w = new SendWorkRequests(1, 1)) {
                MemoryRegion mr = pd.register(arena.allocate(64), Access.ALL_RDMA);
                AddressHandle ah = pd.createAh(q.address());
                int i = w.add(1, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
                w.sge(i, mr, 0, 8).srdRdma(i, ah, q.qpNum(), 1, mr.address(), mr.rkey());
                assertEquals(Errno.EINVAL, q.postSend(w), "RDMA write on a device without it (v44)");
                assertEquals(0, w.badIndex());
                assertEquals(0, c.resources().uarPages());
            }
        }
    }
}
