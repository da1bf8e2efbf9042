package dev.scalep.endpoints;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Who may touch one thread slot's endpoints and messages right now, where a rank runs a progress
 * thread ({@link ProgressMode#THREAD}): the thread holding the slot, inside one of its calls, or
 * the progress thread, for one progress pass while that thread is outside every call. One word
 * counts the calls: even means nobody is inside, odd means one thread is; entering is a CAS from
 * even to odd, leaving a release store of the next even value, and a call made from inside a call
 * (a progress inside a send, a reply from a handler) only counts its depth. So the progress thread
 * sees the holder's activity (the word moved) without any write of the holder's but its own
 * entries, and steps in only when the word stood still for one of its passes. Where there is no
 * progress thread there is no guard (the endpoints hold null and pay a null check).
 */
final class SlotGuard {
    private final AtomicLong word = new AtomicLong();
    /** The thread inside (written only by it, before its release and after its CAS). */
    private Thread holder;
    /** Its depth of nested calls (touched only by the holder). */
    private int depth;
    /** The rank's progress thread (set when it starts). */
    private volatile Thread attendant;

    /** Enter a call of the slot: wait (a progress pass at most) while the progress thread is inside. */
    void enter() {
        Thread t = Thread.currentThread();
        if (holder == t) {
            depth++;
            return;
        }
        for (;;) {
            long v = word.get();
            if ((v & 1) == 0 && word.compareAndSet(v, v + 1)) {
                break;
            }
            Thread.onSpinWait();
        }
        holder = t;
        depth = 1;
    }

    /** Leave a call entered with {@link #enter()}. */
    void exit() {
        if (--depth > 0) {
            return;
        }
        holder = null;
        word.setRelease(word.getPlain() + 1);
    }

    /** The word as the progress thread last may compare it: odd while someone is inside. */
    long word() {
        return word.get();
    }

    /**
     * The progress thread: enter if nobody entered since the word read {@code seen} (even); false
     * when someone did or is inside.
     */
    boolean tryEnterIfStill(long seen) {
        if ((seen & 1) != 0 || !word.compareAndSet(seen, seen + 1)) {
            return false;
        }
        holder = Thread.currentThread();
        depth = 1;
        return true;
    }

    /** The rank's progress thread. */
    Thread attendant() {
        return attendant;
    }

    void attendant(Thread t) {
        attendant = t;
    }

    /** Whether {@code t} is inside (the progress thread passes the slot's owner checks this way). */
    boolean heldBy(Thread t) {
        return holder == t;
    }
}
