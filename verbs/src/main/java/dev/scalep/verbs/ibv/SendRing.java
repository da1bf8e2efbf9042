package dev.scalep.verbs.ibv;

import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The send-queue accounting of one {@link IbvQp}, without a lock: how many WQEs are posted and not
 * yet retired by a completion. {@code ring[k & mask]} holds the cumulative post count at the k-th
 * signaled WQE; on an in-order device a send completion retires every WQE up to the next signaled
 * one. The posting side (one thread at a time) writes the ring, then publishes the tail and the post
 * count with release stores; pollers (any number) advance the head and the retired count by
 * compare-and-set. No allocation after construction.
 */
final class SendRing {
    private static final VarHandle POSTED, TAIL, HEAD, RETIRED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            POSTED = l.findVarHandle(SendRing.class, "posted", long.class);
            TAIL = l.findVarHandle(SendRing.class, "tail", long.class);
            HEAD = l.findVarHandle(SendRing.class, "head", long.class);
            RETIRED = l.findVarHandle(SendRing.class, "retired", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final long[] ring;
    private final int mask;
    /** Written by the poster only. */
    private long posted, tail;
    /** Advanced by pollers with CAS. */
    private long head, retired;

    /** Room for {@code depth} outstanding WQEs. */
    SendRing(int depth) {
        this.ring = new long[Integer.highestOneBit(Math.max(1, depth)) << 1];
        this.mask = ring.length - 1;
    }

    /** WQEs posted and not retired (acquire reads; any thread). */
    int outstanding() {
        long r = (long) RETIRED.getAcquire(this);
        return (int) Math.max(0, (long) POSTED.getAcquire(this) - r);
    }

    /** The post count before a post (poster only). */
    long postedMark() {
        return posted;
    }

    /** The ring's tail before a post (poster only). */
    long tailMark() {
        return tail;
    }

    /**
     * Publish records {@code [from, to)} of {@code wrs} as posted on top of the marks taken before
     * the post: a ring entry per signaled record ({@code allSignaled}: every record), then the tail
     * and the count with release. Called before the native post (a completion may be polled before
     * it returns) and again with the accepted prefix when the provider refused the rest (no
     * completion ever comes for those). Poster only.
     */
    void publish(SendWorkRequests wrs, int from, int to, long postedMark, long tailMark, boolean allSignaled) {
        long p = postedMark;
        long t = tailMark;
        for (int i = from; i < to; i++) {
            p++;
            if (allSignaled || (wrs.flags(i) & SendFlags.SIGNALED) != 0) {
                ring[(int) (t & mask)] = p;
                t++;
            }
        }
        TAIL.setRelease(this, t);
        POSTED.setRelease(this, p);
    }

    /**
     * A send completion: retire every WQE up to the next signaled one, or one WQE when no signaled
     * entry is pending (an error completion of an unsignaled WQE). Any thread.
     */
    void completed() {
        while (true) {
            long h = (long) HEAD.getAcquire(this);
            if (h != (long) TAIL.getAcquire(this)) {
                long upTo = ring[(int) (h & mask)];
                if (HEAD.compareAndSet(this, h, h + 1)) {
                    long r;
                    do {
                        r = (long) RETIRED.getAcquire(this);
                    } while (r < upTo && !RETIRED.compareAndSet(this, r, upTo));
                    return;
                }
            } else {
                long r = (long) RETIRED.getAcquire(this);
                if (r >= (long) POSTED.getAcquire(this) || RETIRED.compareAndSet(this, r, r + 1)) {
                    return;
                }
            }
        }
    }

    /** The QP went to RESET: its send queue is empty and no completion will come for what was outstanding. */
    void reset() {
        HEAD.setRelease(this, (long) TAIL.getAcquire(this));
        RETIRED.setRelease(this, (long) POSTED.getAcquire(this));
    }
}
