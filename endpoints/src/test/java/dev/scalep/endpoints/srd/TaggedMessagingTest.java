package dev.scalep.endpoints.srd;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.sim.SimDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TaggedMessagingTest {
    private static final int MAX = 256;
    private static final int MSGS = 12;

    /** A sender and a receiver on one sim device; the listener checks every payload's bytes. */
    private static final class Link implements AutoCloseable {
        final Context a;
        final Context b;
        final TaggedSender tx;
        final TaggedReceiver rx;
        final Arena arena = Arena.ofShared();
        final MemoryRegion src;
        final int[] got = new int[1024];
        final int[] expectLen = new int[1024];
        int corrupt;

        Link(SimDevice d, QpType type, int rnrRetry, boolean start) {
            a = d.open();
            b = d.open();
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            CompletionQueue ca = a.createCq(CqOptions.of(256).withExtended(true));
            CompletionQueue cb = b.createCq(CqOptions.of(256).withExtended(true));
            MemorySegment s = arena.allocate((long) MSGS * MAX * 4, 64);
            src = pa.register(s, Access.LOCAL_WRITE);
            tx = new TaggedSender(pa, ca, type, 16, rnrRetry);
            rx = new TaggedReceiver(pb, cb, type, 64, MAX, 4, (id, buf, off, len) -> {
                got[id]++;
                if (len != expectLen[id]) {
                    corrupt++;
                    return;
                }
                for (int i = 0; i < len; i++) {
                    if (buf.get(JAVA_BYTE, off + i) != (byte) (id * 31 + i)) {
                        corrupt++;
                        return;
                    }
                }
            });
            rx.connect(tx.qp().address());
            tx.connect(rx.qp().address());
            if (start) {
                rx.start();
            }
        }

        /** Stage message {@code id} of {@code len} bytes in slot {@code k} of the source region. */
        long stage(int k, int id, int len) {
            long off = (long) k * MAX;
            for (int i = 0; i < len; i++) {
                src.segment().set(JAVA_BYTE, off + i, (byte) (id * 31 + i));
            }
            expectLen[id] = len;
            return off;
        }

        void settle(long messages) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while ((tx.inFlight() > 0 || rx.delivered() < messages) && System.nanoTime() < end) {
                tx.progress();
                rx.progress();
            }
            assertEquals(0, tx.inFlight(), "unacknowledged messages left");
        }

        @Override
        public void close() {
            tx.close();
            rx.close();
            src.close();
            a.close();
            b.close();
            arena.close();
        }
    }

    private static long runInterleaved(SimDevice d, QpType type, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        try (Link l = new Link(d, type, 7, true)) {
            for (int k = 0; k < MSGS; k++) {
                int id = 100 + k * 7;
                int len = 1 + rnd.nextInt(MAX);
                long off = l.stage(k, id, len);
                assertTrue(l.tx.send(id, l.src, off, len, rnd.nextBoolean()));
            }
            l.settle(MSGS);
            assertEquals(MSGS, l.rx.delivered());
            for (int k = 0; k < MSGS; k++) {
                assertEquals(1, l.got[100 + k * 7], "message " + (100 + k * 7) + " delivered once");
            }
            assertEquals(0, l.corrupt, "a payload was matched to the wrong length or id");
            assertEquals(0, l.rx.mismatches());
            assertEquals(0, l.rx.unexpected());
            assertEquals(1, l.tx.qp().counters().doorbells() / MSGS, "length + payload: one chain, one doorbell");
            return l.rx.heldPayloads();
        }
    }

    @Test
    void interleavedOutOfOrderMessagesMatchTheirIdsOnManySeeds() {
        long held = 0;
        for (long seed = 1; seed <= 60; seed++) {
            held += runInterleaved(SimDevice.efa(seed, 8), QpType.SRD, seed);
        }
        assertTrue(held > 0, "no payload ever arrived before its length");
    }

    @Test
    void worksOverMlx5UdAndRc() {
        for (QpType t : new QpType[]{QpType.UD, QpType.RC}) {
            for (long seed = 1; seed <= 5; seed++) {
                runInterleaved(SimDevice.newMlx5(), t, seed);
            }
        }
    }

    @Test
    void payloadBeforeItsLengthIsHeldAndMatchedLater() {
        // in-order device: the payload is chained first, so it certainly arrives first
        try (Link l = new Link(SimDevice.newMlx5(), QpType.UD, 7, true)) {
            long o1 = l.stage(0, 1, 40);
            long o2 = l.stage(1, 2, 50);
            assertTrue(l.tx.send(2, l.src, o2, 50, true));
            // drain only the payload's completion batch: both are posted, the receiver polls one at a time
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (l.rx.heldPayloads() == 0 && System.nanoTime() < end) {
                l.rx.progress();
            }
            assertEquals(1, l.rx.heldPayloads());
            assertTrue(l.tx.send(1, l.src, o1, 40, false));
            l.settle(2);
            assertEquals(2, l.rx.delivered());
            assertEquals(1, l.got[1]);
            assertEquals(1, l.got[2]);
            assertEquals(0, l.corrupt);
            assertEquals(0, l.rx.unexpected());
        }
    }

    @Test
    void failedSendIsRetransmittedFromThePoolAndDeliveredOnce() {
        for (long seed = 1; seed <= 10; seed++) {
            try (Link l = new Link(SimDevice.efa(seed, 8), QpType.SRD, 0, false)) {
                long[] addr = new long[32];
                for (int r = 0; r < 32; r++) {
                    addr[r] = l.tx.pool().address(r);
                }
                for (int k = 0; k < 4; k++) {
                    int id = 10 + k;
                    assertTrue(l.tx.send(id, l.src, l.stage(k, id, 64 + k), 64 + k, false));
                }
                // no receive posted and rnr_retry 0: the first executed send fails with RNR
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (l.tx.errors() == 0 && System.nanoTime() < end) {
                    l.tx.progress();
                }
                assertTrue(l.tx.errors() > 0, "no error completion");
                assertEquals(WcStatus.RNR_RETRY_EXC_ERR, l.tx.lastError());
                assertEquals(0, l.rx.delivered());
                l.rx.start();
                l.settle(4);
                assertTrue(l.tx.retransmits() > 0);
                assertTrue(l.tx.recoveries() >= 1);
                assertEquals(4, l.rx.delivered());
                for (int k = 0; k < 4; k++) {
                    assertEquals(1, l.got[10 + k], "message " + (10 + k) + " delivered exactly once");
                }
                assertEquals(0, l.corrupt);
                for (int r = 0; r < 32; r++) {
                    assertEquals(addr[r], l.tx.pool().address(r), "retransmissions repost the pooled records");
                }
            }
        }
    }

    @Test
    void timeoutRetransmissionsAreDroppedAsDuplicates() {
        try (Link l = new Link(SimDevice.efa(3, 8), QpType.SRD, 7, true)) {
            for (int k = 0; k < 3; k++) {
                int id = 500 + k;
                assertTrue(l.tx.send(id, l.src, l.stage(k, id, 32), 32, false));
            }
            assertEquals(6, l.tx.retransmitUnacked(0), "every record is unacknowledged right after posting");
            l.settle(3);
            l.rx.progress();
            assertEquals(3, l.rx.delivered());
            assertEquals(6, l.rx.duplicates());
            for (int k = 0; k < 3; k++) {
                assertEquals(1, l.got[500 + k]);
            }
            assertEquals(0, l.tx.retransmitUnacked(0));
        }
    }
}
