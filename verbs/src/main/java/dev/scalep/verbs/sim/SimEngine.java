package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;

import java.lang.foreign.MemorySegment;

/**
 * The simulated NIC's execution engine for one QP's send queue (its QP's engine lock held): runs
 * the WQEs of the {@link SendSlots} in post order (in-order devices) or through the
 * {@link ReorderWindow} (EFA), checks each against the local and remote keys, moves the bytes,
 * consumes the target's receive, writes both completions, retires WQEs, flushes on ERR. Work for a
 * QP of another process goes to the QP's {@link RemotePath}. See {@link SimQp} for the semantics.
 */
final class SimEngine {
    static final int OK = 0, WAIT = 1, FAILED = 2;
    private static final Opcode[] OPS = Opcode.values();

    private final SimQp qp;
    private final SendSlots sl;
    private final ReorderWindow w;
    private final SimDevice dev;
    private final SimPd pd;
    private final QpType type;
    private final int qpn;
    private final SimCq sendCq;
    private final SimRecvQueue ownRq;
    private final boolean inOrder;
    private boolean holding;
    /** The last MR named by an lkey of this send queue and by an rkey of its WRs (see {@link #mr}). */
    private SimMr lastLocal;
    private SimMr lastRemote;
    /** The last QP of this process an RC WR went to (see {@link #localQp}). */
    private SimQp lastTarget;
    /** Engine runs so far: what a run checked of a peer's directory holds for the rest of that run. */
    long runs;

    SimEngine(SimQp qp, SendSlots sl, ReorderWindow w, SimRecvQueue ownRq) {
        this.qp = qp;
        this.sl = sl;
        this.w = w;
        this.dev = qp.dev;
        this.pd = qp.pd;
        this.type = qp.type;
        this.qpn = qp.qpn;
        this.sendCq = qp.sendCq;
        this.ownRq = ownRq;
        this.inOrder = w == null;
    }

    boolean holding() {
        return holding;
    }


    /** Start the run of one post (one doorbell): what a run checked of a peer holds for the rest of it. */
    void newRun() {
        runs++;
    }

    void process() {
        runs++;
        step();
        sl.publish();
    }

    private void step() {
        if (qp.state == QpState.ERR) {
            flushSq();
            if (ownRq != null) {
                ownRq.flush(qp.recvCq, qpn);
            }
            return;
        }
        if (inOrder) {
            while (sl.pendCount > 0) {
                int s = sl.pend[sl.pendHead];
                int r = execute(s);
                if (r == WAIT) {
                    return;
                }
                sl.pendHead = sl.pendHead + 1 == sl.cap ? 0 : sl.pendHead + 1;
                sl.pendCount--;
                if (r == FAILED || qp.state == QpState.ERR) {
                    process();
                    return;
                }
            }
            return;
        }
        boolean all = qp.takeTick();
        if (!retryParked()) {
            return;
        }
        while (sl.pendCount > 0) {
            if (w.winCount == w.window && !releaseOne()) {
                return;
            }
            w.win[w.winCount++] = sl.pend[sl.pendHead];
            sl.pendHead = sl.pendHead + 1 == sl.cap ? 0 : sl.pendHead + 1;
            sl.pendCount--;
        }
        if (all) {
            while (w.winCount > 0) {
                if (!releaseOne()) {
                    return;
                }
            }
        }
        updateHolding();
    }

    void updateHolding() {
        if (w == null) {
            return; // in order: nothing is ever held
        }
        boolean h = w.winCount + w.parkedCount > 0;
        if (h != holding) {
            holding = h;
            dev.qpsHolding.addAndGet(h ? 1 : -1);
        }
    }

    /** Execute one random window entry; false when the QP went to ERR (already flushed). */
    private boolean releaseOne() {
        int r = w.nextRandom(w.winCount);
        int s = w.win[r];
        w.win[r] = w.win[--w.winCount];
        int res = execute(s);
        if (res == WAIT) {
            w.parked[w.parkedCount++] = s;
        } else if (res == FAILED || qp.state == QpState.ERR) {
            process();
            return false;
        }
        return true;
    }

    private boolean retryParked() {
        int i = 0;
        while (i < w.parkedCount) {
            int s = w.parked[i];
            int res = execute(s);
            if (res == WAIT) {
                i++;
                continue;
            }
            w.parked[i] = w.parked[--w.parkedCount];
            if (res == FAILED || qp.state == QpState.ERR) {
                process();
                return false;
            }
        }
        return true;
    }

    void flushSq() {
        retireUnsignaled();
        if (!inOrder) {
            int n = 0;
            for (int i = 0; i < w.winCount; i++) {
                w.scratch[n++] = w.win[i];
            }
            for (int i = 0; i < w.parkedCount; i++) {
                w.scratch[n++] = w.parked[i];
            }
            w.winCount = w.parkedCount = 0;
            for (int i = 1; i < n; i++) { // insertion sort by post order
                int x = w.scratch[i];
                int j = i - 1;
                while (j >= 0 && sl.seq[w.scratch[j]] > sl.seq[x]) {
                    w.scratch[j + 1] = w.scratch[j];
                    j--;
                }
                w.scratch[j + 1] = x;
            }
            for (int i = 0; i < n; i++) {
                flushOne(w.scratch[i]);
            }
        }
        while (sl.pendCount > 0) {
            flushOne(sl.pend[sl.pendHead]);
            sl.pendHead = sl.pendHead + 1 == sl.cap ? 0 : sl.pendHead + 1;
            sl.pendCount--;
        }
        updateHolding();
    }

    private void flushOne(int s) {
        sendCq.push(sl.wrId[s], WcStatus.WR_FLUSH_ERR, WcOpcode.forRequester(OPS[sl.op[s]]), 0, 0, false, qpn, 0);
        retire(s);
    }

    private void retire(int s) {
        if (qp.remote != null) {
            qp.remote.clear(s);
        }
        sl.free[sl.freeTop++] = s;
        sl.retired();
    }

    /** Retire every executed unsignaled WQE (in post order): a CQE was written or the queue is flushed. */
    private void retireUnsignaled() {
        while (sl.unretCount > 0) {
            retire(sl.unret[sl.unretHead]);
            sl.unretHead = sl.unretHead + 1 == sl.cap ? 0 : sl.unretHead + 1;
            sl.unretCount--;
        }
        sl.retireSilent();
    }

    /** Write the requester's completion for slot s (if signaled or an error) and retire. */
    void completeSend(int s, int status) {
        Opcode o = OPS[sl.op[s]];
        boolean cqe = sl.signaled[s] || status != WcStatus.SUCCESS;
        if (cqe) {
            sendCq.push(sl.wrId[s], status, WcOpcode.forRequester(o), status == WcStatus.SUCCESS ? (int) sl.len[s] : 0,
                    0, false, qpn, 0);
        }
        if (!inOrder) {
            retire(s);
            return;
        }
        if (cqe) {
            retireUnsignaled();
            retire(s);
        } else {
            int p = sl.unretHead + sl.unretCount;
            sl.unret[p >= sl.cap ? p - sl.cap : p] = s;
            sl.unretCount++;
        }
    }

    private int fail(int s, int status) {
        completeSend(s, status);
        qp.moveToError();
        return FAILED;
    }

    /**
     * The responder t rejected slot s's rkey/range/access: the requester completes REM_ACCESS_ERR; an
     * RC responder moves to ERR and raises QP_ACCESS_ERR (IBA local access violation, as mlx5).
     */
    private int remoteAccessError(int s, SimQp t) {
        t.responderAccessError();
        return fail(s, WcStatus.REM_ACCESS_ERR);
    }

    /**
     * The live MR with key {@code key}: the cached one while it is not deregistered (destroy sets
     * its closed flag before the key is released), else the device's key table.
     */
    private SimMr mr(int key, boolean remote) {
        SimMr m = remote ? lastRemote : lastLocal;
        if (m != null && m.simId() == key && m.live()) {
            return m;
        }
        m = dev.mrs.get(key);
        if (m != null) {
            if (remote) {
                lastRemote = m;
            } else {
                lastLocal = m;
            }
        }
        return m;
    }

    /**
     * The QP of this process with QPN {@code qpn}, or null: the cached one when its QPN matches (a
     * destroyed one is refused by the caller's closed check, as a missing one), else the table.
     */
    private SimQp localQp(int qpn) {
        SimQp t = lastTarget;
        if (t != null && t.qpn == qpn) {
            return t;
        }
        t = dev.qps.get(qpn);
        if (t != null) {
            lastTarget = t;
        }
        return t;
    }

    private int execute(int s) {
        Opcode o = OPS[sl.op[s]];
        SimQp t;
        int dst;
        boolean remote; // the target QP lives in another process of the fabric
        if (type == QpType.RC) {
            dst = qp.remoteQpn;
            remote = qp.remote != null && RemotePath.isRemote(dev, dst);
            t = remote ? null : localQp(dst);
        } else {
            SimAh ah = dev.ahs.get(sl.ahId[s]);
            dst = sl.dqpn[s];
            t = ah == null ? null : dev.qps.get(dst);
            remote = t == null && ah != null && qp.remote != null && RemotePath.isRemote(dev, dst);
        }
        if (!sl.inlined[s]) {
            int st = checkLocal(s, o == Opcode.RDMA_READ);
            if (st != 0) {
                return fail(s, st);
            }
        }
        if (remote) {
            int r = qp.remote.execute(s, o, dst);
            if (r == RemotePath.WAIT) {
                return WAIT;
            }
            if (r == WcStatus.SUCCESS) {
                completeSend(s, r);
                return OK;
            }
            return fail(s, r);
        }
        if (t == null || t.closed || !SimQp.receiving(t.state) || t.type != type
                || (type == QpType.RC && t.remoteQpn != qpn)) {
            if (type == QpType.UD) {
                completeSend(s, WcStatus.SUCCESS); // datagram lost: the sender never knows
                return OK;
            }
            return fail(s, WcStatus.RETRY_EXC_ERR);
        }
        return switch (o) {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> write(s, t, o);
            case RDMA_READ -> read(s, t);
            case SEND, SEND_WITH_IMM -> send(s, t, o);
        };
    }

    private int checkLocal(int s, boolean localWrite) {
        int b = s * sl.maxSge;
        SimPd base = pd.base();
        for (int j = 0, n = sl.numSge[s]; j < n; j++) {
            long l = Integer.toUnsignedLong(sl.sgeLen[b + j]);
            SimMr mr = mr(sl.sgeLkey[b + j], false);
            if (mr == null || mr.basePd != base || !mr.contains(sl.sgeAddr[b + j], l)
                    || (localWrite && (mr.access & Access.LOCAL_WRITE) == 0)) {
                return WcStatus.LOC_PROT_ERR;
            }
        }
        return 0;
    }

    private SimMr remoteMr(int s, SimQp t, int need) {
        return remoteMr(sl.rkey[s], sl.raddr[s], sl.len[s], t, need);
    }

    /** Target QP t's MR {@code rkey}, when it holds {@code [raddr, raddr + len)} and grants {@code need}; else null. */
    private SimMr remoteMr(int rkey, long raddr, long len, SimQp t, int need) {
        SimMr m = mr(rkey, true);
        if (m == null || m.basePd != t.pd.base() || !m.contains(raddr, len) || (m.access & need) == 0
                || (t.accessFlags() & need) == 0) {
            return null;
        }
        return m;
    }

    private int write(int s, SimQp t, Opcode o) {
        SimMr m = remoteMr(s, t, Access.REMOTE_WRITE);
        if (m == null) {
            return remoteAccessError(s, t);
        }
        if (o == Opcode.RDMA_WRITE) {
            gather(s, 0, m.segment, sl.raddr[s] - m.address, sl.len[s]);
            completeSend(s, WcStatus.SUCCESS);
            return OK;
        }
        SimRecvQueue q = t.rq;
        q.lock.lock();
        try {
            int r = q.peek();
            if (r < 0) {
                return noReceive(s, q);
            }
            gather(s, 0, m.segment, sl.raddr[s] - m.address, sl.len[s]);
            long rid = q.wrId(r);
            q.pop();
            t.recvCq.push(rid, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, (int) sl.len[s], sl.imm[s], true, t.qpn, qpn);
        } finally {
            q.lock.unlock();
        }
        completeSend(s, WcStatus.SUCCESS);
        return OK;
    }

    private int read(int s, SimQp t) {
        SimMr m = remoteMr(s, t, Access.REMOTE_READ);
        if (m == null) {
            return remoteAccessError(s, t);
        }
        scatterFrom(s, m.segment, sl.raddr[s] - m.address);
        completeSend(s, WcStatus.SUCCESS);
        return OK;
    }

    /** An RDMA read's data: copy from {@code src} at {@code srcOff} into slot s's local SGEs. */
    void scatterFrom(int s, MemorySegment src, long srcOff) {
        int b = s * sl.maxSge;
        for (int j = 0, n = sl.numSge[s]; j < n; j++) {
            long l = Integer.toUnsignedLong(sl.sgeLen[b + j]);
            SimMr mr = mr(sl.sgeLkey[b + j], false);
            if (mr != null && l > 0) {
                Receives.copy(src, srcOff, mr.segment, sl.sgeAddr[b + j] - mr.address, l);
            }
            srcOff += l;
        }
    }

    private int send(int s, SimQp t, Opcode o) {
        SimRecvQueue q = t.rq;
        boolean ud = type == QpType.UD;
        long need = sl.len[s] + (ud ? 40 : 0);
        boolean failTarget = false;
        int result;
        q.lock.lock();
        try {
            int r = q.peek();
            if (r < 0) {
                return noReceive(s, q);
            }
            long rid = q.wrId(r);
            int fault = Receives.fault(q, r, t, need, ud, qpn);
            if (fault == WcStatus.SUCCESS) {
                completeSend(s, fault); // UD: the receive failed, the sender never learns
                result = OK;
            } else if (fault != Receives.FIT) {
                failTarget = true;
                result = fail(s, fault);
            } else {
                if (ud) {
                    Receives.scatter(q, r, 0, dev.grh, 0, 40, dev);
                }
                scatterSlot(q, r, ud ? 40 : 0, s);
                q.pop();
                boolean hasImm = o == Opcode.SEND_WITH_IMM;
                t.recvCq.push(rid, WcStatus.SUCCESS, WcOpcode.RECV, (int) need, hasImm ? sl.imm[s] : 0, hasImm, t.qpn, qpn);
                completeSend(s, WcStatus.SUCCESS);
                result = OK;
            }
        } finally {
            q.lock.unlock();
        }
        if (failTarget && t != qp) {
            t.nudge();
        }
        return result;
    }

    /** No receive at the target (caller holds q.lock). */
    private int noReceive(int s, SimRecvQueue q) {
        if (type == QpType.UD) {
            completeSend(s, WcStatus.SUCCESS); // dropped at the receiver
            return OK;
        }
        if (qp.rnrRetry() < 7) {
            return fail(s, WcStatus.RNR_RETRY_EXC_ERR);
        }
        q.addWaiter(qp);
        return WAIT;
    }

    /** Copy {@code n} payload bytes of slot s, from payload offset {@code from}, to a contiguous range. */
    void gather(int s, long from, MemorySegment dst, long dstOff, long n) {
        if (n <= 0) {
            return;
        }
        if (sl.inlined[s]) {
            Receives.copy(sl.inl, (long) s * sl.maxInline + from, dst, dstOff, n);
            return;
        }
        int b = s * sl.maxSge;
        long pos = 0;
        for (int j = 0, k = sl.numSge[s]; j < k && n > 0; j++) {
            long l = Integer.toUnsignedLong(sl.sgeLen[b + j]);
            if (from < pos + l) {
                long within = from - pos;
                long chunk = Math.min(l - within, n);
                SimMr mr = mr(sl.sgeLkey[b + j], false);
                if (mr != null) {
                    Receives.copy(mr.segment, sl.sgeAddr[b + j] - mr.address + within, dst, dstOff, chunk);
                }
                dstOff += chunk;
                from += chunk;
                n -= chunk;
            }
            pos += l;
        }
    }

    /** Scatter the whole payload of slot s into receive r starting at receive offset {@code at}. */
    private void scatterSlot(SimRecvQueue q, int r, long at, int s) {
        long n = sl.len[s];
        long src = 0;
        long pos = 0;
        for (int j = 0, k = q.numSge(r); j < k && n > 0; j++) {
            long l = Integer.toUnsignedLong(q.sgeLen(r, j));
            if (at < pos + l) {
                long within = at - pos;
                long chunk = Math.min(l - within, n);
                SimMr mr = dev.mrs.get(q.sgeLkey(r, j));
                if (mr != null) {
                    gather(s, src, mr.segment, q.sgeAddr(r, j) - mr.address + within, chunk);
                }
                src += chunk;
                at += chunk;
                n -= chunk;
            }
            pos += l;
        }
    }

}
