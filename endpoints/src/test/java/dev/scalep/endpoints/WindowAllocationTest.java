package dev.scalep.endpoints;

import com.sun.management.ThreadMXBean;
import dev.scalep.policies.SharingConfig;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.management.ManagementFactory;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The window data path allocates nothing once warm: 8-byte puts, gets, non-fetching adds and
 * fetch-and-adds (where the device has atomics), alternately to the other rank and to the rank
 * itself (its loopback), a flush every 64 operations; the initiating
 * thread's own allocation over 50,000 operations stays under 4 KiB in at least one of three
 * consecutive windows (an allocation per operation shows in every window, a late JIT one-off in one).
 * With the windows mapped ({@link WorldEndpoints#mapWindows}) the mix adds compare-and-swap and
 * swap, and runs the atomics on sim:efa too (CPU atomic instructions on the mapping).
 */
class WindowAllocationTest {
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"sim:mlx5, static, false", "sim:mlx5, mpi-threads, false", "sim:efa, static, false", "sim:mlx5, static, true",
            "sim:efa, mpi-everywhere, true"})
    @Timeout(180)
    void onesidedOperationsDoNotAllocate(String devName, String level, boolean mapped) throws Exception {
        Device d = Devices.byName(devName);
        List<Object> result = LocalRanks.run(2, 120_000, w -> {
            try (WorldEndpoints eps = WorldEndpoints.open(w, d, SharingConfig.parse(level), 1, WindowSuite.OPTS)) {
                eps.mapWindows(mapped);
                Window win = eps.allocateWindow(4096);
                Window mine = eps.allocateWindow(4096);
                long least = Long.MAX_VALUE;
                if (w.rank() == 0) {
                    if (win.mapped(1) != mapped) {
                        throw new IllegalStateException("rank 1's part mapped: " + win.mapped(1) + ", asked " + mapped);
                    }
                    boolean atomics = d.capabilities().atomicCap().supported() || mapped;
                    try (RankEndpoint ep = eps.acquire()) {
                        var mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
                        long tid = Thread.currentThread().threadId();
                        run(ep, win, mine, atomics, mapped, 100_000);
                        for (int k = 0; k < 3 && least >= 4096; k++) {
                            long before = mx.getThreadAllocatedBytes(tid);
                            run(ep, win, mine, atomics, mapped, 50_000);
                            least = Math.min(least, mx.getThreadAllocatedBytes(tid) - before);
                        }
                    }
                }
                w.barrier();
                mine.close();
                win.close();
                return least;
            }
        });
        long least = (Long) result.get(0);
        assertTrue(least < 4096, "rank 0 allocated " + least + " bytes in the least of three 50,000-operation windows");
    }

    private static void run(RankEndpoint ep, Window win, Window mine, boolean atomics, boolean mapped, int ops) {
        for (int i = 0; i < ops; i++) {
            int slot = (i & 63) * 8;
            int r = (i & 4) == 0 ? 1 : 0;
            int rc;
            do {
                rc = mapped && (i & 8) != 0 ? switch (i & 3) {
                    case 0 -> ep.compareAndSwap(r, win, 3072 + slot, i, i + 1, mine, 2048 + slot);
                    case 1 -> ep.swap(r, win, 3072 + slot, i, mine, 2048 + slot);
                    default -> ep.add(r, win, 1024 + slot, 1);
                } : switch (i & 3) {
                    case 0 -> ep.put(r, win, slot, mine, slot, 8);
                    case 1 -> ep.get(r, win, slot, mine, 512 + slot, 8);
                    case 2 -> atomics ? ep.add(r, win, 1024 + slot, 1) : ep.put(r, win, 1024 + slot, mine, slot, 8);
                    default -> atomics ? ep.fetchAdd(r, win, 2048 + slot, 1, mine, 1024 + slot)
                            : ep.get(r, win, 2048 + slot, mine, 1024 + slot, 8);
                };
            } while (rc == Endpoint.BACK_PRESSURED);
            if (rc != Endpoint.OK) {
                throw new IllegalStateException("operation " + i + ": " + Endpoint.outcomeName(rc));
            }
            if ((i & 63) == 63 && !(ep.flush(1) && ep.flush(0))) {
                throw new IllegalStateException("flush failed at " + i);
            }
        }
        if (!ep.flush()) {
            throw new IllegalStateException("final flush failed");
        }
    }
}
