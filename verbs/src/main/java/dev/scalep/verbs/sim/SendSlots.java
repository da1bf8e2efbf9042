package dev.scalep.verbs.sim;

import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The send queue's WQE slots of one QP (its engine lock held): each posted WR is copied into a free
 * slot (inline payloads too, so the caller may reuse its buffer when the post returns), queued in
 * post order ({@code pend}), and, on an in-order device, kept as unretired while unsignaled until a
 * later CQE retires it. Primitive arrays indexed by slot: nothing is allocated per WR.
 */
final class SendSlots {
    private static final VarHandle OUTSTANDING;

    static {
        try {
            OUTSTANDING = MethodHandles.lookup().findVarHandle(SendSlots.class, "outstanding", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final int cap;
    final int maxSge;
    final int maxInline;
    final long[] wrId;
    final int[] op;
    final boolean[] signaled;
    final boolean[] inlined;
    final int[] imm;
    final long[] raddr;
    final int[] rkey;
    final int[] ahId;
    final int[] dqpn;
    final int[] numSge;
    final long[] sgeAddr;
    final int[] sgeLen;
    final int[] sgeLkey;
    final long[] len;
    final long[] seq;
    final MemorySegment inl;
    final int[] free;
    int freeTop;
    final int[] pend;
    int pendHead;
    int pendCount;
    final int[] unret;
    int unretHead;
    int unretCount;
    long nextSeq;
    /**
     * WQEs executed unsignaled at post time ({@link DirectWrites}): outstanding and holding their
     * place in the queue ({@link #room}), but no slot, since nothing about them is reported; the
     * next CQE retires them with every earlier unsignaled WQE ({@link #retireSilent}).
     */
    int silent;
    /** WQEs posted and not retired, for racy readers: the engine's {@link #count}, published at the end of a post and of a run. */
    volatile int outstanding;
    private int count;

    SendSlots(int cap, int maxSendSge, int maxInline) {
        this.cap = cap;
        this.maxSge = Math.max(1, maxSendSge);
        this.maxInline = maxInline;
        wrId = new long[cap];
        op = new int[cap];
        signaled = new boolean[cap];
        inlined = new boolean[cap];
        imm = new int[cap];
        raddr = new long[cap];
        rkey = new int[cap];
        ahId = new int[cap];
        dqpn = new int[cap];
        numSge = new int[cap];
        sgeAddr = new long[cap * maxSge];
        sgeLen = new int[cap * maxSge];
        sgeLkey = new int[cap * maxSge];
        len = new long[cap];
        seq = new long[cap];
        inl = maxInline > 0 ? MemorySegment.ofArray(new byte[cap * maxInline]) : null;
        free = new int[cap];
        pend = new int[cap];
        unret = new int[cap];
        reset();
    }

    void reset() {
        for (int i = 0; i < cap; i++) {
            free[i] = cap - 1 - i;
        }
        freeTop = cap;
        pendHead = pendCount = unretHead = unretCount = silent = 0;
        count = 0;
        outstanding = 0;
    }

    /** Copy WR i (validated: opcode o, flags f) into a free slot and queue it; true when its payload was inlined. */
    boolean enqueue(SendWorkRequests wrs, int i, Opcode o, int f, QpType type, boolean sigAll, SimDevice dev) {
        int s = free[--freeTop];
        wrId[s] = wrs.wrId(i);
        op[s] = o.ordinal();
        signaled[s] = sigAll || (f & SendFlags.SIGNALED) != 0;
        imm[s] = o == Opcode.SEND_WITH_IMM || o == Opcode.RDMA_WRITE_WITH_IMM ? wrs.imm(i) : 0;
        raddr[s] = wrs.remoteAddr(i);
        rkey[s] = wrs.rkey(i);
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
                    copyFromAddress(dev, wrs.sgeAddr(i, j), wrs.sgeLkey(i, j), l, off + total);
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
        int p = pendHead + pendCount;
        pend[p >= cap ? p - cap : p] = s;
        pendCount++;
        count++;
        return inline;
    }

    /**
     * Record a WR the engine executed at post time ({@link DirectWrites}) in a free slot:
     * what its completion and retirement need. Returns the slot.
     */
    int executed(long id, Opcode o, boolean sig, long length) {
        int s = free[--freeTop];
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
        return freeTop - silent;
    }

    /** Count n WRs the engine executed unsignaled at post time, in post order (see {@link #silent}). */
    void executedSilently(int n) {
        nextSeq += n;
        count += n;
        silent += n;
    }

    /** A CQE was written or the queue flushed: every silent WQE retires. */
    void retireSilent() {
        count -= silent;
        silent = 0;
    }

    /** One WQE retired (its slot is back on the free stack). */
    void retired() {
        count--;
    }

    /** Publish {@link #outstanding} (a release store: a plain store on x86, no fence per WR). */
    void publish() {
        OUTSTANDING.setRelease(this, count);
    }

    /** Inline copy at post time: the CPU reads the caller's buffer (through its MR when the lkey names one). */
    private void copyFromAddress(SimDevice dev, long addr, int lkey, int l, long dstOff) {
        SimMr mr = dev.mrs.get(lkey);
        if (mr != null && mr.contains(addr, l)) {
            Receives.copy(mr.segment, addr - mr.address, inl, dstOff, l);
        } else {
            MemorySegment.copy(MemorySegment.ofAddress(addr).reinterpret(l), 0, inl, dstOff, l);
        }
    }
}
