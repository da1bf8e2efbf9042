package dev.scalep.threading;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A bounded single-producer, single-consumer ring of completion records stored as primitives
 * (four longs each: wrId, status:opcode, byteLen:imm, qpNum:flags). The producer publishes its tail
 * with a release store that the consumer's acquire load pairs with, and the consumer frees slots
 * the same way through its head; no CAS. One producer and one consumer at a time: a role moving
 * between threads must be handed over with a happens-before edge (the router's poll-role CAS).
 */
public final class CompletionRing {
    private static final int REC = 4;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] buf;
    private final int capacity;
    private final int mask;
    private final PaddedAtomicLong tail = new PaddedAtomicLong();
    private final PaddedAtomicLong head = new PaddedAtomicLong();
    /** Producer's cache of the consumer's head (producer-owned). */
    private long headCache;

    public CompletionRing(int minCapacity) {
        int cap = Integer.highestOneBit(Math.max(2, minCapacity - 1)) << 1;
        this.capacity = cap;
        this.mask = cap - 1;
        this.buf = new long[cap * REC];
    }

    public int capacity() {
        return capacity;
    }

    /** Producer: append one record; false when full. */
    public boolean offer(long wrId, int status, int opcode, int byteLen, int imm, int qpNum, int flags) {
        long t = tail.getPlain();
        if (t - headCache >= capacity) {
            headCache = head.getAcquire(); // pairs with the consumer's release in poll()
            if (t - headCache >= capacity) {
                return false;
            }
        }
        int b = (int) (t & mask) * REC;
        buf[b] = wrId;
        buf[b + 1] = ((long) status << 32) | (opcode & 0xFFFF_FFFFL);
        buf[b + 2] = ((long) byteLen << 32) | (imm & 0xFFFF_FFFFL);
        buf[b + 3] = ((long) qpNum << 32) | (flags & 0xFFFF_FFFFL);
        tail.setRelease(t + 1); // publishes the record; pairs with the consumer's acquire
        return true;
    }

    /** Consumer: take the oldest record into {@code out}; false when empty. */
    public boolean poll(Completion out) {
        long h = head.getPlain();
        if (h == tail.getAcquire()) {
            return false;
        }
        int b = (int) (h & mask) * REC;
        out.wrId = buf[b];
        long x = buf[b + 1];
        out.status = (int) (x >>> 32);
        out.opcode = (int) x;
        x = buf[b + 2];
        out.byteLen = (int) (x >>> 32);
        out.imm = (int) x;
        x = buf[b + 3];
        out.qpNum = (int) (x >>> 32);
        out.flags = (int) x;
        head.setRelease(h + 1); // frees the slot; pairs with the producer's acquire of head
        return true;
    }

    /** Records waiting (a snapshot; any thread). */
    public int size() {
        return (int) (tail.getAcquire() - head.getAcquire());
    }

    public boolean isEmpty() {
        return size() == 0;
    }
}
