package dev.scalep.threading;

import dev.scalep.verbs.Opcode;

/**
 * A thread's staged send work requests in primitive arrays (no object per request), handed to a
 * {@link SendPath} as one postlist. At most one SGE per request. Not thread-safe: owned by the
 * thread that fills it; reusable after {@link #clear()}.
 */
public final class SendBatch {
    final long[] wrId;
    final int[] opcode;
    final int[] flags;
    final long[] localAddr;
    final int[] length;
    final int[] lkey;
    final long[] remoteAddr;
    final int[] rkey;
    final int[] imm;
    final int[] peer;
    private final int capacity;
    private int count;

    public SendBatch(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
        }
        this.capacity = capacity;
        wrId = new long[capacity];
        opcode = new int[capacity];
        flags = new int[capacity];
        localAddr = new long[capacity];
        length = new int[capacity];
        lkey = new int[capacity];
        remoteAddr = new long[capacity];
        rkey = new int[capacity];
        imm = new int[capacity];
        peer = new int[capacity];
    }

    public int capacity() {
        return capacity;
    }

    public int count() {
        return count;
    }

    public boolean isFull() {
        return count == capacity;
    }

    public void clear() {
        count = 0;
    }

    /**
     * Stage one work request; returns its index or -1 when the batch is full. {@code length} 0
     * means no SGE. {@code peer} indexes the send path's address-handle table (connectionless QPs;
     * ignored on RC). {@code flags} are {@link dev.scalep.verbs.SendFlags} bits.
     */
    public int add(long wrId, Opcode op, int flags, long localAddr, int length, int lkey,
                   long remoteAddr, int rkey, int imm, int peer) {
        int i = count;
        if (i == capacity) {
            return -1;
        }
        put(wrId, op.code, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
        return i;
    }

    /** {@link #add} with the opcode as its code; the caller has checked there is room. */
    void put(long wrId, int opcode, int flags, long localAddr, int length, int lkey, long remoteAddr, int rkey, int imm,
             int peer) {
        int i = count;
        this.wrId[i] = wrId;
        this.opcode[i] = opcode;
        this.flags[i] = flags;
        this.localAddr[i] = localAddr;
        this.length[i] = length;
        this.lkey[i] = lkey;
        this.remoteAddr[i] = remoteAddr;
        this.rkey[i] = rkey;
        this.imm[i] = imm;
        this.peer[i] = peer;
        count = i + 1;
    }

    public long wrId(int i) {
        return wrId[i];
    }

    public int flags(int i) {
        return flags[i];
    }

    /** Replace the flags of request {@code i} (e.g. to signal the last of a batch). */
    public void flags(int i, int f) {
        flags[i] = f;
    }

    public int opcode(int i) {
        return opcode[i];
    }
}
