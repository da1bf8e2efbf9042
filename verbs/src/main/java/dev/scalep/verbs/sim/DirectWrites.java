package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;

/**
 * The post-time fast path of an in-order RC QP (its engine lock held): a run of RDMA writes of
 * one SGE each, not inline, posted while the QP is in RTS with nothing queued, executes straight
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

    private final SimQp qp;
    private final SendSlots sl;
    private final SimEngine eng;
    private final SimDevice dev;
    private final SimPd base;
    private final int qpn;
    private final RemotePath path;
    /** Whether the QP's caps admit the WRs this path takes at all (write supported, one SGE). */
    private final boolean enabled;
    private final boolean sigAll;
    /** Whether an unsignaled WR is accepted (sigAll or the device supports unsignaled completions). */
    private final boolean unsignaledOk;
    /** The last local MR and the last in-process target MR resolved (revalidated at each list's start). */
    private SimMr lastLocal;
    private SimMr lastRemote;

    DirectWrites(SimQp qp, boolean writeSupported, boolean unsignaled) {
        this.qp = qp;
        this.sl = qp.sl;
        this.eng = qp.eng;
        this.dev = qp.dev;
        this.base = qp.pd.base();
        this.qpn = qp.qpn;
        this.path = qp.remote;
        this.enabled = writeSupported && qp.attr.maxSendSge() >= 1;
        this.sigAll = qp.attr.sigAll();
        this.unsignaledOk = sigAll || unsignaled;
    }

    /**
     * Execute WRs {@code [from, end)} of {@code wrs} while they take this path, at most
     * {@code room}; returns the index of the first WR not executed ({@code end} when all were).
     */
    int run(SendWorkRequests wrs, int from, int end, int room) {
        if (!enabled || qp.state != QpState.RTS || sl.pendCount != 0) {
            return from;
        }
        int dst = qp.remoteQpn; // set at RTR, under the engine lock: fixed for the list
        if (path != null && RemotePath.isRemote(dev, dst)) {
            int peerPd = path.directTarget(dst);
            return peerPd < 0 ? from : toPeer(wrs, from, Math.min(end, from + room), dst, peerPd);
        }
        SimQp t = dev.qps.get(dst);
        if (t == null || t.closed || !SimQp.receiving(t.state) || t.type != QpType.RC || t.remoteQpn != qpn
                || (t.accessFlags() & Access.REMOTE_WRITE) == 0) {
            return from;
        }
        return toLocal(wrs, from, Math.min(end, from + room), t.pd.base());
    }

    /** A run towards peer QP {@code dst} of another process, whose PD id is {@code peerPd}. */
    private int toPeer(SendWorkRequests wrs, int from, int end, int dst, int peerPd) {
        SimMr lm = liveLocal();
        int i = from;
        for (; i < end; i++) {
            int f = wrs.flags(i);
            if (!plainWrite(wrs, i, f)) {
                break;
            }
            long addr = wrs.sgeAddr(i, 0);
            long len = Integer.toUnsignedLong(wrs.sgeLength(i, 0));
            int lkey = wrs.sgeLkey(i, 0);
            if (lm == null || lm.simId() != lkey) {
                lm = local(lkey);
            }
            if (lm == null || !lm.contains(addr, len)) {
                break;
            }
            MrWindow w = path.directWindow(wrs.rkey(i), dst, peerPd);
            long off = w == null ? -1 : w.offsetOf(wrs.remoteAddr(i), len);
            if (off < 0) {
                break;
            }
            if (len > 0) {
                Receives.copy(lm.segment, addr - lm.address, w.mapping, off, len);
            }
            executed(wrs, i, f, len);
        }
        lastLocal = lm;
        return i;
    }

    /** A run towards a QP of this process whose base PD is {@code targetPd}. */
    private int toLocal(SendWorkRequests wrs, int from, int end, SimPd targetPd) {
        SimMr lm = liveLocal();
        SimMr rm = lastRemote;
        if (rm != null && (!rm.live() || rm.basePd != targetPd)) {
            rm = null;
        }
        int i = from;
        for (; i < end; i++) {
            int f = wrs.flags(i);
            if (!plainWrite(wrs, i, f)) {
                break;
            }
            long addr = wrs.sgeAddr(i, 0);
            long len = Integer.toUnsignedLong(wrs.sgeLength(i, 0));
            int lkey = wrs.sgeLkey(i, 0);
            if (lm == null || lm.simId() != lkey) {
                lm = local(lkey);
            }
            if (lm == null || !lm.contains(addr, len)) {
                break;
            }
            long raddr = wrs.remoteAddr(i);
            int rkey = wrs.rkey(i);
            if (rm == null || rm.simId() != rkey) {
                rm = dev.mrs.get(rkey);
                if (rm != null && (!rm.live() || rm.basePd != targetPd || (rm.access & Access.REMOTE_WRITE) == 0)) {
                    rm = null;
                }
            }
            if (rm == null || !rm.contains(raddr, len)) {
                break;
            }
            if (len > 0) {
                Receives.copy(lm.segment, addr - lm.address, rm.segment, raddr - rm.address, len);
            }
            executed(wrs, i, f, len);
        }
        lastLocal = lm;
        lastRemote = rm;
        return i;
    }

    /** Whether WR i (flags f) is an RDMA write of one SGE that is not inline and that the QP accepts as signaled or not. */
    private boolean plainWrite(SendWorkRequests wrs, int i, int f) {
        return wrs.opcode(i) == RDMA_WRITE && (f & ~SendFlags.SIGNALED) == 0
                && (unsignaledOk || (f & SendFlags.SIGNALED) != 0) && wrs.numSge(i) == 1;
    }

    /** WR i was executed: count an unsignaled one, complete a signaled one. */
    private void executed(SendWorkRequests wrs, int i, int f, long len) {
        if (sigAll || (f & SendFlags.SIGNALED) != 0) {
            eng.completeSend(sl.executed(wrs.wrId(i), Opcode.RDMA_WRITE, true, len), WcStatus.SUCCESS);
        } else {
            sl.executedSilently();
        }
    }

    /** The cached local MR while it is still registered, else null. */
    private SimMr liveLocal() {
        SimMr m = lastLocal;
        return m != null && m.live() ? m : null;
    }

    /** The registered MR of this QP's PD with local key {@code lkey}, or null. */
    private SimMr local(int lkey) {
        SimMr m = dev.mrs.get(lkey);
        return m != null && m.live() && m.basePd == base ? m : null;
    }

}
