package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A window closed while another thread keeps operating on it through its mapping: a mapped
 * operation is complete at return, so nothing is in flight and the close succeeds at once, and
 * the operating thread's next operation (or the one the close met) fails with an
 * IllegalStateException naming the window; never an access to freed memory (the memory is
 * unmapped when the window is freed, so such an access would crash the JVM). Two ranks in one
 * process, each with a thread putting, getting and running every atomic on the other rank's
 * part without pause; the main threads close the window collectively once each thread has done
 * 20,000 operations.
 */
class MappedCloseTest {
    private static final int BEFORE_CLOSE = 20_000;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"sim:mlx5, mpi-everywhere", "sim:efa, static"})
    @Timeout(120)
    void closeUnderMappedOperationsFailsThemAndFreesNothingInUse(String devName, String level) throws Exception {
        Device d = Devices.byName(devName);
        List<Object> result = LocalRanks.run(2, 60_000, w -> {
            try (WorldEndpoints eps = WorldEndpoints.open(w, d, SharingConfig.parse(level), 1, WindowSuite.OPTS)) {
                eps.mapWindows(true);
                Window win = eps.allocateWindow(4096);
                Window mine = eps.allocateWindow(4096);
                int peer = 1 - w.rank();
                if (!win.mapped(peer)) {
                    throw new IllegalStateException("precondition: rank " + peer + "'s part is not mapped");
                }
                CountDownLatch warm = new CountDownLatch(1);
                AtomicReference<Throwable> ended = new AtomicReference<>();
                long[] done = new long[1];
                Thread worker = Thread.ofPlatform().name("rank" + w.rank() + "-mapped").start(() -> {
                    try (RankEndpoint ep = eps.acquire()) {
                        for (long i = 0; ; i++) {
                            int slot = (int) (i & 63) * 8;
                            int rc = switch ((int) (i % 6)) {
                                case 0 -> ep.put(peer, win, slot, mine, slot, 8);
                                case 1 -> ep.get(peer, win, slot, mine, 512 + slot, 8);
                                case 2 -> ep.fetchAdd(peer, win, 1024 + slot, 1, mine, 1024 + slot);
                                case 3 -> ep.compareAndSwap(peer, win, 2048 + slot, i, i + 1, mine, 2048 + slot);
                                case 4 -> ep.add(peer, win, 3072 + slot, 1);
                                default -> ep.swap(peer, win, 3584 + slot, i, mine, 3584 + slot);
                            };
                            if (rc != Endpoint.OK) {
                                throw new AssertionError("operation " + i + " returned " + Endpoint.outcomeName(rc));
                            }
                            done[0] = i + 1;
                            if (i + 1 == BEFORE_CLOSE) {
                                warm.countDown();
                            }
                        }
                    } catch (Throwable t) {
                        ended.set(t);
                    }
                });
                if (!warm.await(60, TimeUnit.SECONDS)) {
                    throw new AssertionError("rank " + w.rank() + ": the mapped operations did not reach " + BEFORE_CLOSE
                            + " before the close: " + ended.get());
                }
                win.close(); // must not wait for the worker: nothing of it is in flight
                worker.join(60_000);
                Throwable t = ended.get();
                mine.close();
                if (worker.isAlive() || !(t instanceof IllegalStateException)) {
                    return "rank " + w.rank() + ": the worker " + (worker.isAlive() ? "still runs" : "ended with " + t);
                }
                String m = t.getMessage();
                if (!m.contains("window " + win.id() + " is closed") && !m.contains("window " + win.id() + " was closed under")) {
                    return "rank " + w.rank() + ": " + m;
                }
                return done[0] >= BEFORE_CLOSE ? "ok" : "rank " + w.rank() + ": only " + done[0] + " operations";
            }
        });
        assertEquals(List.of("ok", "ok"), result);
    }
}
