package dev.scalep.threading;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Atomics carried by a {@link SendBatch} through a send path's one writer into native work
 * requests, executed by the simulated mlx5 NIC: a batch mixing fetch-and-add, compare-and-swap, an
 * RDMA write and an RDMA read, each described with the same setters, comes back with the right
 * results, completions and final words (a wrong arm of {@code wr}, e.g. an atomic's rkey or
 * operands written where an RDMA request keeps them, fails it).
 */
@Timeout(30)
class SendBatchAtomicsTest {
    @Test
    void atomicsWritesAndReadsOfOneBatchReachTheDeviceAsStaged() {
        try (Context a = Devices.byName("sim:mlx5").open(ContextOptions.DEFAULTS);
             Context b = Devices.byName("sim:mlx5").open(ContextOptions.DEFAULTS)) {
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            CompletionQueue cq = a.createCq(CqOptions.of(64));
            CompletionQueue cqb = b.createCq(CqOptions.of(64));
            MemorySegment ma = pa.allocate(4096, 64);
            MemorySegment mb = pb.allocate(4096, 64);
            MemoryRegion mra = pa.register(ma, Access.ALL_RDMA);
            MemoryRegion mrb = pb.register(mb, Access.ALL_RDMA | Access.REMOTE_ATOMIC);
            QueuePair qa = pa.createQp(QpInitAttr.of(QpType.RC, cq, 16));
            QueuePair qb = pb.createQp(QpInitAttr.of(QpType.RC, cqb, 16));
            qa.connect(qb.address(), Access.ALL_RDMA, 7);
            qb.connect(qa.address(), Access.ALL_RDMA | Access.REMOTE_ATOMIC, 7);
            mb.set(JAVA_LONG, 0, 1000L);
            mb.set(JAVA_LONG, 8, 77L);
            ma.set(JAVA_LONG, 512, 0x5555_6666_7777_8888L);
            mb.set(JAVA_LONG, 256, 0x0102_0304_0506_0708L);

            SendPath p = new ExclusivePoster(qa, 8, 1, 0, null);
            SendBatch s = new SendBatch(8);
            int sig = SendFlags.SIGNALED;
            int i = s.add(1, Opcode.ATOMIC_FETCH_AND_ADD, sig);
            s.local(i, mra.address(), 8, mra.lkey()).remote(i, mrb.address(), mrb.rkey()).atomic(i, 5, 0);
            i = s.add(2, Opcode.ATOMIC_CMP_AND_SWP, sig);
            s.local(i, mra.address() + 8, 8, mra.lkey()).remote(i, mrb.address() + 8, mrb.rkey()).atomic(i, 77, -3L);
            i = s.add(3, Opcode.RDMA_WRITE, sig);
            s.local(i, mra.address() + 512, 8, mra.lkey()).remote(i, mrb.address() + 128, mrb.rkey());
            i = s.add(4, Opcode.RDMA_READ, sig);
            s.local(i, mra.address() + 1024, 8, mra.lkey()).remote(i, mrb.address() + 256, mrb.rkey());
            i = s.add(5, Opcode.ATOMIC_FETCH_AND_ADD, sig);
            s.local(i, mra.address() + 16, 8, mra.lkey()).remote(i, mrb.address(), mrb.rkey()).atomic(i, -6, 0);
            assertEquals(0, p.post(s));

            List<long[]> done = new ArrayList<>(); // user id, status, opcode
            try (WorkCompletions wc = new WorkCompletions(8)) {
                for (int spins = 0; done.size() < 5 && spins < 1_000_000; spins++) {
                    int k = cq.poll(wc);
                    for (int j = 0; j < k; j++) {
                        done.add(new long[]{p.idOf(wc.wrId(j)), wc.status(j), wc.opcode(j)});
                        p.retire(wc.wrId(j));
                    }
                }
            }
            assertEquals(5, done.size(), "five completions");
            int[] ops = {WcOpcode.FETCH_ADD, WcOpcode.COMP_SWAP, WcOpcode.RDMA_WRITE, WcOpcode.RDMA_READ,
                WcOpcode.FETCH_ADD};
            for (int k = 0; k < 5; k++) {
                assertEquals(k + 1, done.get(k)[0]);
                assertEquals(WcStatus.SUCCESS, (int) done.get(k)[1], "request " + (k + 1));
                assertEquals(ops[k], (int) done.get(k)[2], "request " + (k + 1));
            }
            assertEquals(1000L, ma.get(JAVA_LONG, 0), "FAA fetched the word");
            assertEquals(77L, ma.get(JAVA_LONG, 8), "CAS fetched the matching word");
            assertEquals(1005L, ma.get(JAVA_LONG, 16), "the second FAA saw the first");
            assertEquals(999L, mb.get(JAVA_LONG, 0), "1000 + 5 - 6");
            assertEquals(-3L, mb.get(JAVA_LONG, 8), "swapped");
            assertEquals(0x5555_6666_7777_8888L, mb.get(JAVA_LONG, 128), "the write landed");
            assertEquals(0x0102_0304_0506_0708L, ma.get(JAVA_LONG, 1024), "the read fetched");
            assertEquals(p.depth(), p.freeSlots(), "every credit back");
            assertTrue(s.count() == 5);
            p.close();
            qa.close();
            qb.close();
        }
    }
}
