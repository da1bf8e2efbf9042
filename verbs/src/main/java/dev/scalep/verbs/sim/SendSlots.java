package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;
import org.agrona.collections.IntArrayList;
import org.agrona.collections.IntArrayQueue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The send queue's WQE slots of one QP (its engine lock held): each posted WR is copied into a free
 * slot (inline payloads too, so the caller may reuse its buffer when the post returns), queued in
 * post order, and, on an in-order device, kept as unretired while unsignaled until a later CQE
 * retires it. A slot's fields are primitive arrays indexed by slot, and its rings (the free stack,
 * the post-order queue, the unretired queue) are Agrona primitive collections sized once: nothing
 * is allocated per WR.
 *
 * <p>The rings are reached only through this class, which keeps their invariant: every slot is on
 * exactly one of the free stack, the post-order queue, the unretired queue or with the engine (the
 * reorder window, or a WQE executing), and {@link #room} is the free slots less the
 * {@link #executedSilently silent} WQEs that hold a place without one.
 *
 * <p>It also moves a slot's payload ({@link #gather}, {@link #scatterFrom}) and checks its local
 * keys ({@link #checkLocal}) through the last local MR it resolved.
 */
final class SendSlots {
    private static final VarHandle OUTSTANDING;
    private static final Opcode[] OPS = Opcode.values();
    private static final int NONE = -1;

    static {
        try {
            OUTSTANDING = MethodHandles.lookup().findVarHandle(SendSlots.class, "outstanding", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int cap;
    private final int maxSge;
    private final int maxInline;
    private final SlotTable<SimMr> mrs;
    private final long[] wrId;
    private final int[] op;
    private final boolean[] signaled;
    private final boolean[] inlined;
    private final int[] imm;
    private final long[] raddr;
    private final int[] rkey;
    /** An atomic's compare value or addend, and its swap value. */
    private final long[] compareAdd;
    private final long[] swap;
    private final int[] ahId;
    private final int[] dqpn;
    private final int[] numSge;
    private final long[] sgeAddr;
    private final int[] sgeLen;
    private final int[] sgeLkey;
    private final long[] len;
    private final long[] seq;
    /**
     * Inline payloads, {@code maxInline} bytes per slot: a Java array moved with the array forms of
     * {@link MemorySegment#copy}, not a heap segment, so that no segment of a second implementation
     * class reaches the copies the data path shares (see {@link SharedMemory#plain}).
     */
    private final byte[] inl;
    /** Slots no WQE holds. */
    private final IntArrayList free;
    /** Posted WQEs the engine has not taken yet, in post order. */
    private final IntArrayQueue queued;
    /** Executed unsignaled WQEs of an in-order device, waiting for a later CQE, in post order. */
    private final IntArrayQueue unretired;
    private long nextSeq;
    /**
     * WQEs executed unsignaled at post time ({@link DirectWrites}): outstanding and holding their
     * place in the queue ({@link #room}), but no slot, since nothing about them is reported; the
     * next CQE retires them with every earlier unsignaled WQE ({@link #retireSilent}).
     */
    private int silent;
    /** WQEs posted and not retired, for racy readers: the engine's {@link #count}, published at the end of a post and of a run. */
    private volatile int outstanding;
    private int count;
    /** The last MR named by an lkey of this send queue (see {@link #localMr}). */
    private SimMr lastLocal;

    SendSlots(int cap, int maxSendSge, int maxInline, SlotTable<SimMr> mrs) {
        this.cap = cap;
        this.maxSge = Math.max(1, maxSendSge);
        this.maxInline = maxInline;
        this.mrs = mrs;
        wrId = new long[cap];
        op = new int[cap];
        signaled = new boolean[cap];
        inlined = new boolean[cap];
        imm = new int[cap];
        raddr = new long[cap];
        rkey = new int[cap];
        compareAdd = new long[cap];
        swap = new long[cap];
        ahId = new int[cap];
        dqpn = new int[cap];
        numSge = new int[cap];
        sgeAddr = new long[cap * maxSge];
        sgeLen = new int[cap * maxSge];
        sgeLkey = new int[cap * maxSge];
        len = new long[cap];
        seq = new long[cap];
        inl = new byte[maxInline > 0 ? cap * maxInline : 0];
        free = new IntArrayList(Math.max(1, cap), NONE);
        // an IntArrayQueue grows when an offer fills it: room for cap + 1 keeps cap entries allocation-free
        queued = new IntArrayQueue(Math.max(IntArrayQueue.MIN_CAPACITY, cap + 1), NONE);
        unretired = new IntArrayQueue(Math.max(IntArrayQueue.MIN_CAPACITY, cap + 1), NONE);
        reset();
    }

    /** Every slot free, nothing queued or outstanding (create, reset, destroy). */
    void reset() {
        free.clear();
        for (int i = cap - 1; i >= 0; i--) {
            free.pushInt(i);
        }
        queued.clear();
        unretired.clear();
        silent = 0;
        count = 0;
        outstanding = 0;
    }

    // ------------------------------------------------------------------ post side

    /**
     * Copy WR i (validated: opcode o, flags f; {@link #room} checked) into a free slot and queue it;
     * true when its payload was inlined.
     */
    boolean enqueue(SendWorkRequests wrs, int i, Opcode o, int f, QpType type, boolean sigAll) {
        int s = free.popInt();
        wrId[s] = wrs.wrId(i);
        op[s] = o.ordinal();
        signaled[s] = sigAll || (f & SendFlags.SIGNALED) != 0;
        imm[s] = o == Opcode.SEND_WITH_IMM || o == Opcode.RDMA_WRITE_WITH_IMM ? wrs.imm(i) : 0;
        if (o.isAtomic()) {
            raddr[s] = wrs.atomicRemoteAddr(i);
            rkey[s] = wrs.atomicRkey(i);
            compareAdd[s] = wrs.compareAdd(i);
            swap[s] = wrs.swap(i);
        } else {
            raddr[s] = wrs.remoteAddr(i);
            rkey[s] = wrs.rkey(i);
        }
        if (type.connectionless()) {
            boolean srdRdma = type == QpType.SRD && o.isRdma();
            ahId[s] = (int) (srdRdma ? wrs.srdAhHandle(i) : wrs.ahHandle(i));
            dqpn[s] = srdRdma ? wrs.srdRemoteQpn(i) : wrs.remoteQpn(i);
        }
        int ns = wrs.numSge(i);
        long total = 0;
        boolean inline = (f & SendFlags.INLINE) != 0;
        inlined[s] = inline;
        if (inline) {
            long off = (long) s * maxInline;
            for (int j = 0; j < ns; j++) {
                int l = wrs.sgeLength(i, j);
                if (l > 0) {
                    copyFromAddress(wrs.sgeAddr(i, j), wrs.sgeLkey(i, j), l, off + total);
                }
                total += l;
            }
            numSge[s] = 0;
        } else {
            int b = s * maxSge;
            for (int j = 0; j < ns; j++) {
                sgeAddr[b + j] = wrs.sgeAddr(i, j);
                int l = wrs.sgeLength(i, j);
                sgeLen[b + j] = l;
                sgeLkey[b + j] = wrs.sgeLkey(i, j);
                total += Integer.toUnsignedLong(l);
            }
            numSge[s] = ns;
        }
        len[s] = total;
        seq[s] = nextSeq++;
        queued.offerInt(s);
        count++;
        return inline;
    }

    /**
     * Record a WR the engine executed at post time ({@link DirectWrites}) in a free slot:
     * what its completion and retirement need. Returns the slot.
     */
    int executed(long id, Opcode o, boolean sig, long length) {
        int s = free.popInt();
        wrId[s] = id;
        op[s] = o.ordinal();
        signaled[s] = sig;
        inlined[s] = false;
        numSge[s] = 0;
        len[s] = length;
        seq[s] = nextSeq++;
        count++;
        return s;
    }

    /** WQEs the send queue can still take: free slots less those the silent WQEs hold. */
    int room() {
        return free.size() - silent;
    }

    /** Count n WRs the engine executed unsignaled at post time, in post order (see {@link #silent}). */
    void executedSilently(int n) {
        nextSeq += n;
        count += n;
        silent += n;
    }

    /** WQEs posted so far (the doorbell's producer index). */
    long posted() {
        return nextSeq;
    }

    // ------------------------------------------------------------------ engine side

    /** Whether a posted WQE waits for the engine. */
    boolean hasQueued() {
        return !queued.isEmpty();
    }

    /** The oldest queued WQE's slot (there is one: {@link #hasQueued}), left at the head. */
    int headQueued() {
        return queued.peekInt();
    }

    /** Take the oldest queued WQE's slot off the queue (the engine executed, windowed or flushed it). */
    int dequeue() {
        return queued.pollInt();
    }

    /** Slot s executed unsignaled on an in-order device: it retires with the next CQE. */
    void deferRetire(int s) {
        unretired.offerInt(s);
    }

    /** The oldest executed unsignaled WQE's slot, taken off its queue, or -1 when there is none. */
    int nextUnretired() {
        return unretired.pollInt();
    }

    /** A CQE was written or the queue flushed: every silent WQE retires. */
    void retireSilent() {
        count -= silent;
        silent = 0;
    }

    /** Slot s's WQE retired: the slot is free again. */
    void retire(int s) {
        free.pushInt(s);
        count--;
    }

    /** Publish {@link #outstanding} (a release store: a plain store on x86, no fence per WR). */
    void publish() {
        OUTSTANDING.setRelease(this, count);
    }

    /** WQEs posted and not retired, as last published (any thread). */
    int outstanding() {
        return outstanding;
    }

    // ------------------------------------------------------------------ a slot's fields

    int maxInline() {
        return maxInline;
    }

    long wrId(int s) {
        return wrId[s];
    }

    Opcode op(int s) {
        return OPS[op[s]];
    }

    boolean signaled(int s) {
        return signaled[s];
    }

    boolean inlined(int s) {
        return inlined[s];
    }

    int imm(int s) {
        return imm[s];
    }

    long remoteAddr(int s) {
        return raddr[s];
    }

    int rkey(int s) {
        return rkey[s];
    }

    /** An atomic's compare value (CAS) or addend (FAA). */
    long compareAdd(int s) {
        return compareAdd[s];
    }

    /** A compare-and-swap's swap value. */
    long swap(int s) {
        return swap[s];
    }

    int ahId(int s) {
        return ahId[s];
    }

    int remoteQpn(int s) {
        return dqpn[s];
    }

    /** The payload's length in bytes. */
    long length(int s) {
        return len[s];
    }

    /** The WQE's place in post order (0 for the first WQE since create or reset). */
    long seq(int s) {
        return seq[s];
    }

    // ------------------------------------------------------------------ a slot's payload

    /**
     * The requester's local checks of slot s's SGEs: each lkey names a live MR of PD {@code base}
     * holding the SGE's range (with local write when {@code localWrite}); 0, or LOC_PROT_ERR.
     */
    int checkLocal(int s, boolean localWrite, SimPd base) {
        int b = s * maxSge;
        for (int j = 0, n = numSge[s]; j < n; j++) {
            long l = Integer.toUnsignedLong(sgeLen[b + j]);
            SimMr mr = localMr(sgeLkey[b + j]);
            if (mr == null || mr.basePd != base || !mr.contains(sgeAddr[b + j], l)
                    || (localWrite && (mr.access & Access.LOCAL_WRITE) == 0)) {
                return WcStatus.LOC_PROT_ERR;
            }
        }
        return 0;
    }

    /** Copy {@code n} payload bytes of slot s, from payload offset {@code from}, to a contiguous range. */
    void gather(int s, long from, MemorySegment dst, long dstOff, long n) {
        if (n <= 0) {
            return;
        }
        if (inlined[s]) {
            MemorySegment.copy(inl, Math.toIntExact((long) s * maxInline + from), dst, ValueLayout.JAVA_BYTE, dstOff,
                    Math.toIntExact(n));
            return;
        }
        int b = s * maxSge;
        long pos = 0;
        for (int j = 0, k = numSge[s]; j < k && n > 0; j++) {
            long l = Integer.toUnsignedLong(sgeLen[b + j]);
            if (from < pos + l) {
                long within = from - pos;
                long chunk = Math.min(l - within, n);
                SimMr mr = localMr(sgeLkey[b + j]);
                if (mr != null) {
                    Receives.copy(mr.segment, sgeAddr[b + j] - mr.address + within, dst, dstOff, chunk);
                }
                dstOff += chunk;
                from += chunk;
                n -= chunk;
            }
            pos += l;
        }
    }

    /** An RDMA read's data: copy from {@code src} at {@code srcOff} into slot s's local SGEs. */
    void scatterFrom(int s, MemorySegment src, long srcOff) {
        int b = s * maxSge;
        for (int j = 0, n = numSge[s]; j < n; j++) {
            long l = Integer.toUnsignedLong(sgeLen[b + j]);
            SimMr mr = localMr(sgeLkey[b + j]);
            if (mr != null && l > 0) {
                Receives.copy(src, srcOff, mr.segment, sgeAddr[b + j] - mr.address, l);
            }
            srcOff += l;
        }
    }

    /**
     * Whether slot s's local buffer is one 8-byte range (what an atomic's result needs; the caller
     * checked the keys with {@link #checkLocal}).
     */
    boolean atomicResultFits(int s) {
        return !inlined[s] && numSge[s] == 1 && sgeLen[s * maxSge] == 8;
    }

    /** An atomic's result: the remote word's original value, host order, into slot s's 8-byte SGE. */
    void putAtomicResult(int s, long original) {
        int b = s * maxSge;
        SimMr mr = localMr(sgeLkey[b]);
        if (mr != null) {
            mr.segment.set(ValueLayout.JAVA_LONG_UNALIGNED, sgeAddr[b] - mr.address, original);
        }
    }

    /**
     * The live MR with key {@code key}: the cached one while it is not deregistered (destroy sets
     * its closed flag before the key is released), else the device's key table.
     */
    private SimMr localMr(int key) {
        SimMr m = lastLocal;
        if (m != null && m.simId() == key && m.live()) {
            return m;
        }
        m = mrs.get(key);
        if (m != null) {
            lastLocal = m;
        }
        return m;
    }

    /** Inline copy at post time: the CPU reads the caller's buffer (through its MR when the lkey names one). */
    private void copyFromAddress(long addr, int lkey, int l, long dstOff) {
        SimMr mr = mrs.get(lkey);
        if (mr != null && mr.contains(addr, l)) {
            MemorySegment.copy(mr.segment, ValueLayout.JAVA_BYTE, addr - mr.address, inl, (int) dstOff, l);
        } else {
            MemorySegment.copy(MemorySegment.ofAddress(addr).reinterpret(l), ValueLayout.JAVA_BYTE, 0, inl, (int) dstOff, l);
        }
    }
}
