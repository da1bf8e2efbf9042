package dev.scalep.verbs.sim;

import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import com.sun.management.ThreadMXBean;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The send queue's slot rings against a model, driven by a seeded random mix of what the post path
 * and the engine do: a slot is never handed out twice, queued and unretired WQEs come back in post
 * order with the fields they were posted with, {@link SendSlots#room} is the free slots less the
 * silent WQEs, the published outstanding count is every WQE not retired, and reset frees all;
 * a queue as deep as the QP, filled for the first time, allocates nothing.
 */
class SendSlotsTest {
    private static final int CAP = 8;

    @Test
    void ringsKeepEverySlotOnceAndPostOrder() {
        SendSlots sl = new SendSlots(CAP, 1, 0, new SlotTable<>(4, 8));
        Random rnd = new Random(20);
        ArrayDeque<Long> queued = new ArrayDeque<>(); // wr_ids posted and not yet taken by the engine
        List<Integer> engine = new ArrayList<>(); // slots the engine holds (executing or windowed)
        ArrayDeque<Integer> unretired = new ArrayDeque<>();
        Set<Integer> held = new HashSet<>();
        int silent = 0;
        long nextWrId = 1;
        long lastSeq = -1;
        try (SendWorkRequests wrs = new SendWorkRequests(1, 1)) {
            int i = wrs.add(0, Opcode.SEND, 0);
            wrs.sge(i, 4096, 64, 1);
            for (int step = 0; step < 20_000; step++) {
                switch (rnd.nextInt(7)) {
                    case 0, 1 -> { // post one WR
                        if (sl.room() > 0) {
                            long id = nextWrId++;
                            wrs.wrId(i, id).flags(i, rnd.nextBoolean() ? SendFlags.SIGNALED : 0);
                            assertFalse(sl.enqueue(wrs, i, Opcode.SEND, wrs.flags(i), QpType.RC, false));
                            queued.addLast(id);
                        }
                    }
                    case 2 -> { // the engine takes the oldest queued WQE
                        if (sl.hasQueued()) {
                            int head = sl.headQueued();
                            int s = sl.dequeue();
                            assertEquals(head, s);
                            assertEquals(queued.removeFirst(), sl.wrId(s), "post order");
                            assertEquals(64, sl.length(s));
                            assertTrue(sl.seq(s) > lastSeq, "sequence grows in post order");
                            lastSeq = sl.seq(s);
                            assertTrue(held.add(s), "slot " + s + " handed out twice");
                            engine.add(s);
                        } else {
                            assertTrue(queued.isEmpty());
                        }
                    }
                    case 3 -> { // the engine completes one of its WQEs (in-order retirement rules)
                        if (!engine.isEmpty()) {
                            int s = engine.remove(rnd.nextInt(engine.size()));
                            if (sl.signaled(s)) {
                                for (int u = sl.nextUnretired(); u >= 0; u = sl.nextUnretired()) {
                                    assertEquals(unretired.removeFirst(), u, "unretired in order");
                                    sl.retire(u);
                                    held.remove(u);
                                }
                                assertTrue(unretired.isEmpty());
                                sl.retireSilent();
                                silent = 0;
                                sl.retire(s);
                                held.remove(s);
                            } else {
                                sl.deferRetire(s);
                                unretired.addLast(s);
                            }
                        }
                    }
                    case 4 -> { // a signaled WR executed at post time
                        if (sl.room() > 0) {
                            int s = sl.executed(nextWrId++, Opcode.RDMA_WRITE, true, 8);
                            assertTrue(held.add(s), "slot " + s + " handed out twice");
                            engine.add(s);
                        }
                    }
                    case 5 -> { // unsignaled WRs executed at post time: a count, no slot
                        int n = rnd.nextInt(3);
                        if (sl.room() >= n) {
                            long before = sl.posted();
                            sl.executedSilently(n);
                            silent += n;
                            assertEquals(before + n, sl.posted());
                        }
                    }
                    default -> sl.publish();
                }
                int inUse = queued.size() + engine.size() + unretired.size();
                assertEquals(CAP - inUse - silent, sl.room(), "room at step " + step);
                sl.publish();
                assertEquals(inUse + silent, sl.outstanding(), "outstanding at step " + step);
            }
        }
        sl.reset();
        assertEquals(CAP, sl.room());
        assertFalse(sl.hasQueued());
        assertEquals(-1, sl.nextUnretired());
        assertEquals(0, sl.outstanding());
        Set<Integer> all = new HashSet<>();
        for (int k = 0; k < CAP; k++) {
            assertTrue(all.add(sl.executed(k, Opcode.RDMA_WRITE, true, 0)), "reset frees every slot once");
        }
        assertEquals(0, sl.room());
    }

    @Test
    void fillingEveryRingToTheQueueDepthAllocatesNothing() {
        ThreadMXBean mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        try (SendWorkRequests wrs = new SendWorkRequests(1, 1)) {
            wrs.sge(wrs.add(7, Opcode.SEND, 0), 4096, 64, 1);
            cycle(new SendSlots(256, 1, 0, new SlotTable<>(4, 8)), wrs); // the code paths, warmed on another instance
            SendSlots fresh = new SendSlots(256, 1, 0, new SlotTable<>(4, 8));
            long before = mx.getThreadAllocatedBytes(tid);
            cycle(fresh, wrs);
            long after = mx.getThreadAllocatedBytes(tid);
            assertEquals(0, after - before, "bytes allocated by the first fill of a 256-deep queue");
            assertEquals(256, fresh.room());
        }
    }

    /** Post as many WRs as fit, take them all, complete them all unsignaled, then retire them with a CQE. */
    private static void cycle(SendSlots sl, SendWorkRequests wrs) {
        while (sl.room() > 0) {
            sl.enqueue(wrs, 0, Opcode.SEND, 0, QpType.RC, false);
        }
        while (sl.hasQueued()) {
            sl.deferRetire(sl.dequeue());
        }
        for (int s = sl.nextUnretired(); s >= 0; s = sl.nextUnretired()) {
            sl.retire(s);
        }
    }
}
