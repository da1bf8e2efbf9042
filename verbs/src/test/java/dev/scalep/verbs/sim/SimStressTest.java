package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Threads posting concurrently through a shared medium uUAR (its lock) and to one shared QP (the QP
 * lock, a shared multi-threaded CQ): no WR lost or duplicated. Bounded by work ({@value #ROUNDS} posts
 * per thread), not by time; every thread must have ended before anything is asserted.
 */
@Timeout(30)
class SimStressTest {
    static final int THREADS = 4;
    static final int ROUNDS = 4000;

    @Test
    void sharedUuarAndSharedQpLoseNothing() throws Exception {
        SimDevice dev = SimDevice.newMlx5();
        // 2 uUARs, none low latency: uUAR 0 high latency, uUAR 1 the only medium one → all QPs share it
        try (Context c = dev.open(ContextOptions.DEFAULTS.withUuars(2, 0)); Arena arena = Arena.ofShared()) {
            ProtectionDomain pd = c.allocPd();
            MemoryRegion mr = pd.register(arena.allocate(1 << 16, 64), Access.ALL_RDMA);
            CompletionQueue sharedCq = c.createCq(256);
            QueuePair shared = pd.createQp(QpInitAttr.of(QpType.RC, sharedCq, 32));
            shared.connect(shared.address(), Access.ALL_RDMA, 7);
            List<QueuePair> own = new ArrayList<>();
            List<CompletionQueue> ownCq = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                CompletionQueue cq = c.createCq(64);
                QueuePair q = pd.createQp(QpInitAttr.of(QpType.RC, cq, 16));
                q.connect(q.address(), Access.ALL_RDMA, 7);
                assertEquals(1, q.uuar());
                own.add(q);
                ownCq.add(cq);
            }
            SimUuar medium = ((SimQp) own.get(0)).uuar;
            assertEquals(SimUuar.Kind.MEDIUM, medium.kind);
            long ringsBefore = medium.rings();
            ConcurrentHashMap<Long, Boolean> seen = new ConcurrentHashMap<>();
            AtomicLong posted = new AtomicLong();
            AtomicLong sharedPosted = new AtomicLong();
            AtomicLong sharedReaped = new AtomicLong();
            List<Throwable> errors = new ArrayList<>();
            Thread[] ts = new Thread[THREADS];
            for (int t = 0; t < THREADS; t++) {
                final int id = t;
                ts[t] = new Thread(() -> {
                    try (SendWorkRequests w = new SendWorkRequests(4, 1); WorkCompletions wc = new WorkCompletions(16)) {
                        long n = 0;
                        while (n < ROUNDS) {
                            QueuePair q = (n & 1) == 0 ? own.get(id) : shared;
                            CompletionQueue cq = (n & 1) == 0 ? ownCq.get(id) : sharedCq;
                            int list = (int) (n % 3) + 1; // 1 (BlueFlame) .. 3 (postlist)
                            w.clear();
                            for (int k = 0; k < list; k++) {
                                long wrId = ((long) id << 40) | (n << 2) | k;
                                int i = w.add(wrId, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
                                w.sge(i, mr, id * 64L, 8).rdma(i, mr.address() + 4096 + id * 64L, mr.rkey());
                            }
                            int rc = q.postSend(w);
                            if (rc != 0) {
                                throw new AssertionError("post failed rc=" + rc);
                            }
                            posted.addAndGet(list);
                            if (q == shared) {
                                sharedPosted.addAndGet(list);
                            }
                            int got = 0;
                            while (q != shared && got < list) {
                                int r = cq.poll(wc);
                                got += record(wc, r, seen);
                            }
                            if (q == shared) {
                                int r = cq.poll(wc);
                                sharedReaped.addAndGet(record(wc, r, seen));
                            }
                            n++;
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
                t.join(20_000);
                assertFalse(t.isAlive(), t.getName() + " still running after 20 s: a post or poll is stuck");
            }
            assertTrue(errors.isEmpty(), errors.toString());
            try (WorkCompletions wc = new WorkCompletions(64)) {
                while (sharedReaped.get() < sharedPosted.get()) {
                    int r = sharedCq.poll(wc);
                    assertTrue(r > 0, "missing shared-QP completions");
                    sharedReaped.addAndGet(record(wc, r, seen));
                }
                assertEquals(0, sharedCq.poll(wc));
            }
            assertEquals(posted.get(), seen.size(), "every WR completed exactly once");
            assertEquals(1, shared.uuar());
            long doorbells = shared.counters().doorbells();
            long wqes = shared.counters().wqes();
            for (QueuePair q : own) {
                doorbells += q.counters().doorbells();
                wqes += q.counters().wqes();
            }
            assertEquals(posted.get(), wqes);
            assertEquals(doorbells, medium.rings() - ringsBefore, "every doorbell on the shared uUAR rang under its lock");
            // ROUNDS posts per thread of 1, 2, 3 WRs in turn
            long perThread = 0;
            for (int n = 0; n < ROUNDS; n++) {
                perThread += n % 3 + 1;
            }
            assertEquals(THREADS * perThread, posted.get(), "every thread did all its work");
        }
    }

    private static int record(WorkCompletions wc, int r, ConcurrentHashMap<Long, Boolean> seen) {
        if (r < 0) {
            throw new AssertionError("poll error " + r);
        }
        for (int i = 0; i < r; i++) {
            if (wc.status(i) != WcStatus.SUCCESS) {
                throw new AssertionError("status " + WcStatus.name(wc.status(i)));
            }
            assertNull(seen.put(wc.wrId(i), Boolean.TRUE), "duplicate completion");
        }
        return r;
    }
}
