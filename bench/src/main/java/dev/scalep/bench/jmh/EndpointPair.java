package dev.scalep.bench.jmh;

import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointManager;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.policies.SharingConfig;
import dev.scalep.endpoints.Completion;
import dev.scalep.verbs.Devices;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The state the endpoint benchmarks share: a connected sender and receiver manager at one sharing
 * level (p = 32 unless given, q = 64, inline), sized for the JMH thread count, and the count of endpoints JMH
 * threads still hold. Opened and closed by the benchmark's trial setup and teardown.
 */
final class EndpointPair {
    final EndpointManager sender;
    final EndpointManager receiver;
    /** Endpoints still held by JMH threads: JMH may run the benchmark's teardown before another thread's {@link Slot} teardown. */
    final AtomicInteger held = new AtomicInteger();

    private EndpointPair(EndpointManager sender, EndpointManager receiver) {
        this.sender = sender;
        this.receiver = receiver;
    }

    static EndpointPair open(String device, String level, int threads) {
        return open(device, level, threads, 32);
    }

    /** As {@link #open(String, String, int)} with postlist {@code postlist} (q = 64, inline). */
    static EndpointPair open(String device, String level, int threads, int postlist) {
        EndpointOptions o = EndpointOptions.DEFAULTS.withFeatures(postlist, 64, 2);
        SharingConfig cfg = SharingConfig.parse(level);
        EndpointManager sender = EndpointManager.open(Devices.byName(device), cfg, threads, o);
        EndpointManager receiver = EndpointManager.open(Devices.byName(device), cfg, threads, o);
        sender.connect(receiver);
        return new EndpointPair(sender, receiver);
    }

    /** Wait (at most 60 s) for the JMH threads to give their endpoints back, then close both managers. */
    void close() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (held.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        sender.close();
        receiver.close();
    }

    /** One JMH thread's endpoint and write cursor; the benchmark's per-thread state extends it. */
    static class Slot {
        Endpoint ep;
        final Completion c = new Completion();
        long id;
        int offset;

        /** Acquire this thread's endpoint from {@code pair}'s sender. */
        final void take(EndpointPair pair) {
            ep = pair.sender.acquire();
            pair.held.incrementAndGet();
            offset = (ep.index() & 7) * 2;
        }

        /** Drain (at most 30 s) and release the endpoint. */
        final void giveBack(EndpointPair pair) {
            if (!ep.drain(TimeUnit.SECONDS.toNanos(30))) {
                throw new IllegalStateException("endpoint " + ep.index() + " did not drain: " + ep.outstanding() + " outstanding");
            }
            try {
                ep.close();
            } finally {
                pair.held.decrementAndGet();
            }
        }
    }
}
