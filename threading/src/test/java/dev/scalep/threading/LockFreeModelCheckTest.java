package dev.scalep.threading;

import dev.scalep.verbs.SendFlags;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuarantee;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.agrona.concurrent.status.AtomicCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.util.concurrent.atomic.AtomicInteger;

import static org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt.forClasses;

/**
 * The lock-free hand-offs under Lincheck's model checker (every interleaving of the operations'
 * shared-memory events, bounded by the options), not by stress:
 * <ul>
 * <li>{@link Combining}: two or three threads post single requests (repeated ones, and ones of a
 *     stream whose ids count up, which extend a queued record's run) and batches into one
 *     {@link CombiningPoster}. After every execution nothing may be left in the ring (a thread
 *     that lost the combiner CAS returned only because the holder re-checks the ring after
 *     releasing the flag), every accepted request reached the provider exactly once, and no two
 *     threads were inside the provider's post at once.</li>
 * <li>{@link CompletionRing}: one producer and one consumer on a {@link SpscCompletionRing}
 *     (pooled records) must behave as a bounded FIFO queue, fields included (linearizability
 *     against a sequential run of the same operations).</li>
 * </ul>
 * Seeding a bug (dropping the combiner's re-check after it releases the flag, draining a record
 * without sealing it against its owner's appends, or publishing a completion record before its
 * fields are written) makes these checks fail with the interleaving
 * that breaks them.
 */
class LockFreeModelCheckTest {
    /**
     * The statistics counters (Agrona's AtomicCounter over a counters file) are not part of the
     * hand-off protocol: Lincheck cannot place their Unsafe accesses, so they are left out of the model.
     */
    private static final ManagedStrategyGuarantee COUNTERS = forClasses(AtomicCounter.class.getName(),
            PathCounters.class.getName(), CqCounters.class.getName()).allMethods().ignore();

    /** Bounded by the scenario counts, not by time; the limit only guards a loaded machine against a hang. */
    @Test
    @Timeout(900)
    void combiningHandOff() {
        new ModelCheckingOptions().iterations(25).invocationsPerIteration(300).threads(3).actorsPerThread(2)
                .actorsBefore(0).actorsAfter(0).addGuarantee(COUNTERS).check(Combining.class);
    }

    @Test
    @Timeout(900)
    void completionRing() {
        new ModelCheckingOptions().iterations(25).invocationsPerIteration(300).threads(2).actorsPerThread(3)
                .actorsBefore(0).actorsAfter(1).addGuarantee(COUNTERS).check(CompletionRing.class);
    }

    /** Lincheck's test object: one poster on a fake QP with room for every request of a scenario. */
    public static class Combining {
        private final FakeQp qp = new FakeQp(3, 32, new FakeQp.FakeCq(), 64);
        private final CombiningPoster poster = new CombiningPoster(qp, 2, 1, 0, null);
        private final AtomicInteger accepted = new AtomicInteger();
        private final AtomicInteger ids = new AtomicInteger();

        @Operation
        public int postOne() {
            int rc = poster.post(Requests.write(WrIds.send(0, 1), SendFlags.SIGNALED, 0, 8, 1, 0, 1));
            if (rc == 0) {
                accepted.addAndGet(1);
            }
            return rc;
        }

        /**
         * One request of a stream: ids that count up, so that the next one a thread posts while its
         * record is still queued extends that record's run instead of taking a slot.
         */
        @Operation
        public int postNext() {
            int rc = poster.post(Requests.write(WrIds.send(0, 100 + ids.getAndIncrement()), SendFlags.SIGNALED, 0, 8, 1,
                    0, 1));
            if (rc == 0) {
                accepted.addAndGet(1);
            }
            return rc;
        }

        @Operation
        public int postTwo() {
            SendBatch b = new SendBatch(2);
            Requests.write(b, WrIds.send(0, 2), 0, 0, 8, 1, 0, 1);
            Requests.write(b, WrIds.send(0, 3), SendFlags.SIGNALED, 0, 8, 1, 0, 1);
            int rc = poster.post(b);
            if (rc == 0) {
                accepted.addAndGet(2);
            }
            return rc;
        }

        @Validate
        public void nothingStranded() {
            if (poster.queued() != 0) {
                throw new IllegalStateException(poster.queued() + " records of accepted requests stranded in the queue");
            }
            if (qp.postedCount.get() != accepted.get() || poster.combined() != accepted.get()) {
                throw new IllegalStateException("accepted " + accepted.get() + ", provider saw " + qp.postedCount.get()
                        + ", doorbells carried " + poster.combined());
            }
            if (qp.overlapSeen) {
                throw new IllegalStateException("two threads inside postSend");
            }
        }
    }

    /** Lincheck's test object: a ring of 2 records, one producer and one consumer thread. */
    public static class CompletionRing {
        private final SpscCompletionRing ring = new SpscCompletionRing(2);
        private final RoutedCompletion out = new RoutedCompletion();
        private long next;

        @Operation(nonParallelGroup = "producer")
        public boolean offer() {
            long id = ++next;
            return ring.offer(id, (int) id, 2, (int) (id * 3), (int) -id, 7, RoutedCompletion.RECV);
        }

        /** The polled record as one value ({@code -1} when empty), every field checked against its id. */
        @Operation(nonParallelGroup = "consumer")
        public long poll() {
            if (!ring.poll(out)) {
                return -1;
            }
            long id = out.wrId();
            boolean intact = out.status() == (int) id && out.opcode() == 2 && out.byteLen() == (int) (id * 3)
                    && out.imm() == (int) -id && out.qpNum() == 7 && out.isRecv();
            return intact ? id : -1000 - id;
        }
    }
}
