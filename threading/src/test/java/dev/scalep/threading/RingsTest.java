package dev.scalep.threading;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RingsTest {
    @Test
    @Timeout(10)
    void sendSlotRingKeepsFieldsAndRefusesWhenFull() {
        SendSlotRing r = new SendSlotRing(3);
        assertEquals(4, r.capacity());
        for (int i = 0; i < 4; i++) {
            assertTrue(r.offer(i, 4, 2, 1000 + i, 8 + i, -1, 2000 + i, 0x7fff_0000 + i, -5 - i, i));
        }
        assertFalse(r.offer(9, 0, 0, 0, 0, 0, 0, 0, 0, 0), "full");
        for (int i = 0; i < 4; i++) {
            int b = r.readyBase();
            assertTrue(b >= 0);
            assertEquals(i, r.wrId(b));
            assertEquals(4, r.opcode(b));
            assertEquals(2, r.flags(b));
            assertEquals(1000 + i, r.localAddr(b));
            assertEquals(8 + i, r.length(b));
            assertEquals(-1, r.lkey(b));
            assertEquals(2000 + i, r.remoteAddr(b));
            assertEquals(0x7fff_0000 + i, r.rkey(b));
            assertEquals(-5 - i, r.imm(b));
            assertEquals(i, r.peer(b));
            r.consume(b);
        }
        assertEquals(-1, r.readyBase());
        r.publishHead();
        assertFalse(r.hasReady());
        assertTrue(r.offer(10, 0, 0, 0, 0, 0, 0, 0, 0, 0), "wraps");
        assertTrue(r.hasReady());
    }

    @Test
    @Timeout(20)
    void completionRingSpscKeepsOrderAcrossThreads() throws Exception {
        CompletionRing ring = new CompletionRing(64);
        long n = 3_000_000;
        AtomicReference<Throwable> err = new AtomicReference<>();
        Thread consumer = Thread.ofPlatform().start(() -> {
            Completion c = new Completion();
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
                } else if (System.nanoTime() > deadline) {
                    err.compareAndSet(null, new AssertionError("deadline at " + expect));
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
    void paddedCounters() {
        PaddedAtomicLong a = new PaddedAtomicLong(5);
        assertTrue(a.tryTake(5));
        assertFalse(a.tryTake(1));
        assertEquals(3, a.addAndGet(3));
        PaddedLongArray arr = new PaddedLongArray(3);
        arr.addOrdered(2, 4);
        arr.getAndAdd(0, 1);
        assertEquals(4, arr.getAcquire(2));
        assertEquals(1, arr.getVolatile(0));
        assertEquals(0, arr.getPlain(1));
    }

    @Test
    void affinityNeverThrows() throws Exception {
        int[] allowed = Affinity.allowed();
        Thread t = Thread.ofPlatform().start(() -> {
            Affinity.Result ok = Affinity.pin(allowed.length > 0 ? allowed[0] : 0);
            if (Affinity.available() && allowed.length > 0) {
                assertTrue(ok.pinned() || ok.errno() == 1, ok.detail());
            }
            Affinity.Result bad = Affinity.pin(1023);
            assertFalse(bad.pinned() && allowed.length > 0 && java.util.Arrays.stream(allowed).noneMatch(c -> c == 1023));
            assertTrue(bad.detail().length() > 0);
            Affinity.Result neg = Affinity.pin(-1);
            assertFalse(neg.pinned());
        });
        t.join();
    }
}
