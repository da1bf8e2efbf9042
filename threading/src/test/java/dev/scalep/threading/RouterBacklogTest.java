package dev.scalep.threading;

import dev.scalep.verbs.SendFlags;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One owner's full completion ring does not stop routing for the other owners of the CQ: owner 0
 * never polls and gets more completions than its ring holds, owner 1's completions still arrive;
 * owner 0 later finds all of its own, in order, and every credit comes back once delivered.
 */
class RouterBacklogTest {
    @Test
    void fullRingHoldsItsOwnerOnly() {
        FakeQp.FakeCq cq = new FakeQp.FakeCq();
        FakeQp slowQp = new FakeQp(1, 32, cq, 64);
        FakeQp fastQp = new FakeQp(2, 32, cq, 64);
        cq.qps.put(slowQp.qpNum, slowQp);
        cq.qps.put(fastQp.qpNum, fastQp);
        try (ExclusivePoster slow = new ExclusivePoster(slowQp, 1, 2, 0, null);
             ExclusivePoster fast = new ExclusivePoster(fastQp, 1, 2, 0, null);
             CompletionRouter router = new CompletionRouter(cq, 2, 4, 4)) {
            router.route(slowQp.qpNum, 0, slow);
            router.route(fastQp.qpNum, 1, fast);
            int slowCount = 7; // ring of 4 (and 4 spare records): three must be held for owner 0
            for (int i = 0; i < slowCount; i++) {
                assertEquals(0, slow.post(Requests.write(WrIds.send(0, i), SendFlags.SIGNALED, 0, 8, 1, 0, 1)));
            }
            for (int i = 0; i < 3; i++) {
                assertEquals(0, fast.post(Requests.write(WrIds.send(1, 100 + i), SendFlags.SIGNALED, 0, 8, 1, 0, 1)));
            }
            for (int k = 0; k < 10; k++) { // bounded work: each call routes at most one CQ batch of 4
                router.progress();
            }
            RoutedCompletion c = new RoutedCompletion();
            for (int i = 0; i < 3; i++) {
                assertTrue(router.poll(1, c), "owner 1 gets completion " + i + " although owner 0's ring is full");
                assertEquals(100 + i, c.wrId());
            }
            assertEquals(slowCount - 4, router.held(), "owner 0's overflow is held for it");
            assertEquals(3, fast.retired(1));
            assertEquals(4, slow.retired(0), "held completions are not retired before they are delivered");
            for (int i = 0; i < slowCount; i++) {
                if (!router.poll(0, c)) {
                    router.progress();
                    assertTrue(router.poll(0, c), "completion " + i + " of owner 0");
                }
                assertEquals(i, c.wrId(), "owner 0's order");
            }
            assertFalse(router.pollOrProgress(0, c));
            assertEquals(0, router.held());
            assertEquals(slowCount, slow.retired(0));
            assertEquals(32, slow.freeSlots(), "every credit back");
        }
    }

    /**
     * On a QP two owners share, owner 1's completion comes after owner 0's seven and retires them
     * all (a completion retires every earlier request of its QP), while three of owner 0's own are
     * still held for it: {@link CompletionRouter#heldSends} counts those three until owner 0's polls
     * move them into its ring, so the owner can tell its work is not all delivered yet.
     */
    @Test
    void anotherOwnersCompletionRetiresHeldWorkAndTheHeldSendsStillCount() {
        FakeQp.FakeCq cq = new FakeQp.FakeCq();
        FakeQp qp = new FakeQp(3, 32, cq, 64);
        cq.qps.put(qp.qpNum, qp);
        try (LockedPoster shared = new LockedPoster(qp, 1, 2, 0, null);
             CompletionRouter router = new CompletionRouter(cq, 2, 4, 4)) {
            router.route(qp.qpNum, -1, shared);
            for (int i = 0; i < 7; i++) {
                assertEquals(0, shared.post(Requests.write(WrIds.send(0, i), SendFlags.SIGNALED, 0, 8, 1, 0, 1)));
            }
            assertEquals(0, shared.post(Requests.write(WrIds.send(1, 100), SendFlags.SIGNALED, 0, 8, 1, 0, 1)));
            RoutedCompletion c = new RoutedCompletion();
            for (int k = 0; k < 10 && !router.poll(1, c); k++) { // bounded: each call routes at most one batch of 4
                router.progress();
            }
            assertEquals(100, c.wrId(), "owner 1's completion, routed past owner 0's full ring");
            assertEquals(7, shared.retired(0), "owner 1's completion retired owner 0's earlier requests too");
            assertEquals(3, router.heldSends(0), "three of owner 0's completions are still held for it");
            assertEquals(0, router.heldSends(1));
            for (int i = 0; i < 7; i++) {
                if (!router.poll(0, c)) {
                    router.progress();
                    assertTrue(router.poll(0, c), "completion " + i + " of owner 0");
                }
                assertEquals(i, c.wrId(), "owner 0's order");
            }
            assertEquals(0, router.heldSends(0), "all delivered");
            assertEquals(0, router.held());
        }
    }
}
