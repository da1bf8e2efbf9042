package dev.scalep.endpoints.srd;

import dev.scalep.policies.Ordering;
import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ProtectionDomain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Drives groups of "1..4 writes then one emulated fetch-add" through an ordered channel between two
 * contexts of one device and checks: every write applied exactly once (one delivery, bytes in
 * place), every atomic applied after all writes before it (each was delivered to the receiver, and
 * its bytes are in place, when the atomic is applied), sender callbacks in post order, counters exact at the end. Also measures the latency
 * of each group (first write posted → the added value observed with acquire semantics).
 * Single-threaded; used by {@code scalep check ordering} and the tests.
 */
public final class OrderingCheck {
    static final int SLOT = 16;
    static final int COUNTERS = 4;

    /** Outcome: violation counts per property, and latency. */
    public record Result(Ordering ordering, int ops, int writes, int atomics, int writeViolations,
                         int atomicOrderViolations, int callbackOrderViolations, int counterViolations,
                         double meanGroupLatencyMicros, long duplicates) {
        public int failedProperties() {
            return (writeViolations > 0 ? 1 : 0) + (atomicOrderViolations > 0 ? 1 : 0)
                    + (callbackOrderViolations > 0 ? 1 : 0) + (counterViolations > 0 ? 1 : 0);
        }
    }

    private OrderingCheck() {
    }

    /**
     * Run about {@code ops} operations with {@code ordering} on {@code device}, workload drawn from
     * {@code seed}. {@code window} is the channel's in-flight limit.
     */
    public static Result run(Device device, Ordering ordering, long seed, int ops, int window, long timeoutNanos) {
        SplittableRandom rnd = new SplittableRandom(seed);
        boolean ext = device.capabilities().extendedCqOnly();
        try (Context a = device.open(); Context b = device.open(); Arena arena = Arena.ofConfined()) {
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            CompletionQueue ca = a.createCq(CqOptions.of(4 * window).withExtended(ext));
            CompletionQueue cb = b.createCq(CqOptions.of(4 * window).withExtended(ext));
            MemorySegment dst = pb.allocate((long) ops * SLOT, 64);
            MemorySegment src = arena.allocate((long) ops * SLOT, 64);
            long[] writeSeqToIndex = new long[ops + 1];
            int[] deliveredCount = new int[ops + 1];
            int[] kindOf = new int[ops + 1];
            int[] atomicViolations = {0};
            int[] checkedWrites = {0};
            int[] writeCount = {0};
            long[] writeSeq = new long[ops + 1];
            DeliveryListener listener = (seq, kind, x, y, before) -> {
                if (seq > ops) {
                    return;
                }
                if (kind == ImmCodec.DATA) {
                    deliveredCount[(int) seq]++;
                    return;
                }
                // every write posted before this atomic must have been delivered (its completion
                // seen by the receiver) and its bytes be in place
                boolean ok = true;
                int w = checkedWrites[0];
                while (w < writeCount[0] && writeSeq[w] < seq) {
                    if (deliveredCount[(int) writeSeq[w]] == 0 || dst.get(JAVA_LONG, (long) w * SLOT) != writeSeq[w] + 1) {
                        ok = false;
                        break;
                    }
                    w++;
                }
                if (ok) {
                    checkedWrites[0] = w;
                } else {
                    atomicViolations[0]++;
                }
            };
            long[] nextCb = {0};
            int[] cbViolations = {0};
            SendCallback cbk = (seq, kind, status) -> {
                if (seq != nextCb[0] || status != 0) {
                    cbViolations[0]++;
                }
                nextCb[0] = seq + 1;
            };
            try (OrderedReceiver rx = new OrderedReceiver(pb, cb, ordering, window, dst, COUNTERS, listener);
                 OrderedSender tx = new OrderedSender(pa, ca, ordering, window, rx.remote(), cbk)) {
                MemoryRegion srcMr = pa.register(src, Access.LOCAL_WRITE);
                long[] expected = new long[COUNTERS];
                int atomics = 0;
                long latencySum = 0;
                long deadline = System.nanoTime() + timeoutNanos;
                int posted = 0;
                while (posted < ops) {
                    int writes = Math.min(1 + rnd.nextInt(Math.min(4, window - 1)), ops - posted - 1);
                    long t0 = System.nanoTime();
                    for (int k = 0; k < writes; k++) {
                        int w = writeCount[0];
                        long seq = tx.nextSeq();
                        src.set(JAVA_LONG, (long) w * SLOT, seq + 1);
                        src.set(JAVA_LONG, (long) w * SLOT + 8, ~(seq + 1));
                        writeSeq[w] = seq;
                        kindOf[(int) seq] = ImmCodec.DATA;
                        while (tx.write(srcMr, (long) w * SLOT, SLOT, (long) w * SLOT) < 0) {
                            spin(tx, rx, deadline);
                        }
                        writeCount[0] = w + 1;
                        posted++;
                    }
                    if (posted >= ops) {
                        break;
                    }
                    int c = rnd.nextInt(COUNTERS);
                    long add = rnd.nextInt(8) == 0 ? 1000 + rnd.nextInt(1 << 20) : 1 + rnd.nextInt(255);
                    expected[c] += add;
                    long s;
                    while ((s = tx.atomicAdd(c, add)) < 0) {
                        spin(tx, rx, deadline);
                    }
                    kindOf[(int) s] = ImmCodec.ATOMIC;
                    atomics++;
                    posted++;
                    long want = expected[c];
                    while (rx.counter(c) < want) {
                        spin(tx, rx, deadline);
                    }
                    latencySum += System.nanoTime() - t0;
                }
                while (tx.inFlight() > 0 || rx.head() < tx.nextSeq()) {
                    spin(tx, rx, deadline);
                }
                int writeViolations = 0;
                for (int w = 0; w < writeCount[0]; w++) {
                    long seq = writeSeq[w];
                    if (deliveredCount[(int) seq] != 1 || dst.get(JAVA_LONG, (long) w * SLOT) != seq + 1
                            || dst.get(JAVA_LONG, (long) w * SLOT + 8) != ~(seq + 1)) {
                        writeViolations++;
                    }
                }
                int counterViolations = 0;
                for (int c = 0; c < COUNTERS; c++) {
                    if (rx.counter(c) != expected[c]) {
                        counterViolations++;
                    }
                }
                if (nextCb[0] != tx.nextSeq()) {
                    cbViolations[0]++;
                }
                srcMr.close();
                return new Result(ordering, posted, writeCount[0], atomics, writeViolations, atomicViolations[0],
                        cbViolations[0], counterViolations, atomics == 0 ? 0 : latencySum / 1e3 / atomics,
                        rx.duplicates());
            }
        }
    }

    private static void spin(OrderedSender tx, OrderedReceiver rx, long deadline) {
        tx.progress();
        rx.progress();
        if (System.nanoTime() > deadline) {
            throw new IllegalStateException("ordering check timed out: " + tx.inFlight() + " operations in flight, "
                    + "receiver head " + rx.head() + ", sender next " + tx.nextSeq());
        }
    }
}
