package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.counters.Events;
import dev.scalep.verbs.AsyncEvent;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.PathMtu;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpCounters;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.UnsupportedFeatureException;
import dev.scalep.verbs.VerbsException;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A simulated queue pair: the verbs API, the post path and the QP state machine (every transition
 * goes through {@link #setState}, every error transition through {@link #moveToError} or, for a
 * responder's fault, {@link #responderFault}). Its
 * roles live apart: {@link SendSlots} (the WQE slots and their rings), {@link SimEngine} (the NIC's
 * execution engine), {@link DirectWrites} (plain RDMA writes executed at post time),
 * {@link ReorderWindow} (EFA's out-of-order window), {@link RemotePath} (work towards QPs of other
 * processes) and {@link Receives#deliver} (the responder's half of a message that consumes a
 * receive, for requesters of this process and of others alike). The parts see this QP only as a
 * {@link QpRequester} (their own QP) or a {@link QpResponder} (a target), and are built from
 * explicit arguments, so none reads a field of this class. The behaviour they implement together:
 *
 * <p><b>Post path.</b> {@link #postSend} takes the QP lock (a real {@link SimLock}, absent on
 * a QP created through a parent domain), validates each WR against the create-time caps, copies it
 * into a send-queue slot (inline payloads are copied here, so the buffer may be reused when the
 * call returns), rings the uUAR doorbell once for the list (under the uUAR lock for shared
 * registers; a BlueFlame write when BlueFlame is on, the register supports it and exactly one WQE
 * was posted) and then runs the engine in the calling thread. A leading run of plain RDMA writes
 * on an in-order RC QP executes at post time instead ({@link DirectWrites}).
 *
 * <p><b>Engine.</b> The engine lock models the NIC processing one send queue serially; it is not
 * the provider's QP lock and exists on lock-free QPs too. In-order devices (mlx5) execute WQEs in
 * post order; a send that finds no receive with rnr_retry = 7 stays at the head (and blocks the QP,
 * as RC does) until the target posts a receive. Out-of-order devices (EFA) move WQEs into a window
 * of W entries: when the window is full one entry, chosen by the QP's seeded generator, executes;
 * a "tick" (a CQ of the device polled empty) executes every held entry in seeded random order.
 * Data placement, the receive it consumes, and both completions happen when an entry executes, so
 * all of them are reordered together. Waiting sends on EFA are parked and retried when receives
 * arrive.
 *
 * <p><b>Retirement.</b> A WQE stops counting against the send queue when its CQE is written; on an
 * in-order device a CQE also retires every earlier unsignaled WQE (hardware semantics), and an
 * unsignaled WQE without a later CQE stays outstanding. On an out-of-order device an unsignaled WQE
 * retires when it executes. Error completions are always written. Flushing (ERR) writes
 * WR_FLUSH_ERR for every WQE not yet executed, in post order; executed unsignaled WQEs retire
 * silently, as on hardware.
 *
 * <p><b>Lock order.</b> The post path takes the QP lock (when there is one), then the engine lock;
 * state transitions ({@code init} to {@code reset}) take the engine lock only, so a transition never
 * interleaves with a WQE being executed. Work that arrives while another thread holds the engine
 * lock sets {@code work}; the holder runs it after unlocking ({@code afterUnlock}), so no thread
 * waits on the engine. A responder's fault found by another QP's engine (or the NIC agent) is a
 * state change like the control path's, so it is made under this QP's engine lock too, taken with
 * {@code tryLock}: when another thread holds it, the fault is left for that thread (the newest
 * incarnation's), which acts on it in its next run, and a fault whose incarnation has passed (a
 * reset came between) is dropped.
 */
final class SimQp extends SimResource implements QueuePair, QpCounters, SlotTable.Entry, QpRequester, QpResponder {
    private static final VarHandle FAULT;

    static {
        try {
            FAULT = MethodHandles.lookup().findVarHandle(SimQp.class, "fault", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final SimPd pd;
    final SimDevice dev;
    private final DeviceCapabilities caps;
    /** {@link DeviceCapabilities#supports}, by opcode ordinal (read per WR). */
    private final boolean[] supported;
    final QpInitAttr attr;
    final QpType type;
    final int qpn;
    final SimCq sendCq;
    final SimCq recvCq;
    final SimSrq srq;
    final SimRecvQueue rq;
    private final SimRecvQueue ownRq;
    final SimUuar uuar;
    private final boolean lockFree;
    private final SimLock qpLock;
    private final SimLock engine = new SimLock();
    private final boolean blueFlame;
    /** The send queue's WQE slots. */
    private final SendSlots sl;
    /** EFA's reordering window; null on an in-order device. */
    private final ReorderWindow win;
    /** The NIC's execution engine for this send queue. */
    private final SimEngine eng;

    volatile QpState state = QpState.RESET;
    private volatile int access;
    volatile int remoteQpn;
    private volatile int rnrRetry = 7;
    private volatile boolean work;
    private volatile boolean tick;
    /**
     * A responder fault left for the engine's holder ({@link #responderFault}): incarnation in the
     * high half, the event + 2 in the low half; 0: none.
     */
    private volatile long fault;
    /** Set while the engine waits for an answer from another process (see {@link SimDevice#remoteWaiting}). */
    final AtomicBoolean awaitingRemote = new AtomicBoolean();
    /** Bumped on every move to ERR or RESET: requests of an earlier incarnation are dropped by responders. */
    volatile int incarnation;
    /**
     * Go-back-N as an RC responder to a requester of another process (read and written only by the
     * draining {@link FabricAgent}, one at a time): the requester QP, incarnation and request
     * sequence of the last refused request, whose successors are dropped until it comes again (0: none).
     */
    private int nakSrc;
    private int nakInc;
    private long nakSeq;
    /** The path to QPs of other processes; null when the device is not on a fabric. */
    private final RemotePath remote;
    /** Post-time execution of plain RDMA writes; null unless the QP is RC on an in-order device. */
    private final DirectWrites direct;


    // Counters (written under the engine lock; read racily).
    private long doorbells;
    /** The selected source GID, the MTU this side accepts, and the path MTU agreed at RTR (connection options). */
    private final byte[] srcGid;
    private final int advertisedMtu;
    private volatile int pathMtu;
    private long wqes;
    private long inlineWqes;
    private long blueFlameWrites;

    SimQp(SimPd pd, QpInitAttr attr, int qpn, SimCq sendCq, SimCq recvCq, SimSrq srq, SimUuar uuar, boolean lockFree) {
        super(pd.ctx);
        this.pd = pd;
        this.dev = ctx.device;
        this.caps = ctx.caps;
        this.supported = new boolean[Opcode.values().length];
        for (Opcode o : Opcode.values()) {
            supported[o.ordinal()] = caps.supports(o);
        }
        this.attr = attr;
        this.type = attr.type();
        this.qpn = qpn;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.srq = srq;
        this.ownRq = srq == null ? new SimRecvQueue(attr.maxRecvWr(), attr.maxRecvSge()) : null;
        this.rq = srq == null ? ownRq : srq.queue;
        this.uuar = uuar;
        this.lockFree = lockFree;
        this.qpLock = lockFree ? null : new SimLock();
        this.blueFlame = ctx.mlx5() && ctx.options.blueFlame() && uuar != null && uuar.blueFlame;
        // the send side's parts: each gets what it works with as arguments and calls nothing of this QP while built
        int cap = attr.maxSendWr();
        SimPd base = pd.base();
        SendSlots slots = new SendSlots(cap, attr.maxSendSge(), attr.maxInline(), dev.mrs);
        boolean inOrder = caps.inOrder() || dev.efaWindow <= 1;
        ReorderWindow window = inOrder ? null : new ReorderWindow(Math.max(1, dev.efaWindow), cap, dev.efaSeed, qpn);
        RemotePath path = dev.fabric() == null ? null : new RemotePath(this, qpn, type, dev, slots, cap);
        SimEngine engine = new SimEngine(this, qpn, type, dev, base, sendCq, slots, window, path);
        this.sl = slots;
        this.win = window;
        this.remote = path;
        this.eng = engine;
        this.direct = inOrder && type == QpType.RC ? new DirectWrites(this, qpn, attr, dev, base, slots, engine, path,
                supported[Opcode.RDMA_WRITE.ordinal()], caps.unsignaled()) : null;
        var conn = attr.connection();
        var port = conn.selectPort("ibv_create_qp", dev.name(), dev.ports());
        this.srcGid = conn.selectGid("ibv_create_qp", dev.name(), port).gid();
        this.advertisedMtu = conn.advertisedMtu("ibv_create_qp", dev.name(), port);
        resetQueues();
    }


    private void resetQueues() {
        sl.reset();
        if (remote != null) {
            remote.reset();
        }
        if (win != null) {
            win.reset();
        }
        eng.updateHolding();
    }

    @Override
    public boolean takeTick() {
        boolean t = tick;
        tick = false;
        return t;
    }

    long memoryBytes() {
        return Accounting.QP_BYTES_PER_WR * ((long) attr.maxSendWr() + attr.maxRecvWr());
    }

    @Override
    public int simId() {
        return qpn;
    }

    // ------------------------------------------------------------------ control path

    private String devName() {
        return dev.name();
    }

    /** Every state change goes through here: the fabric's directory mirrors it for other processes. */
    void setState(QpState to) {
        if (to == QpState.ERR || to == QpState.RESET) {
            incarnation++;
        }
        Events.qpState(dev.name(), qpNum(), state, to);
        state = to;
        FabricDirectory d = dev.directory();
        if (d != null && !isClosed()) {
            d.updateQp(this);
        }
    }

    /** Move to ERR (once) and report the last WQE of an SRQ QP: the one error transition. */
    @Override
    public void moveToError() {
        if (state != QpState.ERR) {
            setState(QpState.ERR);
            enteredError();
        }
    }

    @Override
    public void responderFault(int inc, int event, boolean flushNow) {
        if (engine.isHeldByCurrentThread()) { // a QP connected to itself, inside its own engine run
            applyFault(inc, event);
            return; // flushed when the run ends
        }
        if (!engine.tryLock()) {
            leaveFault(inc, event);
            nudge(); // the holder re-checks `work` after unlocking, and kick() acts on the fault
            return;
        }
        try {
            applyFault(inc, event);
        } finally {
            engine.unlock();
        }
        if (flushNow) {
            afterUnlock();
        }
    }

    /** The fault, engine lock held: ERR and the event while the QP is still in incarnation {@code inc}. */
    private void applyFault(int inc, int event) {
        boolean rcOnly = event == AsyncEvent.QP_ACCESS_ERR || event == AsyncEvent.QP_REQ_ERR;
        if (incarnation != inc || isClosed() || state == QpState.ERR || (rcOnly && type != QpType.RC)) {
            return;
        }
        setState(QpState.ERR);
        if (event != NO_EVENT) {
            ctx.raise(AsyncEvent.ofQp(event, this)); // before an SRQ QP's last WQE, as before
        }
        enteredError();
        work = true; // the flush: at once, or at the caller's nudge (see responderFault)
    }

    /**
     * Keep a fault for the engine's holder: the newest incarnation's, the first of equal ones (the
     * one a caller holding the engine would have acted on).
     */
    private void leaveFault(int inc, int event) {
        long f = ((long) inc << 32) | ((event - NO_EVENT + 1) & 0xffffffffL);
        for (;;) {
            long cur = (long) FAULT.getVolatile(this);
            if (cur != 0 && inc - (int) (cur >>> 32) <= 0) {
                return;
            }
            if (FAULT.compareAndSet(this, cur, f)) {
                return;
            }
        }
    }

    /** The fault another thread left while this one held the engine (engine lock held). */
    private void takeFault() {
        if (fault == 0L) {
            return; // the common case, read without the atomic exchange every engine run would otherwise pay
        }
        long f = (long) FAULT.getAndSet(this, 0L);
        if (f != 0) {
            applyFault((int) (f >>> 32), (int) f - 1 + NO_EVENT);
        }
    }

    @Override
    public int accessFlags() {
        return access;
    }

    @Override
    public int rnrRetry() {
        return rnrRetry;
    }

    // ------------------------------------------------------------------ what the engine's parts and targets see

    @Override
    public int remoteQpn() {
        return remoteQpn;
    }

    @Override
    public int incarnation() {
        return incarnation;
    }

    /**
     * The simulator keeps every PD's memory in files the processes of the machine map, so a peer's
     * MR is always reachable by the CPU: in this process the MR's own segment, in another the
     * mapping of its file ({@link SharedMemory#peer}), after the checks the engine makes of a
     * request (the peer QP's entry, the MR's entry, key, PD, range and access).
     */
    @Override
    public MemorySegment mapPeer(int peerQpn, long remoteAddress, long length, int rkey, int need) {
        int bits = need & (Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC);
        if (length <= 0 || bits == 0 || bits != need || isClosed()) {
            return null;
        }
        if (RemotePath.isRemote(dev, peerQpn)) {
            FabricDirectory dir = dev.directory();
            MrWindow w = new MrWindow();
            int peerPd = dir.pdOfQp(peerQpn);
            for (int bit = 1; bit <= bits; bit <<= 1) {
                if ((bits & bit) != 0 && (dir.checkQp(peerQpn, qpn, type, bit) != 0
                        || !dir.resolveMr(rkey, peerQpn, peerPd, bit, w))) {
                    return null;
                }
            }
            w.mapping = dev.sharedMemory().peer(w.proc, w.file);
            long off = w.mapping == null ? -1 : w.offsetOf(remoteAddress, length);
            return off < 0 ? null : w.mapping.asSlice(off, length);
        }
        SimQp t = dev.qps.get(peerQpn);
        SimMr m = dev.mrs.get(rkey);
        if (t == null || m == null || !m.live() || !t.accepts(type, qpn)) {
            return null;
        }
        for (int bit = 1; bit <= bits; bit <<= 1) {
            if ((bits & bit) != 0 && !t.grants(m, remoteAddress, length, bit)) {
                return null;
            }
        }
        return m.segment.asSlice(remoteAddress - m.address, length);
    }

    @Override
    public boolean accepts(QpType t, int srcQpn) {
        return !isClosed() && receiving(state) && type == t && (t != QpType.RC || remoteQpn == srcQpn);
    }

    @Override
    public SimPd basePd() {
        return pd.base();
    }

    @Override
    public boolean grants(SimMr m, long addr, long len, int need) {
        return m != null && m.basePd == pd.base() && m.contains(addr, len) && (m.access & need) != 0
                && (access & need) != 0;
    }

    @Override
    public SimRecvQueue receiveQueue() {
        return rq;
    }

    @Override
    public SimCq recvCq() {
        return recvCq;
    }

    @Override
    public void flushOwnReceives() {
        if (ownRq != null) {
            ownRq.flush(recvCq, qpn);
        }
    }

    @Override
    public boolean outOfSequence(int src, int srcIncarnation, long seq) {
        if (nakSeq == 0) {
            return false;
        }
        if (nakSrc != src || nakInc != srcIncarnation || seq == nakSeq) {
            nakSeq = 0; // another requester or incarnation, or the refused request again
            return false;
        }
        return true;
    }

    @Override
    public void refused(int src, int srcIncarnation, long seq) {
        nakSrc = src;
        nakInc = srcIncarnation;
        nakSeq = seq;
    }

    @Override
    public void awaitRemote() {
        dev.remoteWaiting(this);
    }

    @Override
    public void answered(int s, long seq, int status) {
        if (remote != null) {
            remote.onResponse(s, seq, status);
            nudge();
        }
    }

    private void transition(QpState to) {
        QpState from = state;
        if (!from.canMoveTo(to)) {
            throw new VerbsException("ibv_modify_qp", Errno.EINVAL, devName(),
                    "QP " + qpn + ": illegal transition " + from + " → " + to);
        }
    }

    @Override
    public void init(int accessFlags) {
        engine.lock();
        try {
            checkOpen();
            transition(QpState.INIT);
            if ((accessFlags & Access.REMOTE_ATOMIC) != 0 && !caps.atomicCap().supported()) {
                throw new UnsupportedFeatureException("ibv_modify_qp", devName(), "REMOTE_ATOMIC access on QP " + qpn
                        + " (atomic_cap is NONE: " + devName() + " has no RDMA atomics)");
            }
            access = accessFlags;
            setState(QpState.INIT);
        } finally {
            engine.unlock();
        }
        afterUnlock(); // a fault left while the transition held the engine
    }

    @Override
    public void readyToReceive(QpAddress remote) {
        engine.lock();
        try {
            checkOpen();
            transition(QpState.RTR);
            if (type == QpType.RC) {
                if (remote == null) {
                    throw new VerbsException("ibv_modify_qp", Errno.EINVAL, devName(),
                            "QP " + qpn + ": an RC QP needs the remote QP's address for RTR");
                }
                if (!dev.reaches(remote)) {
                    throw new VerbsException("ibv_modify_qp", Errno.EINVAL, devName(),
                            "QP " + qpn + ": remote " + remote + " is not on this fabric");
                }
                remoteQpn = remote.qpn();
                pathMtu = PathMtu.agree(advertisedMtu, advertisedMtu, remote.mtu());
            }
            setState(QpState.RTR);
        } finally {
            engine.unlock();
        }
        afterUnlock(); // a fault left while the transition held the engine
    }

    @Override
    public void readyToSend(int retryCount, int rnrRetryCount) {
        engine.lock();
        try {
            checkOpen();
            if (retryCount < 0 || retryCount > 7 || rnrRetryCount < 0 || rnrRetryCount > 7) {
                throw new VerbsException("ibv_modify_qp", Errno.EINVAL, devName(),
                        "retry_cnt and rnr_retry must be in 0..7: " + retryCount + ", " + rnrRetryCount);
            }
            transition(QpState.RTS);
            rnrRetry = rnrRetryCount;
            setState(QpState.RTS);
        } finally {
            engine.unlock();
        }
        afterUnlock(); // a fault left while the transition held the engine
    }

    @Override
    public void toError() {
        engine.lock();
        try {
            checkOpen();
            moveToError();
            eng.process();
        } finally {
            engine.unlock();
        }
        afterUnlock();
    }

    @Override
    public void reset() {
        engine.lock();
        try {
            checkOpen();
            remoteQpn = 0;
            setState(QpState.RESET);
            resetQueues();
            if (ownRq != null) {
                ownRq.clear();
            }
        } finally {
            engine.unlock();
        }
        afterUnlock(); // a fault left while the transition held the engine
    }

    /** The CQ overran: move to ERR and flush (see {@link #responderFault}; the CQ raised QP_FATAL). */
    void fatal() {
        responderFault(incarnation, NO_EVENT, true);
    }

    /** Ask the engine to run (from another thread, or from inside a delivery); never blocks. */
    @Override
    public void nudge() {
        work = true;
        kick();
    }

    /** Release everything held in the reordering window at the next engine run. */
    void requestTick() {
        tick = true;
        nudge();
    }

    boolean holding() {
        return eng.holding();
    }

    private void kick() {
        while (work) {
            if (engine.isHeldByCurrentThread() || !engine.tryLock()) {
                return; // the holder re-checks `work` after unlocking
            }
            try {
                work = false;
                takeFault();
                if (!isClosed()) {
                    eng.process();
                }
            } finally {
                engine.unlock();
            }
        }
    }

    private void afterUnlock() {
        if (work) {
            kick();
        }
    }

    @Override
    void release() {
        engine.lock(); // an engine run in progress ends first; later ones see the QP closed
        try {
            state = QpState.RESET;
            resetQueues();
            if (ownRq != null) {
                ownRq.clear();
            }
        } finally {
            engine.unlock();
        }
        FabricDirectory d = dev.directory();
        if (d != null) {
            d.clearQp(qpn);
        }
        dev.qps.release(this);
        sendCq.detach(this, attr.maxSendWr());
        recvCq.detach(this, srq == null ? attr.maxRecvWr() : 0);
        if (srq != null) {
            srq.qps.remove(this);
        }
        pd.qps.remove(this);
        ctx.qps.remove(this);
        ctx.releaseUuar(uuar);
        ctx.accounting.add(Accounting.QPS, -1);
        ctx.accounting.add(Accounting.MEMORY, -memoryBytes());
    }

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public QpType type() {
        return type;
    }

    @Override
    public int qpNum() {
        return qpn;
    }

    @Override
    public QpState state() {
        return state;
    }

    @Override
    public QpInitAttr attributes() {
        return attr;
    }

    @Override
    public boolean lockFree() {
        return lockFree;
    }

    @Override
    public int uuar() {
        return uuar == null ? -1 : uuar.index;
    }

    @Override
    public QpAddress address() {
        return new QpAddress(devName(), srcGid, 0, qpn, 0, advertisedMtu);
    }

    @Override
    public int pathMtu() {
        return pathMtu;
    }

    @Override
    public int outstandingSends() {
        return sl.outstanding();
    }

    @Override
    public QpCounters counters() {
        return this;
    }

    @Override
    public long doorbells() {
        return doorbells;
    }

    @Override
    public long wqes() {
        return wqes;
    }

    @Override
    public long inlineWqes() {
        return inlineWqes;
    }

    /** Count {@code n} inline WQEs the post-time write path executed ({@link DirectWrites}). */
    @Override
    public void countInline(long n) {
        inlineWqes += n;
    }

    @Override
    public long blueFlameWrites() {
        return blueFlameWrites;
    }

    @Override
    public long receivesPosted() {
        return ownRq == null ? 0 : ownRq.posted();
    }

    @Override
    public String toString() {
        return "QP " + qpn + " (" + type + ")";
    }

    // ------------------------------------------------------------------ post path

    @Override
    public int postSend(SendWorkRequests wrs) {
        return postSend(wrs, 0, wrs.count());
    }

    @Override
    public int postSend(SendWorkRequests wrs, int from, int count) {
        Objects.checkFromIndexSize(from, count, wrs.count());
        checkOpen();
        SimLock l = qpLock;
        if (l != null) {
            l.lock();
        }
        int rc;
        try {
            engine.lock();
            try {
                rc = postLocked(wrs, from, count);
            } finally {
                engine.unlock();
            }
        } finally {
            if (l != null) {
                l.unlock();
            }
        }
        afterUnlock();
        return rc;
    }

    /** Records [from, from + n): the sim reads records by index, so the chain needs no cut. */
    private int postLocked(SendWorkRequests wrs, int from, int n) {
        wrs.badIndex(-1);
        if (n == 0) {
            return 0;
        }
        if (!state.canPostSend()) {
            wrs.badIndex(from);
            return Errno.EINVAL;
        }
        eng.newRun(); // one doorbell: one run of the engine
        int room = sl.room(); // WRs executed at post time retire early, but the list must fit as a whole
        int i = direct == null ? from : direct.run(wrs, from, from + n, room);
        int posted = i - from;
        int rc = 0;
        for (; i < from + n; i++) {
            Opcode o = Opcode.of(wrs.opcode(i));
            int f = wrs.flags(i);
            rc = validate(wrs, i, o, f);
            if (rc == 0 && posted == room) {
                rc = Errno.ENOMEM;
            }
            if (rc != 0) {
                break;
            }
            if (sl.enqueue(wrs, i, o, f, type, attr.sigAll())) {
                inlineWqes++;
            }
            posted++;
        }
        if (rc != 0) {
            wrs.badIndex(from + posted);
        }
        if (posted > 0) {
            ringDoorbell(wrs, from, posted);
            eng.process(); // publishes the outstanding count
        }
        return rc;
    }

    private int validate(SendWorkRequests wrs, int i, Opcode o, int f) {
        if (o == null || !supported[o.ordinal()]) {
            return Errno.EINVAL;
        }
        if (type == QpType.UD && o != Opcode.SEND && o != Opcode.SEND_WITH_IMM) {
            return Errno.EINVAL;
        }
        if (wrs.numSge(i) > attr.maxSendSge()) {
            return Errno.EINVAL;
        }
        if (!attr.sigAll() && (f & SendFlags.SIGNALED) == 0 && !caps.unsignaled()) {
            return Errno.EINVAL;
        }
        if (ctx.device.isEfa() && (f & ~(SendFlags.SIGNALED | SendFlags.INLINE)) != 0) {
            return Errno.EINVAL;
        }
        if ((f & SendFlags.INLINE) != 0 && (o.writesLocal() || wrs.length(i) > sl.maxInline())) {
            return Errno.EINVAL;
        }
        if (type.connectionless()) {
            long h = type == QpType.SRD && o.isRdma() ? wrs.srdAhHandle(i) : wrs.ahHandle(i);
            SimAh ah = h > 0 && h <= Integer.MAX_VALUE ? dev.ahs.get((int) h) : null;
            if (ah == null || ah.pd.base() != pd.base()) {
                return Errno.EINVAL;
            }
        }
        return 0;
    }

    private void ringDoorbell(SendWorkRequests wrs, int from, int posted) {
        doorbells++;
        wqes += posted;
        SimUuar u = uuar;
        if (u == null) {
            return;
        }
        boolean bf = blueFlame && posted == 1;
        SimLock l = u.lock;
        if (l != null) {
            l.lock();
            try {
                u.ring(qpn, (int) sl.posted(), wrs.segment(), wrs.address(from) - wrs.address(0), bf);
            } finally {
                l.unlock();
            }
        } else {
            u.ring(qpn, (int) sl.posted(), wrs.segment(), wrs.address(from) - wrs.address(0), bf);
        }
        if (bf) {
            blueFlameWrites++;
        }
    }

    @Override
    public int postRecv(RecvWorkRequests wrs) {
        checkOpen();
        wrs.badIndex(-1);
        if (wrs.count() == 0) {
            return 0;
        }
        if (ownRq == null || !state.canPostRecv()) {
            wrs.badIndex(0);
            return Errno.EINVAL;
        }
        int rc = ownRq.post(wrs);
        if (state == QpState.ERR) {
            flushOwnReceives();
        }
        return rc;
    }

    /** This QP has just entered ERR: a QP on an SRQ reports its last WQE (IBV_EVENT_QP_LAST_WQE_REACHED). */
    void enteredError() {
        if (srq != null && !isClosed()) {
            ctx.raise(AsyncEvent.ofQp(AsyncEvent.QP_LAST_WQE_REACHED, this));
        }
    }

    static boolean receiving(QpState st) {
        return st == QpState.RTR || st == QpState.RTS || st == QpState.SQD;
    }
}
