package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.CqOptions;
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

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Test helper: two contexts on one sim device with one connected RC QP each. */
final class SimPair implements AutoCloseable {
    final Context ctxA;
    final Context ctxB;
    final ProtectionDomain pdA;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final QueuePair a;
    final QueuePair b;
    final Arena arena = Arena.ofShared();
    final MemorySegment memA;
    final MemorySegment memB;
    final MemoryRegion mrA;
    final MemoryRegion mrB;

    private SimPair(SimDevice dev, ContextOptions o, int depth) {
        ctxA = dev.open(o);
        ctxB = dev.open(o);
        pdA = ctxA.allocPd();
        ProtectionDomain pdB = ctxB.allocPd();
        cqA = ctxA.createCq(CqOptions.of(depth * 2));
        cqB = ctxB.createCq(CqOptions.of(depth * 2));
        a = pdA.createQp(QpInitAttr.of(QpType.RC, cqA, depth));
        b = pdB.createQp(QpInitAttr.of(QpType.RC, cqB, depth));
        memA = arena.allocate(65536, 64);
        memB = arena.allocate(65536, 64);
        mrA = pdA.register(memA, Access.ALL_RDMA);
        mrB = pdB.register(memB, Access.ALL_RDMA);
        a.connect(b.address(), Access.ALL_RDMA, 7);
        b.connect(a.address(), Access.ALL_RDMA, 7);
    }

    static SimPair rc(SimDevice dev, ContextOptions o, int depth) {
        return new SimPair(dev, o, depth);
    }

    /** Post {@code n} signaled 8-byte writes a → b in one list and reap them. */
    void write(long firstId, int n) {
        try (SendWorkRequests w = new SendWorkRequests(n, 1); WorkCompletions wc = new WorkCompletions(n)) {
            for (int k = 0; k < n; k++) {
                int i = w.add(firstId + k, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
                w.sge(i, mrA, 8L * k, 8).rdma(i, mrB.address() + 8L * k, mrB.rkey());
            }
            assertEquals(0, a.postSend(w));
            int got = 0;
            while (got < n) {
                int r = cqA.poll(wc, n - got);
                assertTrue(r >= 0);
                for (int i = 0; i < r; i++) {
                    assertEquals(WcStatus.SUCCESS, wc.status(i));
                }
                got += r;
            }
        }
    }

    @Override
    public void close() {
        ctxA.close();
        ctxB.close();
        arena.close();
    }
}
