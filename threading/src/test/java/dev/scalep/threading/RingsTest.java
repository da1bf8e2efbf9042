package dev.scalep.threading;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RingsTest {
    @Test
    void completionRingHoldsItsCapacityAndReusesRecords() {
        SpscCompletionRing ring = new SpscCompletionRing(3);
        assertEquals(4, ring.capacity());
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 4; i++) {
                assertTrue(ring.offer(i, i + 1, 2, 8 + i, -5 - i, 42, RoutedCompletion.RECV), "record " + i);
            }
            assertFalse(ring.offer(9, 0, 0, 0, 0, 0, 0), "full at capacity");
            assertEquals(4, ring.size());
            RoutedCompletion c = new RoutedCompletion();
            for (int i = 0; i < 4; i++) {
                assertTrue(ring.poll(c));
                assertEquals(i, c.wrId());
                assertEquals(i + 1, c.status());
                assertEquals(2, c.opcode());
                assertEquals(8 + i, c.byteLen());
                assertEquals(-5 - i, c.imm());
                assertEquals(42, c.qpNum());
                assertTrue(c.isRecv());
            }
            assertFalse(ring.poll(c));
            assertTrue(ring.isEmpty());
        }
    }

    @Test
    @Timeout(20)
    void completionRingSpscKeepsOrderAcrossThreads() throws Exception {
        SpscCompletionRing ring = new SpscCompletionRing(64);
        long n = 3_000_000;
        AtomicReference<Throwable> err = new AtomicReference<>();
        Thread consumer = Thread.ofPlatform().start(() -> {
            RoutedCompletion c = new RoutedCompletion();
            long expect = 0;
            long deadline = System.nanoTime() + 15_000_000_000L;
            while (expect < n) {
                if (ring.poll(c)) {
                    if (c.wrId() != expect || c.imm() != (int) expect || c.byteLen() != (int) (expect * 3)
                            || c.status() != (int) (expect & 7) || c.qpNum() != 42) {
                        err.compareAndSet(null, new AssertionError("record " + expect + " came back as " + c));
                        return;
                    }
                    expect++;
                    deadline = System.nanoTime() + 15_000_000_000L;
                } else if (System.nanoTime() > deadline) {
                    err.compareAndSet(null, new AssertionError("nothing arrived for 15 s at " + expect));
                    return;
                } else {
                    Thread.yield(); // an oversubscribed machine must not starve the other side
                }
            }
        });
        for (long i = 0; i < n; ) {
            if (ring.offer(i, (int) (i & 7), 1, (int) (i * 3), (int) i, 42, 0)) {
                i++;
            } else {
                if (!consumer.isAlive()) {
                    break;
                }
                Thread.yield(); // an oversubscribed machine must not starve the other side
            }
        }
        consumer.join();
        assertNull(err.get(), () -> String.valueOf(err.get()));
        assertTrue(ring.isEmpty());
    }

    @Test
    void wrIdsRoundTrip() {
        long s = WrIds.send(65535, 12345);
        assertFalse(WrIds.isRecv(s));
        assertEquals(65535, WrIds.owner(s));
        assertEquals(12345, WrIds.user(s));
        long r = WrIds.recv(3, WrIds.USER_MASK);
        assertTrue(WrIds.isRecv(r));
        assertEquals(3, WrIds.owner(r));
        assertEquals(WrIds.USER_MASK, WrIds.user(r));
    }

    @Test
    void affinityNeverThrows() throws Exception {
        int[] allowed = Affinity.allowed();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                pinAndCheck(allowed);
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.join();
        assertNull(failure.get(), () -> "in the pinned thread: " + failure.get());
    }

    private static void pinAndCheck(int[] allowed) {
        Affinity.Result ok = Affinity.pin(allowed.length > 0 ? allowed[0] : 0);
        if (Affinity.available() && allowed.length > 0) {
            assertTrue(ok.pinned() || ok.errno() == 1, ok.detail());
        }
        Affinity.Result bad = Affinity.pin(1023);
        assertFalse(bad.pinned() && allowed.length > 0 && Arrays.stream(allowed).noneMatch(c -> c == 1023));
        assertTrue(bad.detail().length() > 0);
        Affinity.Result neg = Affinity.pin(-1);
        assertFalse(neg.pinned());
    }
}
