package dev.scalep.endpoints;

import org.agrona.concurrent.Agent;

import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The progress thread of one rank ({@link ProgressMode#THREAD}), run by an Agrona
 * {@link org.agrona.concurrent.AgentRunner} with a backoff idle strategy: each duty cycle looks at
 * every acquired slot and progresses the ones whose thread made no call since the previous cycle
 * (its {@link SlotGuard} word stood still), holding the guard for one pass. A pass is
 * {@link Messages#progress()} where messages run (post, poll, match, run handlers, return
 * credits), else {@link RankEndpoint#progress()} (serve emulated atomics). Does not allocate.
 */
final class ProgressAgent implements Agent {
    private final SlotGuard[] guards;
    /** Per slot: its current holder's endpoints (set at acquire, cleared at release under the guard). */
    private final AtomicReferenceArray<RankEndpoint> attended;
    private final long[] seen;
    /** The first throwable a pass raised (a handler's), for {@link WorldEndpoints#close()}. */
    final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final String name;

    ProgressAgent(SlotGuard[] guards, AtomicReferenceArray<RankEndpoint> attended, int rank) {
        this.guards = guards;
        this.attended = attended;
        this.seen = new long[guards.length];
        this.name = "scalep-progress-rank" + rank;
    }

    @Override
    public int doWork() {
        int work = 0;
        for (int t = 0; t < guards.length; t++) {
            if (attended.get(t) == null) {
                continue;
            }
            SlotGuard g = guards[t];
            long v = g.word();
            if (v != seen[t] || !g.tryEnterIfStill(v)) {
                seen[t] = v; // the slot's thread is inside a call or made one since the last look
                continue;
            }
            try {
                RankEndpoint re = attended.get(t); // release clears it under the guard
                if (re != null) {
                    work += pass(re);
                }
            } catch (RuntimeException | Error e) {
                failure.compareAndSet(null, e);
            } finally {
                g.exit();
                seen[t] = g.word();
            }
        }
        return work;
    }

    /**
     * This (the progress) thread is inside a handler of slot {@code busy} that calls progress again
     * (its reply back-pressured, waiting for credits): poll the other slots it can enter (nobody
     * inside their calls) without running their handlers. At levels whose threads share a QP, a
     * message for {@code busy} (a credit above all) can land in a receive another slot posted,
     * and its hook runs only when that slot polls; the slots' own threads may be computing, and
     * this thread, spinning in {@code busy}'s handler, would never get to them: the handler would
     * wait for ever for credits that sit in a sibling's ring.
     */
    void pollOthers(int busy) {
        for (int t = 0; t < guards.length; t++) {
            if (t == busy || attended.get(t) == null) {
                continue;
            }
            SlotGuard g = guards[t];
            if (!g.tryEnterIfStill(g.word())) {
                continue; // its thread is inside a call, which polls
            }
            try {
                RankEndpoint re = attended.get(t);
                MessageHub h = re == null ? null : re.hub;
                Messages m = h == null ? null : h.slots[t];
                if (m != null && m.endpoint() == re) {
                    m.pollOnly();
                }
            } finally {
                g.exit();
                seen[t] = g.word();
            }
        }
    }

    private static int pass(RankEndpoint re) {
        MessageHub h = re.hub;
        Messages m = h == null ? null : h.slots[re.index()];
        if (m != null && m.endpoint() == re) {
            return m.progressCounted();
        }
        re.progress();
        return 0;
    }

    @Override
    public String roleName() {
        return name;
    }
}
