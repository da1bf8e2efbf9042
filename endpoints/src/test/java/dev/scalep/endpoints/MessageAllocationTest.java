package dev.scalep.endpoints;

import com.sun.management.ThreadMXBean;
import dev.scalep.policies.SharingConfig;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The eager path (send, the receive hook, matching, copy-out, credits) allocates nothing once
 * warm: rank 0 sends 8-byte tagged messages to rank 1, which posts a receive for each, tests it
 * and sends it back; each rank's thread allocates under 4 KiB in at least one of three
 * consecutive windows of 20,000 round trips (an allocation per message shows in every window).
 */
class MessageAllocationTest {
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"sim:mlx5, static", "sim:mlx5, mpi-threads", "sim:efa, static"})
    @Timeout(180)
    void eagerMessagesDoNotAllocate(String devName, String level) throws Exception {
        Device d = Devices.byName(devName);
        List<Object> result = LocalRanks.run(2, 120_000, w -> {
            try (WorldEndpoints eps = WorldEndpoints.open(w, d, SharingConfig.parse(level), 1, MessageSuite.OPTS);
                 Arena arena = Arena.ofConfined()) {
                MemorySegment buf = arena.allocate(64, 64);
                MessageStatus st = new MessageStatus();
                long least = Long.MAX_VALUE;
                try (RankEndpoint ep = eps.acquire()) {
                    Messages m = ep.messages();
                    var mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
                    long tid = Thread.currentThread().threadId();
                    run(m, w.rank(), buf, st, 30_000);
                    for (int k = 0; k < 3; k++) { // both ranks run the same round trips
                        long before = mx.getThreadAllocatedBytes(tid);
                        run(m, w.rank(), buf, st, 20_000);
                        least = Math.min(least, mx.getThreadAllocatedBytes(tid) - before);
                    }
                    if (!ep.barrier()) {
                        throw new IllegalStateException("barrier");
                    }
                }
                return least;
            }
        });
        for (int r = 0; r < 2; r++) {
            long least = (Long) result.get(r);
            assertTrue(least < 4096, "rank " + r + " allocated " + least + " bytes in the least of three windows");
        }
    }

    /**
     * The same with sends that name another thread slot ({@link SlotAddressing#ANY_SLOT}, 2
     * threads a rank): rank 0's slot 0 and rank 1's slot 1 make the round trips, naming each
     * other's slot; the two other slots progress until they are done (on RC a message travels on
     * the sender's index, so they hand the messages over; on EFA it goes to the named slot's QP).
     * Each of the two talking threads allocates under 4 KiB in at least one of three windows.
     */
    @ParameterizedTest(name = "{0} {1} named slots")
    @CsvSource({"sim:mlx5, static", "sim:efa, mpi-everywhere"})
    @Timeout(180)
    void eagerMessagesToANamedSlotDoNotAllocate(String devName, String level) throws Exception {
        Device d = Devices.byName(devName);
        List<Object> result = LocalRanks.run(2, 120_000, w -> {
            AtomicBoolean done = new AtomicBoolean();
            long[] least = {Long.MAX_VALUE};
            try (WorldEndpoints eps = WorldEndpoints.open(w, d, SharingConfig.parse(level), 2,
                    MessageSuite.OPTS.withDepths(256, 128), ProgressMode.CALLER, SlotAddressing.ANY_SLOT)) {
                SlotThreads.run(eps, 2, w.rank(), 64, (ep, buf) -> {
                    Messages m = ep.messages();
                    if (ep.index() != w.rank()) {
                        while (!done.get()) {
                            m.progress();
                            Thread.yield(); // four threads on the machine's cores
                        }
                        return;
                    }
                    MessageStatus st = new MessageStatus();
                    var mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
                    long tid = Thread.currentThread().threadId();
                    int peerSlot = 1 - w.rank();
                    run(m, w.rank(), peerSlot, buf, st, 30_000);
                    for (int k = 0; k < 3; k++) {
                        long before = mx.getThreadAllocatedBytes(tid);
                        run(m, w.rank(), peerSlot, buf, st, 20_000);
                        least[0] = Math.min(least[0], mx.getThreadAllocatedBytes(tid) - before);
                    }
                    done.set(true);
                });
            }
            return least[0];
        });
        for (int r = 0; r < 2; r++) {
            long least = (Long) result.get(r);
            assertTrue(least < 4096, "rank " + r + " allocated " + least + " bytes in the least of three windows");
        }
    }

    /** {@code n} round trips: rank 0 sends then receives, rank 1 receives then sends back. */
    private static void run(Messages m, int me, MemorySegment buf, MessageStatus st, int n) {
        run(m, me, -1, buf, st, n);
    }

    /** {@link #run(Messages, int, MemorySegment, MessageStatus, int)} to slot {@code slot} of the other rank (-1: the same index). */
    private static void run(Messages m, int me, int slot, MemorySegment buf, MessageStatus st, int n) {
        int other = 1 - me;
        for (int i = 0; i < n; i++) {
            if (me == 0) {
                buf.set(ValueLayout.JAVA_LONG, 0, i);
                send(m, other, slot, buf);
            }
            int q = m.recv(other, 3, Messages.ALL_BITS, buf, 8, 8);
            if (q < 0 || !m.waitFor(q, st) || st.error() != 0 || buf.get(ValueLayout.JAVA_LONG, 8) != i) {
                throw new IllegalStateException("round trip " + i + " failed: " + q + " " + st);
            }
            if (me == 1) {
                buf.set(ValueLayout.JAVA_LONG, 0, i);
                send(m, other, slot, buf);
            }
        }
    }

    private static void send(Messages m, int to, int slot, MemorySegment buf) {
        int rc;
        while ((rc = slot < 0 ? m.send(to, 3, buf, 0, 8) : m.send(to, slot, 3, buf, 0, 8)) == Messages.BACK_PRESSURED) {
            Thread.onSpinWait();
        }
        if (rc != Messages.COMPLETED) {
            throw new IllegalStateException("send: " + rc);
        }
    }
}
