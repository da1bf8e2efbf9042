package dev.scalep.verbs.ibv;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.List;
import com.sun.management.ThreadMXBean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The {@code ibv} data path allocates nothing: after a warm-up, a bounded loop of RC posts (a
 * postlist of unsignaled writes ending in a signaled one, sub-chain posts, receives) and polls on
 * rxe0 → rxe1 leaves the thread's allocated-bytes counter where it was. Skipped without rxe devices.
 */
@Timeout(300)
class RxeAllocationTest {
    static final int WARMUP = 3000;
    static final int MEASURED = 2000;

    @Test
    void postAndPollAllocateNothing() {
        List<Device> devices = new IbvProvider().devices();
        Device d0 = devices.stream().filter(d -> d.name().equals("rxe0")).findFirst().orElse(null);
        Device d1 = devices.stream().filter(d -> d.name().equals("rxe1")).findFirst().orElse(null);
        assumeTrue(d0 != null && d1 != null, "rxe0/rxe1 not present: " + new IbvProvider().unavailableReason());
        var mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(mx.isThreadAllocatedMemorySupported(), "thread allocation accounting unsupported");
        mx.setThreadAllocatedMemoryEnabled(true);
        try (Context c0 = d0.open(); Context c1 = d1.open(); Arena arena = Arena.ofShared();
             SendWorkRequests s = new SendWorkRequests(4, 1); RecvWorkRequests r = new RecvWorkRequests(1, 1);
             WorkCompletions wc = new WorkCompletions(8)) {
            ProtectionDomain pa = c0.allocPd();
            ProtectionDomain pb = c1.allocPd();
            CompletionQueue ca = c0.createCq(CqOptions.of(64));
            CompletionQueue cb = c1.createCq(CqOptions.of(64));
            QueuePair qa = pa.createQp(QpInitAttr.of(QpType.RC, ca, 16));
            QueuePair qb = pb.createQp(QpInitAttr.of(QpType.RC, cb, 16));
            MemorySegment ba = arena.allocate(4096, 4096);
            MemorySegment bb = arena.allocate(4096, 4096);
            MemoryRegion ma = pa.register(ba, Access.ALL_RDMA);
            MemoryRegion mb = pb.register(bb, Access.ALL_RDMA);
            qa.connect(qb.address(), Access.ALL_RDMA, 7);
            qb.connect(qa.address(), Access.ALL_RDMA, 7);
            // three unsignaled writes and a signaled send; the receive is reposted each round
            for (int i = 0; i < 3; i++) {
                s.sge(s.add(i, Opcode.RDMA_WRITE, 0), ma, 64L * i, 64).rdma(i, mb.address() + 64L * i, mb.rkey());
            }
            s.sge(s.add(3, Opcode.SEND, SendFlags.SIGNALED), ma, 0, 32);
            r.sge(r.add(9), mb, 1024, 64);
            long tid = Thread.currentThread().threadId();
            round(qa, qb, ca, cb, s, r, wc, WARMUP);
            long before = mx.getThreadAllocatedBytes(tid);
            round(qa, qb, ca, cb, s, r, wc, MEASURED);
            long after = mx.getThreadAllocatedBytes(tid);
            assertEquals(0, after - before, "bytes allocated by " + MEASURED + " rounds of post/poll on rxe");
            assertEquals(0, qa.outstandingSends(), "every WQE retired");
        }
    }

    /** {@code n} rounds: repost the receive, post the 4-WR chain as two sub-chains, poll both sides. */
    private static void round(QueuePair qa, QueuePair qb, CompletionQueue ca, CompletionQueue cb,
                              SendWorkRequests s, RecvWorkRequests r, WorkCompletions wc, int n) {
        for (int k = 0; k < n; k++) {
            check(qb.postRecv(r), "postRecv");
            check(qa.postSend(s, 0, 2), "postSend[0,2)");
            check(qa.postSend(s, 2, 2), "postSend[2,4)");
            pollOne(ca, wc);
            pollOne(cb, wc);
        }
    }

    private static void pollOne(CompletionQueue cq, WorkCompletions wc) {
        long spins = 0;
        int got;
        while ((got = cq.poll(wc, 1)) == 0) {
            if (++spins > 2_000_000_000L) {
                throw new AssertionError("no completion");
            }
            Thread.onSpinWait();
        }
        if (got != 1 || wc.status(0) != WcStatus.SUCCESS) {
            throw new AssertionError("poll returned " + got + ", status " + WcStatus.name(wc.status(0)));
        }
    }

    private static void check(int rc, String what) {
        if (rc != 0) {
            throw new AssertionError(what + " failed: " + rc);
        }
    }
}
