package dev.scalep.verbs.sim;

import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.TdSharing;
import dev.scalep.verbs.ThreadDomain;
import dev.scalep.verbs.VerbsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The mlx5 UAR/uUAR and thread-domain model of the research, on a private sim:mlx5 device. */
@Timeout(30)
class SimMlx5AllocationTest {
    private final SimDevice dev = SimDevice.newMlx5();

    private static QueuePair qp(ProtectionDomain pd, CompletionQueue cq) {
        return pd.createQp(QpInitAttr.of(QpType.RC, cq, 4));
    }

    @Test
    void classicUuarClassesAndAssignmentOrder() {
        try (Context c = dev.open()) {
            SimContext sc = (SimContext) c;
            List<SimUuar> u = sc.staticUuars();
            assertEquals(16, u.size());
            assertEquals(SimUuar.Kind.HIGH_LATENCY, u.get(0).kind);
            assertNull(u.get(0).lock);
            for (int i = 1; i <= 11; i++) {
                assertEquals(SimUuar.Kind.MEDIUM, u.get(i).kind);
                assertNotNull(u.get(i).lock);
            }
            for (int i = 12; i < 16; i++) {
                assertEquals(SimUuar.Kind.LOW_LATENCY, u.get(i).kind);
                assertNull(u.get(i).lock);
                assertEquals(i / 2, u.get(i).page);
            }
            assertEquals(8, c.resources().uarPages());
            assertEquals(16, c.resources().uuars());
            assertTrue(c.uarDescription().startsWith("classic: 8 pages, 16 uUARs (4 low-latency, 11 medium"),
                    c.uarDescription());
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(4096);
            List<Integer> order = new ArrayList<>();
            List<QueuePair> qps = new ArrayList<>();
            for (int k = 0; k < 26; k++) {
                QueuePair q = qp(pd, cq);
                qps.add(q);
                order.add(q.uuar());
                assertFalse(q.lockFree());
            }
            // low latency first (one QP each), then medium round robin, never uUAR 0
            assertEquals(List.of(12, 13, 14, 15, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11),
                    order);
            assertEquals(15, c.resources().uuarsInUse());
            assertEquals(8, c.resources().uarPagesInUse(), "uUARs 1..15 touch every static page");
            // destroying a QP on uUAR 5 makes it the least used: the next QP goes there
            qps.get(8).close();
            assertEquals(5, qp(pd, cq).uuar());
            // a freed low-latency uUAR is taken first again
            qps.get(1).close();
            assertEquals(13, qp(pd, cq).uuar());
        }
    }

    @Test
    void uuarZeroOnlyWithoutMedium() {
        try (Context c = dev.open(ContextOptions.DEFAULTS.withUuars(4, 3))) {
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(256);
            List<Integer> order = new ArrayList<>();
            for (int k = 0; k < 5; k++) {
                order.add(qp(pd, cq).uuar());
            }
            assertEquals(List.of(1, 2, 3, 0, 0), order);
        }
    }

    @Test
    void threadDomainsPairOnPagesAndDropLocks() {
        try (Context c = dev.open()) {
            ResourceUsage base = c.resources();
            ThreadDomain t0 = c.allocTd(TdSharing.DEFAULT);
            ThreadDomain t1 = c.allocTd(TdSharing.DEFAULT);
            ThreadDomain t2 = c.allocTd(TdSharing.DEFAULT);
            ThreadDomain ind = c.allocTd(TdSharing.INDEPENDENT);
            ThreadDomain t3 = c.allocTd(TdSharing.DEFAULT);
            assertEquals(8, t0.uarPage(), "first dynamic page follows the 8 static ones");
            assertEquals(t0.uarPage(), t1.uarPage(), "odd TD shares the even TD's page");
            assertEquals(16, t0.uuar());
            assertEquals(17, t1.uuar());
            assertEquals(9, t2.uarPage());
            assertEquals(10, ind.uarPage(), "INDEPENDENT opens its own page");
            assertEquals(t2.uarPage(), t3.uarPage(), "a DEFAULT TD never joins an INDEPENDENT page");
            ResourceUsage d = c.resources().minus(base);
            assertEquals(3, d.uarPages());
            assertEquals(6, d.uuars(), "both data-path uUARs of every page, used or idle");
            assertEquals(5, d.tds());

            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(256);
            ProtectionDomain parent = pd.parentDomain(t0);
            QueuePair bound = qp(parent, cq);
            QueuePair plain = qp(pd, cq);
            assertTrue(bound.lockFree());
            assertEquals(t0.uuar(), bound.uuar());
            assertFalse(plain.lockFree());
            assertEquals(12, plain.uuar());
            SimQp sb = (SimQp) bound;
            assertNull(sb.uuar.lock, "TD register rings without the uUAR lock");

            VerbsException busy = assertThrows(VerbsException.class, t0::close);
            assertEquals(Errno.EBUSY, busy.errno());
            bound.close();
            parent.close();
            t0.close();
            t1.close();
            assertEquals(2, c.resources().minus(base).uarPages(), "page freed with its last TD");
            ThreadDomain again = c.allocTd(TdSharing.DEFAULT);
            assertEquals(8, again.uarPage(), "lowest free page index is reused");
        }
    }

    /**
     * The research's rule, written from the paper: n default TDs pair up on ceil(n/2) pages, n
     * independent TDs take n pages; every page counts both data-path uUARs; in use are the pages and
     * uUARs that a QP rings.
     */
    @Test
    void researchCountsEveryPageWithBothUuars() {
        for (TdSharing sharing : TdSharing.values()) {
            for (int n = 1; n <= 7; n++) {
                try (Context c = dev.open()) {
                    ProtectionDomain pd = c.allocPd();
                    CompletionQueue cq = c.createCq(256);
                    ResourceUsage base = c.resources();
                    List<ThreadDomain> tds = new ArrayList<>();
                    for (int k = 0; k < n; k++) {
                        tds.add(c.allocTd(sharing));
                    }
                    long pages = sharing == TdSharing.DEFAULT ? (n + 1) / 2 : n;
                    ResourceUsage d = c.resources().minus(base);
                    assertEquals(pages, d.uarPages(), sharing + " x" + n);
                    assertEquals(2 * pages, d.uuars(), sharing + " x" + n);
                    assertEquals(0, d.uuarsInUse(), "no QP yet");
                    for (int k = 0; k < n; k += 2) { // QPs on every other TD, as 2xDynamic's threads
                        qp(pd.parentDomain(tds.get(k)), cq);
                    }
                    d = c.resources().minus(base);
                    assertEquals((n + 1) / 2, d.uuarsInUse(), sharing + " x" + n);
                    assertEquals((n + 1) / 2, d.uarPagesInUse(), sharing + " x" + n + ": TDs 0, 2, 4.. are on distinct pages");
                    assertEquals(2 * pages, d.uuars(), "allocated does not change with use");
                }
            }
        }
        assertEquals(ResourceUsage.ZERO, dev.resources());
    }

    @Test
    void dynamicUarLimitPerContext() {
        try (Context c = dev.open()) {
            for (int k = 0; k < 512; k++) {
                c.allocTd(TdSharing.INDEPENDENT);
            }
            VerbsException e = assertThrows(VerbsException.class, () -> c.allocTd(TdSharing.INDEPENDENT));
            assertEquals(Errno.ENOMEM, e.errno());
            assertTrue(e.getMessage().contains("512"));
            assertEquals(8 + 512, c.resources().uarPages());
        }
        assertEquals(0, dev.resources().uarPages());
    }

    @Test
    void dynamicModeAllocatesOnDemand() {
        try (Context c = dev.open(ContextOptions.DEFAULTS.withUarMode(ContextOptions.UarMode.DYNAMIC))) {
            assertEquals(0, c.resources().uarPages());
            assertEquals(0, c.resources().uuars());
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(4096);
            assertEquals(1, c.resources().uarPages(), "one page for CQ doorbells");
            List<QueuePair> qps = new ArrayList<>();
            for (int k = 0; k < 20; k++) {
                qps.add(qp(pd, cq));
            }
            for (int k = 0; k < 4; k++) {
                assertNull(((SimQp) qps.get(k)).uuar.lock, "dedicated registers are lock-free");
                assertEquals(SimUuar.Kind.DYNAMIC_DEDICATED, ((SimQp) qps.get(k)).uuar.kind);
            }
            for (int k = 4; k < 16; k++) {
                assertNotNull(((SimQp) qps.get(k)).uuar.lock);
            }
            assertEquals(1 + 2 + 6, c.resources().uarPages());
            assertEquals(16, c.resources().uuars());
            // QPs 17..20 reuse the least-used shared registers, in index order
            assertEquals(qps.get(4).uuar(), qps.get(16).uuar());
            assertEquals(qps.get(5).uuar(), qps.get(17).uuar());
            qps.get(0).close();
            assertEquals(16, c.resources().uuars(), "the page of a freed dedicated register stays for its partner");
            qps.get(1).close();
            assertEquals(1 + 1 + 6, c.resources().uarPages(), "a page is unmapped with its last register");
            assertEquals(14, c.resources().uuars());
            assertEquals(SimUuar.Kind.DYNAMIC_DEDICATED, ((SimQp) qp(pd, cq)).uuar.kind);
            assertTrue(c.uarDescription().startsWith("dynamic:"), c.uarDescription());
        }
        assertEquals(ResourceUsage.ZERO, dev.resources());
    }

    @Test
    void resourceAccountingUsesResearchSizes() {
        try (Context c = dev.open()) {
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(1023);
            QueuePair q = pd.createQp(QpInitAttr.of(QpType.RC, cq, 128).withDepths(256, 256));
            ResourceUsage r = c.resources();
            assertEquals(1023, cq.depth());
            assertEquals(1, r.contexts());
            assertEquals(1, r.pds());
            assertEquals(1, r.qps());
            assertEquals(1, r.cqs());
            assertEquals(256 * 1024 + 144 + 80 * 1024 + 36 * 1023, r.memoryBytes());
            assertEquals(1, r.uuarsInUse());
            assertEquals(r, dev.resources());
            q.close();
        }
        assertEquals(ResourceUsage.ZERO, dev.resources());
        assertEquals(1, dev.peakResources().qps());
        assertEquals(1, dev.peakResources().contexts());
    }

    @Test
    void blueFlameOnlyForSingleWqePostsOnCapableRegisters() throws Exception {
        try (SimPair p = SimPair.rc(dev, ContextOptions.DEFAULTS, 64)) {
            p.write(1, 1);
            assertEquals(1, p.a.counters().blueFlameWrites());
            p.write(2, 8);
            assertEquals(1, p.a.counters().blueFlameWrites(), "no BlueFlame with a postlist");
            assertEquals(2, p.a.counters().doorbells());
            assertEquals(9, p.a.counters().wqes());
        }
        try (SimPair p = SimPair.rc(dev, ContextOptions.DEFAULTS.withBlueFlame(false), 64)) {
            assertFalse(p.ctxA.capabilities().blueFlame());
            p.write(1, 1);
            assertEquals(0, p.a.counters().blueFlameWrites());
            assertEquals(1, p.a.counters().doorbells());
        }
    }
}
