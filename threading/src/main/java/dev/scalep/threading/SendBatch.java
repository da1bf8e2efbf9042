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
    /**
     * A request's fields packed into {@value #STRIDE} longs (64 bytes) of one array, so that a
     * request written by one thread and read by another (the combining QP's hand-off) moves one or
     * two cache lines between the cores, not one per field (with an array per field it moved
     * fourteen, and the compare-and-swap that published the record waited for all of them).
     * The atomic operands, rare, live in arrays of their own and are read only for an atomic.
     */
    static final int STRIDE = 8;
    private static final int ID = 0;
    private static final int LADDR = 1;
    private static final int RADDR = 2;
    private static final int HADDR = 3;
    /** length (low 32 bits) and lkey (high). */
    private static final int LEN_LKEY = 4;
    /** rkey (low) and immediate (high). */
    private static final int RKEY_IMM = 5;
    /** the opcode's ordinal (low) and the flags (high). */
    private static final int OP_FLAGS = 6;
    /** the header's length (low) and the peer index (high). */
    private static final int HLEN_PEER = 7;
    private static final Opcode[] OPS = Opcode.values();
    private static final long LOW = 0xffff_ffffL;

    /** The packed requests, {@link #STRIDE} longs each. */
    private final long[] w;
    /** The compare value (CAS) or addend (FAA) of an atomic. */
    private final long[] compareAdd;
    /** The swap value of a compare-and-swap. */
    private final long[] swap;
    private final int capacity;
    private int count;
    /** Requests staged with a header since the last {@link #clear()}. */
    private int headers;

    public SendBatch(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
        }
        this.capacity = capacity;
        w = new long[capacity * STRIDE];
        compareAdd = new long[capacity];
        swap = new long[capacity];
    }

    private static long pack(int low, int high) {
        return (low & LOW) | ((long) high << 32);
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
        return add(wrId, op, flags, 0, 0, 0, 0, 0, 0, 0);
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
        long[] a = w;
        int o = i * STRIDE;
        a[o + ID] = wrId;
        a[o + LADDR] = localAddr;
        a[o + RADDR] = remoteAddr;
        a[o + HADDR] = 0;
        a[o + LEN_LKEY] = pack(length, lkey);
        a[o + RKEY_IMM] = pack(rkey, imm);
        a[o + OP_FLAGS] = pack(op.ordinal(), flags);
        a[o + HLEN_PEER] = pack(0, peer);
        if (op.isAtomic()) {
            compareAdd[i] = 0;
            swap[i] = 0;
        }
        count = i + 1;
        return i;
    }

    /** The payload of request {@code i}: {@code length} bytes at {@code addr} of memory with {@code lkey}. */
    public SendBatch local(int i, long addr, int length, int lkey) {
        int o = i * STRIDE;
        w[o + LADDR] = addr;
        w[o + LEN_LKEY] = pack(length, lkey);
        return this;
    }

    /**
     * A header sent before the payload of request {@code i}, in the same memory (its {@code lkey}):
     * one work request with two SGEs. Only paths whose work requests hold two SGEs take it
     * ({@link SendPath#maxSge()}).
     */
    public SendBatch header(int i, long addr, int length) {
        if (length > 0 && headerLength(i) == 0) {
            headers++;
        }
        int o = i * STRIDE;
        w[o + HADDR] = addr;
        w[o + HLEN_PEER] = pack(length, peer(i));
        return this;
    }

    /** The remote address and rkey of an RDMA request {@code i}. */
    public SendBatch remote(int i, long addr, int rkey) {
        int o = i * STRIDE;
        w[o + RADDR] = addr;
        w[o + RKEY_IMM] = pack(rkey, imm(i));
        return this;
    }

    /** The immediate data of request {@code i} (opcodes that carry one). */
    public SendBatch imm(int i, int imm) {
        int o = i * STRIDE;
        w[o + RKEY_IMM] = pack(rkey(i), imm);
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
        int o = i * STRIDE;
        w[o + HLEN_PEER] = pack(headerLength(i), peer);
        return this;
    }

    /** Copy request {@code i} of {@code from} to the end of this batch (the caller checked room). */
    void copy(SendBatch from, int i) {
        int k = count;
        System.arraycopy(from.w, i * STRIDE, w, k * STRIDE, STRIDE);
        if (from.headerLength(i) > 0) {
            headers++;
        }
        if (from.op(i).isAtomic()) {
            compareAdd[k] = from.compareAdd[i];
            swap[k] = from.swap[i];
        }
        count = k + 1;
    }

    /**
     * Whether request {@code i} of {@code from} equals request {@code k} of this batch in every
     * field but its id and its two addresses, and is no atomic (whose operands live apart): what a
     * run of requests ({@link CombiningPoster}'s lanes) may vary.
     */
    boolean sameButIdAndAddresses(int k, SendBatch from, int i) {
        long[] a = w;
        long[] f = from.w;
        int o = k * STRIDE;
        int p = i * STRIDE;
        return a[o + HADDR] == f[p + HADDR] && a[o + LEN_LKEY] == f[p + LEN_LKEY] && a[o + RKEY_IMM] == f[p + RKEY_IMM]
                && a[o + OP_FLAGS] == f[p + OP_FLAGS] && a[o + HLEN_PEER] == f[p + HLEN_PEER] && !op(k).isAtomic();
    }

    /**
     * Write request {@code i} of {@code from} into slot {@code k} of this batch, whatever its count
     * (a batch used as a ring of slots: {@link CombiningPoster}'s lanes); the count is not changed.
     */
    void set(int k, SendBatch from, int i) {
        System.arraycopy(from.w, i * STRIDE, w, k * STRIDE, STRIDE);
        if (from.op(i).isAtomic()) {
            compareAdd[k] = from.compareAdd[i];
            swap[k] = from.swap[i];
        }
    }

    public long wrId(int i) {
        return w[i * STRIDE + ID];
    }

    public Opcode op(int i) {
        return OPS[(int) w[i * STRIDE + OP_FLAGS]];
    }

    public int flags(int i) {
        return (int) (w[i * STRIDE + OP_FLAGS] >>> 32);
    }

    /** Replace the flags of request {@code i} (e.g. to signal the last of a batch). */
    public void flags(int i, int f) {
        int o = i * STRIDE + OP_FLAGS;
        w[o] = pack((int) w[o], f);
    }

    public long localAddr(int i) {
        return w[i * STRIDE + LADDR];
    }

    public int length(int i) {
        return (int) w[i * STRIDE + LEN_LKEY];
    }

    public int lkey(int i) {
        return (int) (w[i * STRIDE + LEN_LKEY] >>> 32);
    }

    public long headerAddr(int i) {
        return w[i * STRIDE + HADDR];
    }

    public int headerLength(int i) {
        return (int) w[i * STRIDE + HLEN_PEER];
    }

    public long remoteAddr(int i) {
        return w[i * STRIDE + RADDR];
    }

    public int rkey(int i) {
        return (int) w[i * STRIDE + RKEY_IMM];
    }

    public int imm(int i) {
        return (int) (w[i * STRIDE + RKEY_IMM] >>> 32);
    }

    public int peer(int i) {
        return (int) (w[i * STRIDE + HLEN_PEER] >>> 32);
    }

    /** The compare value or addend of request {@code i}: 0 unless it is an atomic. */
    public long compareAdd(int i) {
        return op(i).isAtomic() ? compareAdd[i] : 0;
    }

    /** The swap value of request {@code i}: 0 unless it is an atomic. */
    public long swap(int i) {
        return op(i).isAtomic() ? swap[i] : 0;
    }
}
