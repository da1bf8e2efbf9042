package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.TdSharing;
import dev.scalep.verbs.ThreadDomain;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The UAR page effect the simulator models, shown by counting, not by timing: two threads posting
 * single work requests (p = 1, so every post is a BlueFlame write) on two thread domains of one UAR
 * page (Shared Dynamic) go through that page's one write engine, which passes between them; on two
 * independent TDs (a page each, as Dynamic and 2xDynamic) nothing is shared and nothing serialises.
 * With a postlist (p = 2) there is no BlueFlame write, so the page plays no part.
 */
@Timeout(60)
class SimUarPageTest {
    static final int POSTS = 2000;

    @ParameterizedTest(name = "{0} TDs, postlist {1}")
    @CsvSource({"DEFAULT,1", "INDEPENDENT,1", "DEFAULT,2"})
    void blueFlameWritesSerialiseOnlyOnASharedPage(TdSharing sharing, int postlist) throws Exception {
        SimDevice dev = SimDevice.newMlx5();
        try (Context a = dev.open(); Context b = dev.open(); Arena arena = Arena.ofShared()) {
            ProtectionDomain pdA = a.allocPd();
            ProtectionDomain pdB = b.allocPd();
            MemoryRegion src = pdA.register(arena.allocate(4096, 64), Access.ALL_RDMA);
            MemoryRegion dst = pdB.register(arena.allocate(4096, 64), Access.ALL_RDMA);
            List<SimQp> qps = new ArrayList<>();
            List<CompletionQueue> cqs = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                ThreadDomain td = a.allocTd(sharing);
                CompletionQueue cq = a.createCq(256);
                QueuePair q = pdA.parentDomain(td).createQp(QpInitAttr.of(QpType.RC, cq, 64));
                QueuePair peer = pdB.createQp(QpInitAttr.of(QpType.RC, b.createCq(256), 64));
                q.connect(peer.address(), Access.ALL_RDMA, 7);
                peer.connect(q.address(), Access.ALL_RDMA, 7);
                qps.add((SimQp) q);
                cqs.add(cq);
            }
            SimUarPage p0 = qps.get(0).uuar.uarPage;
            SimUarPage p1 = qps.get(1).uuar.uarPage;
            if (sharing == TdSharing.DEFAULT) {
                assertSame(p0, p1, "two default TDs pair on one page");
            } else {
                assertNotSame(p0, p1, "independent TDs have a page each");
            }
            CyclicBarrier start = new CyclicBarrier(2);
            List<Throwable> errors = new ArrayList<>();
            Thread[] ts = new Thread[2];
            for (int t = 0; t < 2; t++) {
                QueuePair q = qps.get(t);
                CompletionQueue cq = cqs.get(t);
                long off = 64L * t;
                ts[t] = new Thread(() -> {
                    try (SendWorkRequests w = new SendWorkRequests(postlist, 1); WorkCompletions wc = new WorkCompletions(8)) {
                        start.await();
                        for (int n = 0; n < POSTS / postlist; n++) {
                            w.clear();
                            for (int k = 0; k < postlist; k++) {
                                int i = w.add(n, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
                                w.sge(i, src, off, 8).rdma(i, dst.address() + off, dst.rkey());
                            }
                            assertEquals(0, q.postSend(w));
                            for (int got = 0; got < postlist; ) {
                                int r = cq.poll(wc);
                                assertTrue(r >= 0 && (r == 0 || wc.status(0) == WcStatus.SUCCESS), "poll " + r);
                                got += r;
                            }
                        }
                    } catch (Throwable e) {
                        synchronized (errors) {
                            errors.add(e);
                        }
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join(30_000);
                assertFalse(t.isAlive(), "a poster is stuck");
            }
            assertTrue(errors.isEmpty(), errors.toString());
            String counts = "page writes " + p0.writes() + "/" + p1.writes() + ", handovers " + p0.handovers() + "/"
                    + p1.handovers() + ", waited " + p0.waited() + "/" + p1.waited();
            if (postlist > 1) {
                assertEquals(0, p0.writes() + p1.writes(), "a postlist rings the doorbell only: " + counts);
            } else if (sharing == TdSharing.DEFAULT) {
                assertEquals(2L * POSTS, p0.writes(), "both threads' writes go through the one page: " + counts);
                assertTrue(p0.handovers() >= 1, "the page's engine passed between the two writers: " + counts);
            } else {
                assertEquals(POSTS, p0.writes(), counts);
                assertEquals(POSTS, p1.writes(), counts);
                assertEquals(0, p0.handovers() + p1.handovers() + p0.waited() + p1.waited(),
                        "nothing shared, nothing serialised: " + counts);
            }
        }
    }
}
