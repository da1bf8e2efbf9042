package dev.scalep.endpoints;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs a scenario in every thread slot of one rank: a platform thread per slot acquires its
 * endpoint, runs the body with {@code scratchBytes} of confined scratch memory (none when 0), and
 * ends in the world-wide {@link RankEndpoint#barrier()} whatever happened, so the other ranks are
 * not left waiting; the first failure of any slot reaches the calling thread.
 */
final class SlotThreads {
    /** One slot's part of a scenario. */
    @FunctionalInterface
    interface Body {
        void run(RankEndpoint ep, MemorySegment scratch) throws Exception;
    }

    private SlotThreads() {
    }

    static void run(WorldEndpoints eps, int threads, int rank, long scratchBytes, Body body) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            ts.add(Thread.ofPlatform().name("rank" + rank + "-t" + i).start(() -> {
                try (RankEndpoint ep = eps.acquire(); Arena arena = Arena.ofConfined()) {
                    try {
                        body.run(ep, scratchBytes == 0 ? MemorySegment.NULL : arena.allocate(scratchBytes, 64));
                    } finally {
                        if (!ep.barrier()) {
                            throw new AssertionError("barrier after the scenario");
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError("rank " + rank + ": " + failure.get(), failure.get());
        }
    }
}
