package dev.scalep.endpoints;

import dev.scalep.spmd.LocalWorld;
import dev.scalep.spmd.World;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Runs one body per rank of a {@link LocalWorld}, each rank on its own platform thread, and brings
 * every rank's result to the test thread: a rank that threw fails the test with its throwable as
 * the cause.
 */
final class LocalRanks {
    /** What one rank runs; its result is handed back in rank order. */
    @FunctionalInterface
    interface Body {
        Object run(World w) throws Exception;
    }

    private LocalRanks() {
    }

    /** Each rank's result, by rank, once every rank has returned. */
    static List<Object> run(int ranks, long fenceTimeoutMillis, Body body) throws InterruptedException {
        List<World> worlds = LocalWorld.create(ranks, fenceTimeoutMillis);
        AtomicReferenceArray<Object> results = new AtomicReferenceArray<>(ranks);
        List<Thread> ts = new ArrayList<>();
        for (World w : worlds) {
            ts.add(Thread.ofPlatform().name("rank-" + w.rank()).start(() -> {
                try {
                    results.set(w.rank(), body.run(w));
                } catch (Throwable t) {
                    results.set(w.rank(), t);
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        List<Object> out = new ArrayList<>(ranks);
        for (int r = 0; r < ranks; r++) {
            if (results.get(r) instanceof Throwable t) {
                throw new AssertionError("rank " + r + " failed: " + t, t);
            }
            out.add(results.get(r));
        }
        return out;
    }
}
