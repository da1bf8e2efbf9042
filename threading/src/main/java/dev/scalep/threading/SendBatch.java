package dev.scalep.threading;

import dev.scalep.verbs.Opcode;

/**
 * The send request carrier: a thread's staged send work requests in primitive arrays (no object per
 * request), from the endpoint down to a {@link SendPath}, which writes them into native work
 * requests. A request is staged with {@link #add(long, Opcode, int)}, which returns its index, and
 * described with the setters that apply to it ({@link #local}, {@link #header}, {@link #remote},
 * {@link #imm}, {@link #atomic}, {@link #peer}); fields not set are zero (no SGE, no immediate, no
 * operands, peer 0). At most two SGEs per request: an optional header and the payload, sent back to
 * back. An atomic ({@link Opcode#isAtomic}) names its remote word with {@link #remote}, its 8-byte
 * result buffer with {@link #local} and its operands with {@link #atomic}.
 *
 * <p>Not thread-safe: owned by the thread that fills it; reusable after {@link #clear()}.
 */
public final class SendBatch {
    final long[] wrId;
    final Opcode[] op;
    final int[] flags;
    final long[] localAddr;
    final int[] length;
    final int[] lkey;
    final long[] headerAddr;
    final int[] headerLength;
    final long[] remoteAddr;
    final int[] rkey;
    final int[] imm;
    /** The compare value (CAS) or addend (FAA) of an atomic. */
    final long[] compareAdd;
    /** The swap value of a compare-and-swap. */
    final long[] swap;
    final int[] peer;
    private final int capacity;
    private int count;
    /** Requests staged with a header since the last {@link #clear()}. */
    private int headers;

    public SendBatch(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
        }
        this.capacity = capacity;
        wrId = new long[capacity];
        op = new Opcode[capacity];
        flags = new int[capacity];
        localAddr = new long[capacity];
        length = new int[capacity];
        lkey = new int[capacity];
        headerAddr = new long[capacity];
        headerLength = new int[capacity];
        remoteAddr = new long[capacity];
        rkey = new int[capacity];
        imm = new int[capacity];
        compareAdd = new long[capacity];
        swap = new long[capacity];
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
        headers = 0;
    }

    /** Requests of this batch that carry a {@link #header}. */
    public int headers() {
        return headers;
    }

    /**
     * Stage one work request and return its index, or -1 when the batch is full. {@code flags} are
     * {@link dev.scalep.verbs.SendFlags} bits. Every other field starts at zero.
     */
    public int add(long wrId, Opcode op, int flags) {
        int i = count;
        if (i == capacity) {
            return -1;
        }
        this.wrId[i] = wrId;
        this.op[i] = op;
        this.flags[i] = flags;
        localAddr[i] = 0;
        length[i] = 0;
        lkey[i] = 0;
        headerAddr[i] = 0;
        headerLength[i] = 0;
        remoteAddr[i] = 0;
        rkey[i] = 0;
        imm[i] = 0;
        compareAdd[i] = 0;
        swap[i] = 0;
        peer[i] = 0;
        count = i + 1;
        return i;
    }

    /**
     * Stage one work request with every field but a header in one call, each field written once
     * (the endpoint's data path): as {@link #add(long, Opcode, int)} followed by {@link #local},
     * {@link #remote}, {@link #imm} and {@link #peer}. Returns its index, or -1 when the batch is full.
     */
    public int add(long wrId, Opcode op, int flags, long localAddr, int length, int lkey, long remoteAddr, int rkey,
                   int imm, int peer) {
        int i = count;
        if (i == capacity) {
            return -1;
        }
        this.wrId[i] = wrId;
        this.op[i] = op;
        this.flags[i] = flags;
        this.localAddr[i] = localAddr;
        this.length[i] = length;
        this.lkey[i] = lkey;
        headerAddr[i] = 0;
        headerLength[i] = 0;
        this.remoteAddr[i] = remoteAddr;
        this.rkey[i] = rkey;
        this.imm[i] = imm;
        this.peer[i] = peer;
        compareAdd[i] = 0;
        swap[i] = 0;
        count = i + 1;
        return i;
    }

    /** The payload of request {@code i}: {@code length} bytes at {@code addr} of memory with {@code lkey}. */
    public SendBatch local(int i, long addr, int length, int lkey) {
        localAddr[i] = addr;
        this.length[i] = length;
        this.lkey[i] = lkey;
        return this;
    }

    /**
     * A header sent before the payload of request {@code i}, in the same memory (its {@code lkey}):
     * one work request with two SGEs. Only paths whose work requests hold two SGEs take it
     * ({@link SendPath#maxSge()}).
     */
    public SendBatch header(int i, long addr, int length) {
        if (length > 0 && headerLength[i] == 0) {
            headers++;
        }
        headerAddr[i] = addr;
        headerLength[i] = length;
        return this;
    }

    /** The remote address and rkey of an RDMA request {@code i}. */
    public SendBatch remote(int i, long addr, int rkey) {
        remoteAddr[i] = addr;
        this.rkey[i] = rkey;
        return this;
    }

    /** The immediate data of request {@code i} (opcodes that carry one). */
    public SendBatch imm(int i, int imm) {
        this.imm[i] = imm;
        return this;
    }

    /**
     * The operands of atomic request {@code i}: the compare value ({@link Opcode#ATOMIC_CMP_AND_SWP})
     * or the addend ({@link Opcode#ATOMIC_FETCH_AND_ADD}), and the swap value (CAS only), host order.
     */
    public SendBatch atomic(int i, long compareAdd, long swap) {
        this.compareAdd[i] = compareAdd;
        this.swap[i] = swap;
        return this;
    }

    /** The index into the send path's address-handle table (connectionless QPs; ignored on RC). */
    public SendBatch peer(int i, int peer) {
        this.peer[i] = peer;
        return this;
    }

    /** Copy request {@code i} of {@code from} to the end of this batch (the caller checked room). */
    void copy(SendBatch from, int i) {
        int k = count;
        wrId[k] = from.wrId[i];
        op[k] = from.op[i];
        flags[k] = from.flags[i];
        localAddr[k] = from.localAddr[i];
        length[k] = from.length[i];
        lkey[k] = from.lkey[i];
        headerAddr[k] = from.headerAddr[i];
        headerLength[k] = from.headerLength[i];
        if (from.headerLength[i] > 0) {
            headers++;
        }
        remoteAddr[k] = from.remoteAddr[i];
        rkey[k] = from.rkey[i];
        imm[k] = from.imm[i];
        compareAdd[k] = from.compareAdd[i];
        swap[k] = from.swap[i];
        peer[k] = from.peer[i];
        count = k + 1;
    }

    public long wrId(int i) {
        return wrId[i];
    }

    public Opcode op(int i) {
        return op[i];
    }

    public int flags(int i) {
        return flags[i];
    }

    /** Replace the flags of request {@code i} (e.g. to signal the last of a batch). */
    public void flags(int i, int f) {
        flags[i] = f;
    }

    public int length(int i) {
        return length[i];
    }

    public int headerLength(int i) {
        return headerLength[i];
    }
}
