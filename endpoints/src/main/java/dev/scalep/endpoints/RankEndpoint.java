package dev.scalep.endpoints;

import java.util.ArrayList;
import java.util.List;

/**
 * One thread's reach into every other rank of a world ({@link WorldEndpoints#acquire()}):
 * {@link #to(int)} names the peer rank (the only way to direct an endpoint of a world) and returns
 * the endpoint positioned at it, on which the
 * usual data-path calls post ({@code ep.to(r).write(...)}). On RC that is the thread's endpoint of
 * the per-peer manager for rank {@code r}; on a connectionless device it is the thread's single
 * endpoint with rank {@code r}'s address handle and buffers selected. Thread-bound like
 * {@link Endpoint}; {@link #to} and {@link #poll} do not allocate.
 */
public final class RankEndpoint implements AutoCloseable {
    private final WorldEndpoints owner;
    private final int index;
    private final Endpoint[] byRank;
    private final Endpoint[] distinct;
    private final boolean shared;
    private final int me;
    private int next;
    private boolean released;

    RankEndpoint(WorldEndpoints owner, int index, Endpoint[] byRank, boolean shared, int me) {
        this.owner = owner;
        this.index = index;
        this.byRank = byRank;
        this.shared = shared;
        this.me = me;
        List<Endpoint> d = new ArrayList<>();
        for (Endpoint e : byRank) {
            if (e != null && !d.contains(e)) {
                d.add(e);
            }
        }
        this.distinct = d.toArray(new Endpoint[0]);
    }

    /** The endpoint that reaches rank {@code rank} (another rank than this one), directed at it. */
    public Endpoint to(int rank) {
        if (rank < 0 || rank >= byRank.length || rank == me) {
            throw new IllegalArgumentException("rank " + rank + " is not a peer of rank " + me + " in a world of " + byRank.length);
        }
        Endpoint e = byRank[rank];
        return shared ? e.to(WorldEndpoints.peerIndex(rank, me)) : e;
    }

    /** This thread's slot, 0..threads-1: it is connected to the same slot on every other rank. */
    public int index() {
        return index;
    }

    /** Take one completion of any of this thread's endpoints into {@code out}; false when none is waiting. */
    public boolean poll(Completion out) {
        for (int i = 0; i < distinct.length; i++) {
            Endpoint e = distinct[next];
            next = next + 1 == distinct.length ? 0 : next + 1;
            if (e.poll(out)) {
                return true;
            }
        }
        return false;
    }

    /** Flush and wait until everything posted to every rank has completed, or {@code timeoutNanos} pass. */
    public boolean drain(long timeoutNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        for (Endpoint e : distinct) {
            if (!e.drain(Math.max(0, deadline - System.nanoTime()))) {
                return false;
            }
        }
        return true;
    }

    Endpoint[] distinct() {
        return distinct;
    }

    /**
     * Give this thread's endpoints back to the world (call it from the thread that acquired them,
     * with nothing outstanding); {@code try (RankEndpoint ep = world.acquire()) {...}} does it.
     * Idempotent.
     */
    @Override
    public void close() {
        if (!released) {
            owner.release(this);
            released = true;
        }
    }
}
