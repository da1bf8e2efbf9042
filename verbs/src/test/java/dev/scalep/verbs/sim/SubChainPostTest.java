package dev.scalep.verbs.sim;

import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@code postSend(wrs, from, count)} on a pre-filled pool: one doorbell per chain, links restored, absolute badIndex. */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class SubChainPostTest {
    private static final int N = 8;

    private static SendWorkRequests pool(SimPair p) {
        SendWorkRequests w = new SendWorkRequests(N, 2).fill(N);
        for (int i = 0; i < N; i++) {
            w.opcode(i, Opcode.RDMA_WRITE).flags(i, SendFlags.SIGNALED).wrId(i, 100 + i);
            w.numSge(i, 1).sgeAt(i, 0, p.mrA.address() + 8L * i, 8, p.mrA.lkey());
            w.rdma(i, p.mrB.address() + 8L * i, p.mrB.rkey());
        }
        return w;
    }

    private static List<Long> reap(SimPair p, int n) {
        List<Long> ids = new ArrayList<>();
        try (WorkCompletions wc = new WorkCompletions(16)) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (ids.size() < n && System.nanoTime() < end) {
                int r = p.cqA.poll(wc);
                for (int i = 0; i < r; i++) {
                    assertEquals(WcStatus.SUCCESS, wc.status(i));
                    ids.add(wc.wrId(i));
                }
            }
        }
        return ids;
    }

    @Test
    void subChainIsOneDoorbellAndTheLinksAreRestored() {
        try (SimPair p = SimPair.rc(SimDevice.newMlx5(), ContextOptions.DEFAULTS, 32);
             SendWorkRequests w = pool(p)) {
            for (int i = 0; i < N; i++) {
                p.memA.set(JAVA_LONG, 8L * i, 1000 + i);
            }
            long[] links = new long[N];
            for (int i = 0; i < N; i++) {
                links[i] = w.next(i);
                assertEquals(i + 1 < N ? w.address(i + 1) : 0L, links[i]);
            }
            long db = p.a.counters().doorbells();
            assertEquals(0, p.a.postSend(w, 2, 3));
            assertEquals(db + 1, p.a.counters().doorbells());
            assertEquals(3, p.a.counters().wqes());
            assertEquals(List.of(102L, 103L, 104L), reap(p, 3));
            for (int i = 0; i < N; i++) {
                assertEquals(links[i], w.next(i), "link of record " + i + " restored");
                assertEquals(i >= 2 && i <= 4 ? 1000 + i : 0, p.memB.get(JAVA_LONG, 8L * i));
            }
            // the same records, reposted unchanged, and the whole list as postSend(wrs)
            assertEquals(0, p.a.postSend(w, 0, 1));
            assertEquals(0, p.a.postSend(w));
            assertEquals(db + 3, p.a.counters().doorbells());
            assertEquals(3 + 1 + N, p.a.counters().wqes());
            assertEquals(1 + N, reap(p, 1 + N).size());
            assertEquals(0, p.a.postSend(w, 5, 0));
            assertEquals(db + 3, p.a.counters().doorbells(), "an empty range rings nothing");
        }
    }

    @Test
    void badIndexIsAbsoluteAndTheRecordsBeforeItArePosted() {
        try (SimPair p = SimPair.rc(SimDevice.newMlx5(), ContextOptions.DEFAULTS, 32);
             SendWorkRequests w = pool(p)) {
            w.numSge(5, 2); // the QP takes one SGE: record 5 is refused
            assertEquals(Errno.EINVAL, p.a.postSend(w, 3, 4));
            assertEquals(5, w.badIndex());
            assertEquals(List.of(103L, 104L), reap(p, 2));
            assertEquals(1, p.a.counters().doorbells());
            assertEquals(0, p.a.postSend(w, 6, 2));
            assertEquals(-1, w.badIndex());
            assertEquals(List.of(106L, 107L), reap(p, 2));
            assertThrows(IndexOutOfBoundsException.class, () -> p.a.postSend(w, 6, 3));
            assertThrows(IndexOutOfBoundsException.class, () -> p.a.postSend(w, -1, 1));
        }
    }

    @Test
    void fillKeepsRecordsAndRelinks() {
        try (SendWorkRequests w = new SendWorkRequests(4, 1)) {
            w.add(7, Opcode.SEND, SendFlags.SIGNALED);
            w.add(8, Opcode.SEND_WITH_IMM, 0);
            w.clear();
            w.fill(4);
            assertEquals(4, w.count());
            assertEquals(7, w.wrId(0));
            assertEquals(Opcode.SEND_WITH_IMM.code, w.opcode(1));
            assertEquals(w.address(1), w.next(0));
            assertEquals(0L, w.next(3));
            w.fill(2);
            assertEquals(0L, w.next(1));
            assertThrows(IndexOutOfBoundsException.class, () -> w.fill(5));
        }
    }
}
