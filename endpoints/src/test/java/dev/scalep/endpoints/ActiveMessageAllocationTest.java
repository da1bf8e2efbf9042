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

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The active-message path (send, the receive hook, dispatch, the handler's view, a reply sent from
 * inside the handler, credits) allocates nothing once warm: rank 0 sends an 8-byte active message
 * to rank 1, whose handler replies with one, whose handler on rank 0 counts it; each rank's
 * thread allocates under 4 KiB in at least one of three consecutive windows of 20,000 round
 * trips (an allocation per message shows in every window).
 */
class ActiveMessageAllocationTest {
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"sim:mlx5, static", "sim:mlx5, mpi-threads", "sim:efa, static"})
    @Timeout(180)
    void activeMessagesDoNotAllocate(String devName, String level) throws Exception {
        Device d = Devices.byName(devName);
        List<Object> result = LocalRanks.run(2, 120_000, w -> {
            try (WorldEndpoints eps = WorldEndpoints.open(w, d, SharingConfig.parse(level), 1, MessageSuite.OPTS);
                 Arena arena = Arena.ofConfined()) {
                MemorySegment buf = arena.allocate(64, 64);
                long least = Long.MAX_VALUE;
                try (RankEndpoint ep = eps.acquire()) {
                    ActiveMessages am = ep.activeMessages();
                    long[] pongs = {0};
                    long[] failed = {0};
                    int ping = am.register(m -> {
                        if (m.length() != 8 || m.data().get(ValueLayout.JAVA_LONG_UNALIGNED, m.offset()) != m.header0()
                                || m.header0() != pongs[0]
                                || m.reply(1, m.header0(), 0, m.data(), m.offset(), 8) != ActiveMessages.COMPLETED) {
                            failed[0]++; // one round trip at a time: the reply always has a credit
                        }
                        pongs[0]++; // on rank 1: pings served
                    });
                    int pong = am.register(m -> {
                        if (m.header0() != pongs[0]) {
                            failed[0]++;
                        }
                        pongs[0]++;
                    });
                    if (ping != 0 || pong != 1 || !ep.barrier()) {
                        throw new IllegalStateException("register");
                    }
                    var mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
                    long tid = Thread.currentThread().threadId();
                    long done = run(am, w.rank(), buf, pongs, 0, 30_000);
                    for (int k = 0; k < 3; k++) { // both ranks run the same round trips
                        long before = mx.getThreadAllocatedBytes(tid);
                        done = run(am, w.rank(), buf, pongs, done, 20_000);
                        least = Math.min(least, mx.getThreadAllocatedBytes(tid) - before);
                    }
                    if (failed[0] != 0 || !ep.barrier()) {
                        throw new IllegalStateException(failed[0] + " messages were wrong");
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
     * Round trips {@code from..from+n}: rank 0 sends a ping and progresses until its pong ran
     * ({@code count} counts pongs there); rank 1 progresses, its handler replying, until it served
     * as many pings ({@code count} counts pings there).
     */
    private static long run(ActiveMessages am, int me, MemorySegment buf, long[] count, long from, int n) {
        long to = from + n;
        if (me == 1) {
            for (long spins = 0; count[0] < to; spins++) {
                if (spins > 1_000_000_000L) {
                    throw new IllegalStateException("rank 0 stopped sending at " + count[0]);
                }
                am.progress();
            }
            return to;
        }
        for (long i = from; i < to; i++) {
            buf.set(ValueLayout.JAVA_LONG, 0, i);
            int rc;
            while ((rc = am.send(1, 0, i, 0, buf, 0, 8)) == ActiveMessages.BACK_PRESSURED) {
                am.progress();
            }
            if (rc != ActiveMessages.COMPLETED) {
                throw new IllegalStateException("send: " + rc);
            }
            for (long spins = 0; count[0] <= i; spins++) {
                if (spins > 100_000_000L) {
                    throw new IllegalStateException("no pong for ping " + i);
                }
                am.progress();
            }
        }
        return to;
    }
}
