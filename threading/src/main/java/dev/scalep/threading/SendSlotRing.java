package dev.scalep.threading;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A bounded multi-producer, single-consumer ring of send work requests stored as primitives: one
 * 64-byte slot of eight longs per request, the first being the slot's sequence (Vyukov's bounded
 * queue). A producer claims position {@code t} by CAS on the tail when the slot's sequence equals
 * {@code t}, writes the fields and publishes with sequence {@code t + 1}; the consumer reads a slot
 * whose sequence is {@code head + 1} and frees it with sequence {@code head + capacity}.
 *
 * <p>Slot layout: seq, wrId, localAddr, remoteAddr, opcode:flags, length:lkey, rkey:imm, peer.
 * {@link #offer} is thread-safe; the consumer methods must be called by one thread at a time
 * (handing the consumer role over must itself create a happens-before edge, e.g. a CAS).
 */
final class SendSlotRing {
    static final int SLOT = 8;
    private static final int PAD = 16;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] buf;
    private final int capacity;
    private final int mask;
    private final PaddedAtomicLong tail = new PaddedAtomicLong();
    /** Next position to consume; consumer-owned (the role hand-off orders it). */
    private long head;
    /** {@link #head} as last published by the consumer, for other threads (volatile). */
    private final PaddedAtomicLong publishedHead = new PaddedAtomicLong();

    SendSlotRing(int minCapacity) {
        int cap = Integer.highestOneBit(Math.max(2, minCapacity - 1)) << 1;
        this.capacity = cap;
        this.mask = cap - 1;
        this.buf = new long[PAD + cap * SLOT + PAD];
        for (int i = 0; i < cap; i++) {
            buf[PAD + i * SLOT] = i;
        }
        LONGS.storeStoreFence();
    }

    int capacity() {
        return capacity;
    }

    private int base(long pos) {
        return PAD + (int) (pos & mask) * SLOT;
    }

    /** Append one request; false when the ring is full. Thread-safe, lock-free. */
    boolean offer(long wrId, int opcode, int flags, long localAddr, int length, int lkey,
                  long remoteAddr, int rkey, int imm, int peer) {
        long t = tail.get();
        int b;
        for (;;) {
            b = base(t);
            long seq = (long) LONGS.getAcquire(buf, b);
            long dif = seq - t;
            if (dif == 0) {
                if (tail.compareAndSet(t, t + 1)) {
                    break;
                }
                t = tail.get();
            } else if (dif < 0) {
                return false;
            } else {
                t = tail.get();
            }
        }
        buf[b + 1] = wrId;
        buf[b + 2] = localAddr;
        buf[b + 3] = remoteAddr;
        buf[b + 4] = ((long) opcode << 32) | (flags & 0xFFFF_FFFFL);
        buf[b + 5] = ((long) length << 32) | (lkey & 0xFFFF_FFFFL);
        buf[b + 6] = ((long) rkey << 32) | (imm & 0xFFFF_FFFFL);
        buf[b + 7] = peer;
        // Volatile publish: pairs with the consumer's volatile read in readyBase(). It must be
        // sequentially consistent with the producer's later CAS on the combiner flag, so that a
        // combiner releasing the flag and then looking at the ring cannot miss this slot.
        LONGS.setVolatile(buf, b, t + 1);
        return true;
    }

    /**
     * Claim {@code n} consecutive positions with one atomic add, for a caller that holds a credit
     * for each: credits never exceed the capacity, so the slots are free (their previous occupant
     * was consumed before its credit could come back). Returns the first position; fill each with
     * {@link #put} and publish with {@link #publish}.
     */
    long claim(int n) {
        return tail.getAndAdd(n);
    }

    /**
     * Write the request at claimed position {@code pos} and publish it with a release store. The
     * caller issues a full fence after its last publish and before it competes for the consumer
     * role (the Dekker pairing with a consumer that releases the role, then re-reads the ring).
     */
    void put(long pos, long wrId, int opcode, int flags, long localAddr, int length, int lkey,
             long remoteAddr, int rkey, int imm, int peer) {
        int b = base(pos);
        // The slot is free by the credit invariant; the acquire pairs with consume()'s release.
        while ((long) LONGS.getAcquire(buf, b) != pos) {
            Thread.onSpinWait(); // unreachable while the caller holds a credit per position
        }
        buf[b + 1] = wrId;
        buf[b + 2] = localAddr;
        buf[b + 3] = remoteAddr;
        buf[b + 4] = ((long) opcode << 32) | (flags & 0xFFFF_FFFFL);
        buf[b + 5] = ((long) length << 32) | (lkey & 0xFFFF_FFFFL);
        buf[b + 6] = ((long) rkey << 32) | (imm & 0xFFFF_FFFFL);
        buf[b + 7] = peer;
        LONGS.setRelease(buf, b, pos + 1);
    }

    /** Base index of the published slot at the head, or -1 (empty, or its producer is mid-write). Consumer only. */
    int readyBase() {
        long h = head;
        int b = base(h);
        return (long) LONGS.getVolatile(buf, b) == h + 1 ? b : -1;
    }

    /**
     * Whether the slot at the last published head is ready: any thread. All reads are volatile, so
     * a producer that published and then finds nothing ready knows that the consumer has taken its
     * slot, or that the slot ahead of it is still being written (and its producer will look again).
     */
    boolean hasReady() {
        long h = publishedHead.get();
        return (long) LONGS.getVolatile(buf, base(h)) == h + 1;
    }

    /** Whether nothing is claimed beyond the head (no request queued or being written). Consumer only. */
    boolean drained() {
        return tail.get() == head;
    }

    /** Free the head slot read through {@link #readyBase()}. Consumer only. */
    void consume(int b) {
        long h = head;
        LONGS.setRelease(buf, b, h + capacity); // pairs with the producers' acquire in offer()
        head = h + 1;
    }

    /** Make the consumer's head visible to {@link #hasReady()} (volatile store). Consumer only, before giving up the role. */
    void publishHead() {
        publishedHead.set(head);
    }

    long wrId(int b) {
        return buf[b + 1];
    }

    long localAddr(int b) {
        return buf[b + 2];
    }

    long remoteAddr(int b) {
        return buf[b + 3];
    }

    int opcode(int b) {
        return (int) (buf[b + 4] >>> 32);
    }

    int flags(int b) {
        return (int) buf[b + 4];
    }

    int length(int b) {
        return (int) (buf[b + 5] >>> 32);
    }

    int lkey(int b) {
        return (int) buf[b + 5];
    }

    int rkey(int b) {
        return (int) (buf[b + 6] >>> 32);
    }

    int imm(int b) {
        return (int) buf[b + 6];
    }

    int peer(int b) {
        return (int) buf[b + 7];
    }

    /** Requests claimed and not yet consumed (an estimate under concurrency). */
    long size() {
        return tail.get() - publishedHead.get();
    }
}
