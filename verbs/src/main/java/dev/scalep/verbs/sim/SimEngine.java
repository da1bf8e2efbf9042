package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AsyncEvent;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;

/**
 * The simulated NIC's execution engine for one QP's send queue (its QP's engine lock held): runs
 * the WQEs of the {@link SendSlots} in post order (in-order devices) or through the
 * {@link ReorderWindow} (EFA), checks each against the local and remote keys, moves the bytes,
 * has the target consume its receive ({@link Receives#deliver}, the one responder path), writes the
 * requester's completions, retires WQEs, flushes on ERR. Work for a QP of another process goes to
 * the QP's {@link RemotePath}. It sees its own QP as a {@link QpRequester} and a target as a
 * {@link QpResponder}. See {@link SimQp} for the semantics.
 */
final class SimEngine {
    static final int OK = 0, WAIT = 1, FAILED = 2, PIPED = 3;

    private final QpRequester qp;
    private final SendSlots sl;
    private final ReorderWindow w;
    private final RemotePath remote;
    private final SimDevice dev;
    private final SimPd base;
    private final QpType type;
    private final int qpn;
    private final SimCq sendCq;
    private final boolean inOrder;
    /** The message a two-sided WQE carries to a target of this process (refilled per WQE). */
    private final Receives.Message msg = new Receives.Message();
    private boolean holding;
    /** The last MR named by an rkey of this send queue's WRs (see {@link #remoteMr}). */
    private SimMr lastRemote;
    /** The last QP of this process an RC WR went to (see {@link #localQp}). */
    private QpResponder lastTarget;
    /** The incarnation of the WQE's local target, read before its checks (engine lock held). */
    private int targetInc;
    /** Engine runs so far: what a run checked of a peer's directory holds for the rest of that run. */
    private long runs;

    /**
     * The engine of QP {@code qpn} of type {@code type} on {@code dev}, in a PD whose base is
     * {@code base}, completing into {@code sendCq}; {@code w} is null on an in-order device and
     * {@code remote} null off a fabric.
     */
    SimEngine(QpRequester qp, int qpn, QpType type, SimDevice dev, SimPd base, SimCq sendCq, SendSlots sl,
              ReorderWindow w, RemotePath remote) {
        this.qp = qp;
        this.qpn = qpn;
        this.type = type;
        this.dev = dev;
        this.base = base;
        this.sendCq = sendCq;
        this.sl = sl;
        this.w = w;
        this.remote = remote;
        this.inOrder = w == null;
    }

    boolean holding() {
        return holding;
    }

    /** Engine runs so far (see {@link RemotePath}: what a run checked of a peer holds for the rest of it). */
    long runs() {
        return runs;
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
        if (qp.state() == QpState.ERR) {
            flushSq();
            qp.flushOwnReceives();
            return;
        }
        if (inOrder) {
            if (remote != null && remote.busy() && !collectPipe()) {
                return;
            }
            while (sl.hasQueued()) {
                int r = execute(sl.headQueued());
                if (r == PIPED) {
                    sl.dequeue(); // in flight: it completes from the pipe
                    if (qp.state() == QpState.ERR) {
                        process();
                        return;
                    }
                    continue;
                }
                if (r == WAIT) {
                    return;
                }
                sl.dequeue();
                if (r == FAILED || qp.state() == QpState.ERR) {
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
        while (sl.hasQueued()) {
            if (w.full() && !releaseOne()) {
                return;
            }
            w.add(sl.dequeue());
        }
        if (all) {
            while (!w.isEmpty()) {
                if (!releaseOne()) {
                    return;
                }
            }
        }
        updateHolding();
    }

    /**
     * Complete the answered requests at the head of the RC pipe, in post order; false when one
     * failed (the QP moved to ERR and was flushed).
     */
    private boolean collectPipe() {
        while (remote.busy()) {
            int s = remote.pipeHead();
            int st = remote.collect();
            if (st == RemotePath.WAIT) {
                return true;
            }
            if (st != WcStatus.SUCCESS) {
                fail(s, st);
                process();
                return false;
            }
            completeSend(s, st);
        }
        return true;
    }

    void updateHolding() {
        if (w == null) {
            return; // in order: nothing is ever held
        }
        boolean h = w.holds();
        if (h != holding) {
            holding = h;
            dev.qpsHolding.addAndGet(h ? 1 : -1);
        }
    }

    /** Execute one random window entry; false when the QP went to ERR (already flushed). */
    private boolean releaseOne() {
        int s = w.takeRandom();
        int res = execute(s);
        if (res == WAIT) {
            w.park(s);
        } else if (res == FAILED || qp.state() == QpState.ERR) {
            process();
            return false;
        }
        return true;
    }

    private boolean retryParked() {
        int i = 0;
        while (i < w.parkedCount()) {
            int res = execute(w.parkedAt(i));
            if (res == WAIT) {
                i++;
                continue;
            }
            w.unpark(i);
            if (res == FAILED || qp.state() == QpState.ERR) {
                process();
                return false;
            }
        }
        return true;
    }

    void flushSq() {
        retireUnsignaled();
        while (remote != null && remote.busy()) { // in flight: before every queued WQE in post order
            flushOne(remote.pipeTake());
        }
        if (!inOrder) {
            for (int i = 0, n = w.drainInPostOrder(sl); i < n; i++) {
                flushOne(w.drainedAt(i));
            }
        }
        while (sl.hasQueued()) {
            flushOne(sl.dequeue());
        }
        updateHolding();
    }

    private void flushOne(int s) {
        sendCq.push(sl.wrId(s), WcStatus.WR_FLUSH_ERR, WcOpcode.forRequester(sl.op(s)), 0, 0, false, qpn, 0);
        retire(s);
    }

    private void retire(int s) {
        if (remote != null) {
            remote.clear(s);
        }
        sl.retire(s);
    }

    /** Retire every executed unsignaled WQE (in post order): a CQE was written or the queue is flushed. */
    private void retireUnsignaled() {
        for (int s = sl.nextUnretired(); s >= 0; s = sl.nextUnretired()) {
            retire(s);
        }
        sl.retireSilent();
    }

    /** Write the requester's completion for slot s (if signaled or an error) and retire. */
    void completeSend(int s, int status) {
        boolean cqe = sl.signaled(s) || status != WcStatus.SUCCESS;
        if (cqe) {
            sendCq.push(sl.wrId(s), status, WcOpcode.forRequester(sl.op(s)),
                    status == WcStatus.SUCCESS ? (int) sl.length(s) : 0, 0, false, qpn, 0);
        }
        if (!inOrder) {
            retire(s);
            return;
        }
        if (cqe) {
            retireUnsignaled();
            retire(s);
        } else {
            sl.deferRetire(s);
        }
    }

    private int fail(int s, int status) {
        completeSend(s, status);
        qp.moveToError();
        return FAILED;
    }

    /**
     * The live MR with rkey {@code key}: the cached one while it is not deregistered (destroy sets
     * its closed flag before the key is released), else the device's key table.
     */
    private SimMr remoteMr(int key) {
        SimMr m = lastRemote;
        if (m != null && m.simId() == key && m.live()) {
            return m;
        }
        m = dev.mrs.get(key);
        if (m != null) {
            lastRemote = m;
        }
        return m;
    }

    /**
     * The QP of this process with QPN {@code qpn}, or null: the cached one when its QPN matches (a
     * destroyed one is refused by the caller's accepts check, as a missing one), else the table.
     */
    private QpResponder localQp(int qpn) {
        QpResponder t = lastTarget;
        if (t != null && t.qpNum() == qpn) {
            return t;
        }
        t = dev.qps.get(qpn);
        if (t != null) {
            lastTarget = t;
        }
        return t;
    }

    private int execute(int s) {
        Opcode o = sl.op(s);
        QpResponder t;
        int dst;
        boolean toPeer; // the target QP lives in another process of the fabric
        if (type == QpType.RC) {
            dst = qp.remoteQpn();
            toPeer = remote != null && RemotePath.isRemote(dev, dst);
            t = toPeer ? null : localQp(dst);
        } else {
            SimAh ah = dev.ahs.get(sl.ahId(s));
            dst = sl.remoteQpn(s);
            t = ah == null ? null : dev.qps.get(dst);
            toPeer = t == null && ah != null && remote != null && RemotePath.isRemote(dev, dst);
        }
        targetInc = t == null ? 0 : t.incarnation(); // before t's checks: a fault names the incarnation they met
        // requests in flight ahead (an RC pipe): only two-sided WQEs join them, and an error waits its turn
        boolean behind = remote != null && remote.busy();
        if (behind && !(toPeer && type == QpType.RC && o.consumesReceive())) {
            return WAIT;
        }
        if (!sl.inlined(s)) {
            int st = sl.checkLocal(s, o.writesLocal(), base);
            if (st != 0) {
                return behind ? WAIT : fail(s, st);
            }
        }
        if (o.isAtomic() && !sl.atomicResultFits(s)) {
            return fail(s, WcStatus.LOC_LEN_ERR); // the original value needs exactly one 8-byte local SGE
        }
        if (toPeer && type == QpType.RC && o.consumesReceive()) {
            int r = remote.issue(s, o, dst);
            if (r == RemotePath.PIPED) {
                return PIPED;
            }
            return r == RemotePath.WAIT ? WAIT : fail(s, r);
        }
        if (toPeer) {
            int r = remote.execute(s, o, dst, runs);
            if (r == RemotePath.WAIT) {
                return WAIT;
            }
            if (r == WcStatus.SUCCESS) {
                completeSend(s, r);
                return OK;
            }
            return fail(s, r);
        }
        if (t == null || !t.accepts(type, qpn)) {
            if (type == QpType.UD) {
                completeSend(s, WcStatus.SUCCESS); // datagram lost: the sender never knows
                return OK;
            }
            return fail(s, WcStatus.RETRY_EXC_ERR);
        }
        return switch (o) {
            case RDMA_WRITE -> write(s, t);
            case RDMA_READ -> read(s, t);
            case SEND, SEND_WITH_IMM, RDMA_WRITE_WITH_IMM -> twoSided(s, t, o);
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> atomic(s, t, o);
        };
    }

    /** Slot s's target MR at QP t when t grants {@code need} over its range, else null. */
    private SimMr granted(int s, QpResponder t, int need) {
        SimMr m = remoteMr(sl.rkey(s));
        return t.grants(m, sl.remoteAddr(s), sl.length(s), need) ? m : null;
    }

    /**
     * The responder t rejected slot s's rkey/range/access: the requester completes REM_ACCESS_ERR; an
     * RC responder moves to ERR and raises QP_ACCESS_ERR (IBA local access violation, as mlx5).
     */
    private int remoteAccessError(int s, QpResponder t) {
        t.responderFault(targetInc, AsyncEvent.QP_ACCESS_ERR, true);
        return fail(s, WcStatus.REM_ACCESS_ERR);
    }

    private int write(int s, QpResponder t) {
        SimMr m = granted(s, t, Access.REMOTE_WRITE);
        if (m == null) {
            return remoteAccessError(s, t);
        }
        sl.gather(s, 0, m.segment, sl.remoteAddr(s) - m.address, sl.length(s));
        completeSend(s, WcStatus.SUCCESS);
        return OK;
    }

    /**
     * A 64-bit atomic at responder t: the target word must lie in an MR t grants REMOTE_ATOMIC
     * (else REM_ACCESS_ERR, as for reads and writes) and be 8-byte aligned (else REM_INV_REQ_ERR, and
     * an RC responder moves to ERR with QP_REQ_ERR); its original value lands in the local SGE.
     */
    private int atomic(int s, QpResponder t, Opcode o) {
        long raddr = sl.remoteAddr(s);
        SimMr m = remoteMr(sl.rkey(s));
        if (!t.grants(m, raddr, 8, Access.REMOTE_ATOMIC)) {
            return remoteAccessError(s, t);
        }
        if (!RemoteAtomics.aligned(raddr)) {
            t.responderFault(targetInc, AsyncEvent.QP_REQ_ERR, true);
            return fail(s, WcStatus.REM_INV_REQ_ERR);
        }
        long original = RemoteAtomics.apply(m.segment, raddr - m.address, o, sl.compareAdd(s), sl.swap(s));
        sl.putAtomicResult(s, original);
        completeSend(s, WcStatus.SUCCESS);
        return OK;
    }

    private int read(int s, QpResponder t) {
        SimMr m = granted(s, t, Access.REMOTE_READ);
        if (m == null) {
            return remoteAccessError(s, t);
        }
        sl.scatterFrom(s, m.segment, sl.remoteAddr(s) - m.address);
        completeSend(s, WcStatus.SUCCESS);
        return OK;
    }

    /**
     * A message that consumes a receive at t: the responder's half is {@link Receives#deliver}, as
     * for a request from another process; here the requester completes, or waits at the head for a
     * receive (rnr_retry 7: t's receive queue nudges this QP when one is posted).
     */
    private int twoSided(int s, QpResponder t, Opcode o) {
        int rnrRetry = qp.rnrRetry();
        SimMr target = o == Opcode.RDMA_WRITE_WITH_IMM ? remoteMr(sl.rkey(s)) : null;
        msg.of(o, type, qpn, sl.imm(s), sl.remoteAddr(s), sl.length(s)).fromSlot(sl, s);
        int st = Receives.deliver(dev, t, targetInc, msg, target, rnrRetry == 7 ? qp : null);
        int result;
        if (st == WcStatus.SUCCESS) {
            completeSend(s, st);
            result = OK;
        } else if (st == Receives.RNR) {
            result = rnrRetry < 7 ? fail(s, WcStatus.RNR_RETRY_EXC_ERR) : WAIT;
        } else {
            result = fail(s, st);
        }
        if (msg.targetFailed && t != qp) {
            t.nudge();
        }
        return result;
    }
}
