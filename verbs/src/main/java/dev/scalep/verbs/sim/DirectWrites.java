package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.ffm.Structs;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * The post-time fast path of an in-order RC QP (its engine lock held): a run of RDMA writes of
 * one SGE each, inline or not (either way the payload is read at post time, which is what inline
 * promises, from a registered local MR), posted while the QP is in RTS with nothing queued or in flight, executes straight
 * from the caller's WR list, with the checks and the copy {@link SimEngine} would make and
 * without copying the WRs into send-queue slots.
 *
 * <p>What the WRs of one list share is checked once per list, as a NIC checks the state it
 * observed when the doorbell rang: the QP's state and caps, the target QP (in this process, or in
 * another through {@link RemotePath#directTarget}) and its PD. What each WR names is checked per
 * WR against the last MRs resolved: the local key and range, the remote key, its range, and for a
 * peer MR its directory epoch ({@link FabricDirectory#mrCurrent}).
 *
 * <p>An unsignaled WR leaves nothing but a count ({@link SendSlots#executedSilently}) that holds
 * its place in the send queue until the next CQE retires it with every earlier unsignaled WR, as
 * hardware does; a signaled WR takes a slot and completes as usual. The first WR that is not of
 * this kind or fails a check ends the run: the ordinary path takes it and the rest of the list,
 * validates and executes them, and reports what fails.
 */
final class DirectWrites {
    private static final int RDMA_WRITE = Opcode.RDMA_WRITE.code;
    private static final long WR = Structs.IBV_SEND_WR.byteSize();
    private static final long SGE = Structs.IBV_SGE.byteSize();
    /** num_sge (1) and opcode (RDMA write) read as one little-endian long: they are adjacent ints. */
    private static final long ONE_WRITE = 1L | ((long) RDMA_WRITE << 32);
    /** The flags a WR of this path may carry. */
    private static final int PLAIN_FLAGS = SendFlags.SIGNALED | SendFlags.INLINE;
    private static final int INLINE_SHIFT = Integer.numberOfTrailingZeros(SendFlags.INLINE);

    static {
        if (Structs.SEND_OPCODE != Structs.SEND_NUM_SGE + 4 || Structs.SGE_LKEY != Structs.SGE_LENGTH + 4
                || ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new ExceptionInInitializerError("DirectWrites reads num_sge+opcode and length+lkey as one long each");
        }
    }

    private final QpRequester qp;
    private final SendSlots sl;
    private final SimEngine eng;
    private final SimDevice dev;
    private final SimPd base;
    private final int qpn;
    private final RemotePath path;
    private final FabricDirectory dir;
    /** Whether the QP's caps admit the WRs this path takes at all (write supported, one SGE). */
    private final boolean enabled;
    private final boolean sigAll;
    /** Whether an unsignaled WR is accepted (sigAll or the device supports unsignaled completions). */
    private final boolean unsignaledOk;
    /** The longest payload the QP inlines (a longer inline WR is refused on the ordinary path). */
    private final long maxInline;
    /** The last local MR and the last in-process target MR resolved (revalidated at each list's start). */
    private SimMr lastLocal;
    private SimMr lastRemote;

    /**
     * The path of QP {@code qpn} (created with {@code attr} on {@code dev}, in a PD whose base is
     * {@code base}) over its send queue {@code sl}, engine {@code eng} and remote path {@code path}
     * (null off a fabric); {@code writeSupported} and {@code unsignaled} are the device's caps.
     */
    DirectWrites(QpRequester qp, int qpn, QpInitAttr attr, SimDevice dev, SimPd base, SendSlots sl, SimEngine eng,
                 RemotePath path, boolean writeSupported, boolean unsignaled) {
        this.qp = qp;
        this.qpn = qpn;
        this.sl = sl;
        this.eng = eng;
        this.dev = dev;
        this.base = base;
        this.path = path;
        this.dir = dev.directory();
        this.enabled = writeSupported && attr.maxSendSge() >= 1;
        this.sigAll = attr.sigAll();
        this.unsignaledOk = sigAll || unsignaled;
        this.maxInline = sl.maxInline();
    }

    /**
     * Execute WRs {@code [from, end)} of {@code wrs} while they take this path, at most
     * {@code room}; returns the index of the first WR not executed ({@code end} when all were).
     */
    int run(SendWorkRequests wrs, int from, int end, int room) {
        if (!enabled || from >= end || !plainWrite(wrs, from) || qp.state() != QpState.RTS || sl.hasQueued()
                || (path != null && path.busy())) {
            return from; // a list that starts with a read, an atomic or a send resolves no target here
        }
        int dst = qp.remoteQpn(); // set at RTR, under the engine lock: fixed for the list
        if (path != null && RemotePath.isRemote(dev, dst)) {
            int peerPd = path.directTarget(dst, eng.runs());
            return peerPd < 0 ? from : toPeer(wrs, from, Math.min(end, from + room), dst, peerPd);
        }
        QpResponder t = dev.qps.get(dst);
        if (t == null || !t.accepts(QpType.RC, qpn) || (t.accessFlags() & Access.REMOTE_WRITE) == 0) {
            return from;
        }
        return toLocal(wrs, from, Math.min(end, from + room), t.basePd());
    }

    /** A run towards peer QP {@code dst} of another process, whose PD id is {@code peerPd}. */
    private int toPeer(SendWorkRequests wrs, int i, int end, int dst, int peerPd) {
        SimMr lm = liveLocal();
        while (i < end && plainWrite(wrs, i)) {
            lm = local(lm, wrs.sgeLkey(i, 0));
            MrWindow w = lm == null ? null : path.directWindow(wrs.rkey(i), dst, peerPd, eng.runs());
            if (w == null) {
                break;
            }
            int j = burst(wrs, i, end, lm, w.mapping, w.fileOffset, w.address, w.length, w.rkey, dir.epochIndex(w),
                    w.epoch);
            if (j == i) {
                break;
            }
            i = j;
        }
        lastLocal = lm;
        return i;
    }

    /** A run towards a QP of this process whose base PD is {@code targetPd}. */
    private int toLocal(SendWorkRequests wrs, int i, int end, SimPd targetPd) {
        SimMr lm = liveLocal();
        SimMr rm = lastRemote;
        while (i < end && plainWrite(wrs, i)) {
            lm = local(lm, wrs.sgeLkey(i, 0));
            int rkey = wrs.rkey(i);
            if (rm == null || rm.simId() != rkey || !rm.live()) {
                rm = dev.mrs.get(rkey);
            }
            if (lm == null || rm == null || !rm.live() || rm.basePd != targetPd
                    || (rm.access & Access.REMOTE_WRITE) == 0) {
                break;
            }
            int j = burst(wrs, i, end, lm, rm.segment, 0, rm.address, rm.length, rkey, -1, 0);
            if (j == i) {
                break;
            }
            i = j;
        }
        lastLocal = lm;
        lastRemote = rm;
        return i;
    }

    /**
     * Execute WRs from i while each is a plain write from local MR {@code lm} to the remote region
     * {@code [rAddr, rAddr + rLen)} of key {@code rKey}, which starts at {@code dstBase} in
     * {@code dst}. At the start of each stretch of WRs up to a signaled one the QP must still be in
     * RTS (a completion may have overrun the CQ and failed it) and, with {@code epochAt >= 0}, the
     * peer MR entry's epoch must still be {@code epoch}. Everything else about the list was checked
     * by the caller. Returns the first WR not executed.
     *
     * <p>The inner loop reads each WR once, checks it against bounds hoisted out of it and copies;
     * it calls nothing and reads nothing volatile, so that the JIT keeps the segments' checks out
     * of it too. A signaled WR ends a stretch; its completion is written outside the loop.
     */
    private int burst(SendWorkRequests wrs, int i, int end, SimMr lm, MemorySegment dst, long dstBase, long rAddr,
                      long rLen, int rKey, int epochAt, int epoch) {
        MemorySegment ws = wrs.segment();
        MemorySegment ss = wrs.sgeSegment();
        long sgeStride = SGE * wrs.maxSge();
        MemorySegment src = lm.segment;
        long lAddr = lm.address;
        long lLen = lm.length;
        int lKey = lm.simId();
        long dLimit = dst.byteSize();
        boolean all = sigAll;
        boolean quietOk = unsignaledOk;
        long inlineMax = maxInline;
        long inlined = 0;
        while (i < end && qp.state() == QpState.RTS && (epochAt < 0 || dir.epoch(epochAt) == epoch)) {
            int k = i;
            boolean sig = false;
            long len = 0;
            while (k < end) {
                long r = WR * k;
                long s = sgeStride * k;
                int f = ws.get(JAVA_INT_UNALIGNED, r + Structs.SEND_FLAGS);
                long lenKey = ss.get(JAVA_LONG_UNALIGNED, s + Structs.SGE_LENGTH); // length, then lkey
                long addr = ss.get(JAVA_LONG_UNALIGNED, s + Structs.SGE_ADDR);
                long raddr = ws.get(JAVA_LONG_UNALIGNED, r + Structs.SEND_RDMA_REMOTE_ADDR);
                long n = lenKey & 0xffff_ffffL;
                long ro = raddr - rAddr;
                sig = all || (f & SendFlags.SIGNALED) != 0;
                long inl = (f & SendFlags.INLINE) >>> INLINE_SHIFT; // 1 for an inline WR
                if (ws.get(JAVA_LONG_UNALIGNED, r + Structs.SEND_NUM_SGE) != ONE_WRITE
                        || (f & ~PLAIN_FLAGS) != 0 || !(sig || quietOk) || inl * n > inlineMax
                        || (int) (lenKey >>> 32) != lKey || ws.get(JAVA_INT_UNALIGNED, r + Structs.SEND_RDMA_RKEY) != rKey
                        || addr < lAddr || addr - lAddr > lLen - n
                        || raddr < rAddr || ro > rLen - n || dstBase + ro > dLimit - n) {
                    sig = false;
                    break;
                }
                if (n > 0) {
                    Receives.copy(src, addr - lAddr, dst, dstBase + ro, n);
                }
                k++;
                inlined += inl;
                if (sig) {
                    len = n;
                    break;
                }
            }
            if (!sig) {
                sl.executedSilently(k - i);
                qp.countInline(inlined);
                return k;
            }
            sl.executedSilently(k - 1 - i);
            long id = ws.get(JAVA_LONG_UNALIGNED, WR * (k - 1) + Structs.SEND_WR_ID);
            eng.completeSend(sl.executed(id, Opcode.RDMA_WRITE, true, len), WcStatus.SUCCESS);
            i = k;
        }
        qp.countInline(inlined);
        return i;
    }

    /** Whether WR i is an RDMA write of one SGE, inline or not, that the QP accepts as signaled or not. */
    private boolean plainWrite(SendWorkRequests wrs, int i) {
        int f = wrs.flags(i);
        return wrs.opcode(i) == RDMA_WRITE && (f & ~PLAIN_FLAGS) == 0
                && (unsignaledOk || (f & SendFlags.SIGNALED) != 0) && wrs.numSge(i) == 1;
    }

    /** The cached local MR while it is still registered, else null. */
    private SimMr liveLocal() {
        SimMr m = lastLocal;
        return m != null && m.live() ? m : null;
    }

    /** {@code cached} when it has key {@code lkey}, else the registered MR of this QP's PD with that key, or null. */
    private SimMr local(SimMr cached, int lkey) {
        if (cached != null && cached.simId() == lkey) {
            return cached;
        }
        SimMr m = dev.mrs.get(lkey);
        return m != null && m.live() && m.basePd == base ? m : null;
    }

}
