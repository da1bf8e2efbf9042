package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AsyncEvent;
import dev.scalep.verbs.ClosedException;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpCounters;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A simulated queue pair and the simulated NIC's engine for its send queue.
 *
 * <p><b>Post path.</b> {@link #postSend} takes the QP lock (a real {@link ReentrantLock}, absent on
 * a QP created through a parent domain), validates each WR against the create-time caps, copies it
 * into a send-queue slot (inline payloads are copied here, so the buffer may be reused when the
 * call returns), rings the uUAR doorbell once for the list (under the uUAR lock for shared
 * registers; a BlueFlame write when BlueFlame is on, the register supports it and exactly one WQE
 * was posted) and then runs the engine in the calling thread.
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
 */
final class SimQp implements QueuePair, QpCounters, SlotTable.Entry {
    private static final int OK = 0, WAIT = 1, FAILED = 2;
    private static final Opcode[] OPS = Opcode.values();

    final SimPd pd;
    final SimContext ctx;
    final SimDevice dev;
    private final DeviceCapabilities caps;
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
    private final ReentrantLock qpLock;
    private final ReentrantLock engine = new ReentrantLock();
    private final boolean inOrder;
    private final int window;
    private final boolean blueFlame;
    private long rng;

    volatile QpState state = QpState.RESET;
    private volatile int access;
    volatile int remoteQpn;
    private volatile int rnrRetry = 7;
    volatile boolean closed;
    private volatile boolean work;
    private volatile boolean tick;
    private boolean holding;
    /** Set while the engine waits for an answer from another process (see {@link SimDevice#remoteWaiting}). */
    final java.util.concurrent.atomic.AtomicBoolean awaitingRemote = new java.util.concurrent.atomic.AtomicBoolean();
    /** Bumped on every move to ERR or RESET: requests of an earlier incarnation are dropped by responders. */
    volatile int incarnation;
    /** The path to QPs of other processes; null when the device is not on a fabric. */
    final RemotePath remote;

    // Send queue slots (engine lock).
    private final int cap;
    private final int maxSge;
    private final int maxInline;
    private final long[] wrId;
    private final int[] op;
    private final boolean[] signaled;
    private final boolean[] inlined;
    private final int[] imm;
    private final long[] raddr;
    private final int[] rkey;
    private final int[] ahId;
    private final int[] dqpn;
    private final int[] numSge;
    private final long[] sgeAddr;
    private final int[] sgeLen;
    private final int[] sgeLkey;
    private final long[] len;
    private final long[] seq;
    private final MemorySegment inl;
    private final int[] free;
    private int freeTop;
    private final int[] pend;
    private int pendHead;
    private int pendCount;
    private final int[] unret;
    private int unretHead;
    private int unretCount;
    private final int[] win;
    private int winCount;
    private final int[] parked;
    private int parkedCount;
    private final int[] scratch;
    private long nextSeq;
    private volatile int outstanding;

    // Counters (written under the engine lock; read racily).
    private long doorbells;
    private long wqes;
    private long inlineWqes;
    private long blueFlameWrites;

    SimQp(SimPd pd, QpInitAttr attr, int qpn, SimCq sendCq, SimCq recvCq, SimSrq srq, SimUuar uuar, boolean lockFree) {
        this.pd = pd;
        this.ctx = pd.ctx;
        this.dev = ctx.device;
        this.caps = ctx.caps;
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
        this.qpLock = lockFree ? null : new ReentrantLock();
        this.inOrder = caps.inOrder() || dev.efaWindow <= 1;
        this.window = Math.max(1, dev.efaWindow);
        this.blueFlame = ctx.mlx5() && ctx.options.blueFlame() && uuar != null && uuar.blueFlame;
        // seeded by generation and slot, not by the fabric's process bits: the same order in every process
        int local = (qpn >>> (FabricLayout.QP_SLOT_BITS + FabricLayout.PROC_BITS)) << 17 | (qpn & (FabricLayout.QP_SLOTS - 1));
        this.rng = mix(dev.efaSeed * 0x9E3779B97F4A7C15L + local);
        this.cap = attr.maxSendWr();
        this.maxSge = Math.max(1, attr.maxSendSge());
        this.maxInline = attr.maxInline();
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
        win = new int[inOrder ? 1 : window];
        parked = new int[inOrder ? 1 : cap];
        scratch = new int[inOrder ? 1 : cap];
        remote = dev.fabric() == null ? null : new RemotePath(this, cap);
        resetQueues();
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        z = z ^ (z >>> 33);
        return z == 0 ? 1 : z;
    }

    private int nextRandom(int bound) {
        long x = rng;
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        rng = x;
        return (int) Long.remainderUnsigned(x, bound);
    }

    private void resetQueues() {
        for (int i = 0; i < cap; i++) {
            free[i] = cap - 1 - i;
        }
        freeTop = cap;
        pendHead = pendCount = unretHead = unretCount = winCount = parkedCount = 0;
        outstanding = 0;
        updateHolding();
    }

    long memoryBytes() {
        return Accounting.QP_BYTES_PER_WR * ((long) attr.maxSendWr() + attr.maxRecvWr());
    }

    @Override
    public int simId() {
        return qpn;
    }

    // ------------------------------------------------------------------ control path

    private void checkOpen() {
        if (closed) {
            throw new ClosedException("QP " + qpn);
        }
    }

    private String devName() {
        return dev.name();
    }

    /** Every state change goes through here: the fabric's directory mirrors it for other processes. */
    void setState(QpState to) {
        if (to == QpState.ERR || to == QpState.RESET) {
            incarnation++;
        }
        state = to;
        FabricDirectory d = dev.directory();
        if (d != null && !closed) {
            d.updateQp(this);
        }
    }

    /** Move to ERR (once) and report the last WQE of an SRQ QP: the one error transition. */
    void moveToError() {
        if (state != QpState.ERR) {
            setState(QpState.ERR);
            enteredError();
        }
    }

    /**
     * This QP, as an RC responder, found an RDMA request's rkey, range or access invalid: ERR and
     * QP_ACCESS_ERR (IBA local access violation, as mlx5), then flush.
     */
    void responderAccessError() {
        if (type == QpType.RC && !closed && state != QpState.ERR) {
            setState(QpState.ERR);
            ctx.raise(AsyncEvent.ofQp(AsyncEvent.QP_ACCESS_ERR, this));
            enteredError();
            nudge();
        }
    }

    int accessFlags() {
        return access;
    }

    int rnrRetry() {
        return rnrRetry;
    }

    long length(int s) {
        return len[s];
    }

    int rkeyOf(int s) {
        return rkey[s];
    }

    long raddrOf(int s) {
        return raddr[s];
    }

    int immOf(int s) {
        return imm[s];
    }

    long sequence(int s) {
        return seq[s];
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
            access = accessFlags;
            setState(QpState.INIT);
        } finally {
            engine.unlock();
        }
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
                if (!remote.device().equals(devName())) {
                    throw new VerbsException("ibv_modify_qp", Errno.EINVAL, devName(),
                            "QP " + qpn + ": remote " + remote + " is not on this fabric");
                }
                remoteQpn = remote.qpn();
            }
            setState(QpState.RTR);
        } finally {
            engine.unlock();
        }
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
    }

    @Override
    public void toError() {
        engine.lock();
        try {
            checkOpen();
            moveToError();
            process();
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
    }

    /** The CQ overran or the peer failed this QP: move to ERR and flush as soon as the engine is free. */
    void fatal() {
        if (closed) {
            return;
        }
        moveToError();
        nudge();
    }

    /** Ask the engine to run (from another thread, or from inside a delivery); never blocks. */
    void nudge() {
        work = true;
        kick();
    }

    /** Release everything held in the reordering window at the next engine run. */
    void requestTick() {
        tick = true;
        nudge();
    }

    boolean holding() {
        return holding;
    }

    private void kick() {
        while (work) {
            if (engine.isHeldByCurrentThread() || !engine.tryLock()) {
                return; // the holder re-checks `work` after unlocking
            }
            try {
                work = false;
                if (!closed) {
                    process();
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

    void destroy() {
        engine.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
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
    public void close() {
        synchronized (ctx.ctl) {
            destroy();
        }
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
        return new QpAddress(devName(), dev.gid(), 0, qpn, 0);
    }

    @Override
    public int outstandingSends() {
        return outstanding;
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
        java.util.Objects.checkFromIndexSize(from, count, wrs.count());
        checkOpen();
        ReentrantLock l = qpLock;
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
        int posted = 0;
        int rc = 0;
        for (int i = from; i < from + n; i++) {
            rc = validate(wrs, i);
            if (rc == 0 && freeTop == 0) {
                rc = Errno.ENOMEM;
            }
            if (rc != 0) {
                break;
            }
            enqueue(wrs, i);
            posted++;
        }
        if (rc != 0) {
            wrs.badIndex(from + posted);
        }
        if (posted > 0) {
            ringDoorbell(wrs, from, posted);
            process();
        }
        return rc;
    }

    private int validate(SendWorkRequests wrs, int i) {
        Opcode o = Opcode.of(wrs.opcode(i));
        if (o == null || !caps.supports(o)) {
            return Errno.EINVAL;
        }
        if (type == QpType.UD && o != Opcode.SEND && o != Opcode.SEND_WITH_IMM) {
            return Errno.EINVAL;
        }
        if (wrs.numSge(i) > attr.maxSendSge()) {
            return Errno.EINVAL;
        }
        int f = wrs.flags(i);
        if (!attr.sigAll() && (f & SendFlags.SIGNALED) == 0 && !caps.unsignaled()) {
            return Errno.EINVAL;
        }
        if (ctx.device.isEfa() && (f & ~(SendFlags.SIGNALED | SendFlags.INLINE)) != 0) {
            return Errno.EINVAL;
        }
        if ((f & SendFlags.INLINE) != 0 && (o == Opcode.RDMA_READ || wrs.length(i) > maxInline)) {
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

    private void enqueue(SendWorkRequests wrs, int i) {
        int s = free[--freeTop];
        Opcode o = Opcode.of(wrs.opcode(i));
        int f = wrs.flags(i);
        wrId[s] = wrs.wrId(i);
        op[s] = o.ordinal();
        signaled[s] = attr.sigAll() || (f & SendFlags.SIGNALED) != 0;
        imm[s] = wrs.imm(i);
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
                    copyFromAddress(wrs.sgeAddr(i, j), wrs.sgeLkey(i, j), l, off + total);
                }
                total += l;
            }
            numSge[s] = 0;
            inlineWqes++;
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
        outstanding = outstanding + 1;
    }

    /** Inline copy at post time: the CPU reads the caller's buffer (through its MR when the lkey names one). */
    private void copyFromAddress(long addr, int lkey, int l, long dstOff) {
        SimMr mr = dev.mrs.get(lkey);
        if (mr != null && mr.contains(addr, l)) {
            MemorySegment.copy(mr.segment, addr - mr.address, inl, dstOff, l);
        } else {
            MemorySegment.copy(MemorySegment.ofAddress(addr).reinterpret(l), 0, inl, dstOff, l);
        }
    }

    private void ringDoorbell(SendWorkRequests wrs, int from, int posted) {
        doorbells++;
        wqes += posted;
        SimUuar u = uuar;
        if (u == null) {
            return;
        }
        boolean bf = blueFlame && posted == 1;
        ReentrantLock l = u.lock;
        if (l != null) {
            l.lock();
            try {
                u.ring(qpn, (int) nextSeq, wrs.segment(), wrs.address(from) - wrs.address(0), bf);
            } finally {
                l.unlock();
            }
        } else {
            u.ring(qpn, (int) nextSeq, wrs.segment(), wrs.address(from) - wrs.address(0), bf);
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
            ownRq.flush(recvCq, qpn);
        }
        return rc;
    }

    // ------------------------------------------------------------------ engine (engine lock held)

    private void process() {
        if (state == QpState.ERR) {
            flushSq();
            if (ownRq != null) {
                ownRq.flush(recvCq, qpn);
            }
            return;
        }
        if (inOrder) {
            while (pendCount > 0) {
                int s = pend[pendHead];
                int r = execute(s);
                if (r == WAIT) {
                    return;
                }
                pendHead = pendHead + 1 == cap ? 0 : pendHead + 1;
                pendCount--;
                if (r == FAILED || state == QpState.ERR) {
                    process();
                    return;
                }
            }
            return;
        }
        boolean all = tick;
        tick = false;
        if (!retryParked()) {
            return;
        }
        while (pendCount > 0) {
            if (winCount == window && !releaseOne()) {
                return;
            }
            win[winCount++] = pend[pendHead];
            pendHead = pendHead + 1 == cap ? 0 : pendHead + 1;
            pendCount--;
        }
        if (all) {
            while (winCount > 0) {
                if (!releaseOne()) {
                    return;
                }
            }
        }
        updateHolding();
    }

    private void updateHolding() {
        boolean h = winCount + parkedCount > 0;
        if (h != holding) {
            holding = h;
            dev.qpsHolding.addAndGet(h ? 1 : -1);
        }
    }

    /** Execute one random window entry; false when the QP went to ERR (already flushed). */
    private boolean releaseOne() {
        int r = nextRandom(winCount);
        int s = win[r];
        win[r] = win[--winCount];
        int res = execute(s);
        if (res == WAIT) {
            parked[parkedCount++] = s;
        } else if (res == FAILED || state == QpState.ERR) {
            process();
            return false;
        }
        return true;
    }

    private boolean retryParked() {
        int i = 0;
        while (i < parkedCount) {
            int s = parked[i];
            int res = execute(s);
            if (res == WAIT) {
                i++;
                continue;
            }
            parked[i] = parked[--parkedCount];
            if (res == FAILED || state == QpState.ERR) {
                process();
                return false;
            }
        }
        return true;
    }

    private void flushSq() {
        while (unretCount > 0) {
            retire(unret[unretHead]);
            unretHead = unretHead + 1 == cap ? 0 : unretHead + 1;
            unretCount--;
        }
        if (!inOrder) {
            int n = 0;
            for (int i = 0; i < winCount; i++) {
                scratch[n++] = win[i];
            }
            for (int i = 0; i < parkedCount; i++) {
                scratch[n++] = parked[i];
            }
            winCount = parkedCount = 0;
            for (int i = 1; i < n; i++) { // insertion sort by post order
                int x = scratch[i];
                int j = i - 1;
                while (j >= 0 && seq[scratch[j]] > seq[x]) {
                    scratch[j + 1] = scratch[j];
                    j--;
                }
                scratch[j + 1] = x;
            }
            for (int i = 0; i < n; i++) {
                flushOne(scratch[i]);
            }
        }
        while (pendCount > 0) {
            flushOne(pend[pendHead]);
            pendHead = pendHead + 1 == cap ? 0 : pendHead + 1;
            pendCount--;
        }
        updateHolding();
    }

    private void flushOne(int s) {
        sendCq.push(wrId[s], WcStatus.WR_FLUSH_ERR, WcOpcode.forRequester(OPS[op[s]]), 0, 0, false, qpn, 0);
        retire(s);
    }

    private void retire(int s) {
        if (remote != null) {
            remote.clear(s);
        }
        free[freeTop++] = s;
        outstanding = outstanding - 1;
    }

    /** Write the requester's completion for slot s (if signaled or an error) and retire. */
    private void completeSend(int s, int status) {
        Opcode o = OPS[op[s]];
        boolean cqe = signaled[s] || status != WcStatus.SUCCESS;
        if (cqe) {
            sendCq.push(wrId[s], status, WcOpcode.forRequester(o), status == WcStatus.SUCCESS ? (int) len[s] : 0,
                    0, false, qpn, 0);
        }
        if (!inOrder) {
            retire(s);
            return;
        }
        if (cqe) {
            while (unretCount > 0) {
                retire(unret[unretHead]);
                unretHead = unretHead + 1 == cap ? 0 : unretHead + 1;
                unretCount--;
            }
            retire(s);
        } else {
            int p = unretHead + unretCount;
            unret[p >= cap ? p - cap : p] = s;
            unretCount++;
        }
    }

    private int fail(int s, int status) {
        completeSend(s, status);
        moveToError();
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

    /** This QP has just entered ERR: a QP on an SRQ reports its last WQE (IBV_EVENT_QP_LAST_WQE_REACHED). */
    void enteredError() {
        if (srq != null && !closed) {
            ctx.raise(AsyncEvent.ofQp(AsyncEvent.QP_LAST_WQE_REACHED, this));
        }
    }

    static boolean receiving(QpState st) {
        return st == QpState.RTR || st == QpState.RTS || st == QpState.SQD;
    }

    private int execute(int s) {
        Opcode o = OPS[op[s]];
        SimQp t;
        if (type == QpType.RC) {
            t = dev.qps.get(remoteQpn);
        } else {
            SimAh ah = dev.ahs.get(ahId[s]);
            t = ah == null ? null : dev.qps.get(dqpn[s]);
        }
        if (!inlined[s]) {
            int st = checkLocal(s, o == Opcode.RDMA_READ);
            if (st != 0) {
                return fail(s, st);
            }
        }
        if (t == null && remote != null) {
            int dst = type == QpType.RC ? remoteQpn : dqpn[s];
            if ((type == QpType.RC || dev.ahs.get(ahId[s]) != null) && RemotePath.isRemote(dev, dst)) {
                int r = remote.execute(s, o, dst);
                if (r == RemotePath.WAIT) {
                    return WAIT;
                }
                if (r == WcStatus.SUCCESS) {
                    completeSend(s, r);
                    return OK;
                }
                return fail(s, r);
            }
        }
        if (t == null || t.closed || !receiving(t.state) || t.type != type
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
        int b = s * maxSge;
        SimPd base = pd.base();
        for (int j = 0, n = numSge[s]; j < n; j++) {
            long l = Integer.toUnsignedLong(sgeLen[b + j]);
            SimMr mr = dev.mrs.get(sgeLkey[b + j]);
            if (mr == null || mr.basePd != base || !mr.contains(sgeAddr[b + j], l)
                    || (localWrite && (mr.access & Access.LOCAL_WRITE) == 0)) {
                return WcStatus.LOC_PROT_ERR;
            }
        }
        return 0;
    }

    private SimMr remoteMr(int s, SimQp t, int need) {
        SimMr m = dev.mrs.get(rkey[s]);
        if (m == null || m.basePd != t.pd.base() || !m.contains(raddr[s], len[s]) || (m.access & need) == 0
                || (t.access & need) == 0) {
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
            gather(s, 0, m.segment, raddr[s] - m.address, len[s]);
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
            gather(s, 0, m.segment, raddr[s] - m.address, len[s]);
            long rid = q.wrId(r);
            q.pop();
            t.recvCq.push(rid, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, (int) len[s], imm[s], true, t.qpn, qpn);
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
        scatterFrom(s, m.segment, raddr[s] - m.address);
        completeSend(s, WcStatus.SUCCESS);
        return OK;
    }

    /** An RDMA read's data: copy from {@code src} at {@code srcOff} into slot s's local SGEs. */
    void scatterFrom(int s, MemorySegment src, long srcOff) {
        int b = s * maxSge;
        for (int j = 0, n = numSge[s]; j < n; j++) {
            long l = Integer.toUnsignedLong(sgeLen[b + j]);
            SimMr mr = dev.mrs.get(sgeLkey[b + j]);
            if (mr != null && l > 0) {
                MemorySegment.copy(src, srcOff, mr.segment, sgeAddr[b + j] - mr.address, l);
            }
            srcOff += l;
        }
    }

    private int send(int s, SimQp t, Opcode o) {
        SimRecvQueue q = t.rq;
        boolean ud = type == QpType.UD;
        long need = len[s] + (ud ? 40 : 0);
        boolean failTarget = false;
        int result;
        q.lock.lock();
        try {
            int r = q.peek();
            if (r < 0) {
                return noReceive(s, q);
            }
            long rid = q.wrId(r);
            int recvProt = q.capacityOf(r) < need ? WcStatus.LOC_LEN_ERR : checkRecv(q, r, t);
            if (recvProt != 0) {
                q.pop();
                t.recvCq.push(rid, recvProt, WcOpcode.RECV, 0, 0, false, t.qpn, qpn);
                if (ud) {
                    result = OK;
                } else {
                    failTarget = true;
                    result = FAILED;
                }
                if (!ud) {
                    t.moveToError();
                }
                if (result == FAILED) {
                    fail(s, recvProt == WcStatus.LOC_LEN_ERR ? WcStatus.REM_INV_REQ_ERR : WcStatus.REM_OP_ERR);
                } else {
                    completeSend(s, WcStatus.SUCCESS);
                }
            } else {
                if (ud) {
                    scatterSegment(q, r, 0, dev.grh, 0, 40, dev);
                }
                scatterSlot(q, r, ud ? 40 : 0, s);
                q.pop();
                boolean hasImm = o == Opcode.SEND_WITH_IMM;
                t.recvCq.push(rid, WcStatus.SUCCESS, WcOpcode.RECV, (int) need, hasImm ? imm[s] : 0, hasImm, t.qpn, qpn);
                completeSend(s, WcStatus.SUCCESS);
                result = OK;
            }
        } finally {
            q.lock.unlock();
        }
        if (failTarget && t != this) {
            t.nudge();
        }
        return result;
    }

    /** Receiver-side lkey check of receive slot r (caller holds q.lock). */
    static int checkRecv(SimRecvQueue q, int r, SimQp t) {
        SimPd base = t.pd.base();
        for (int j = 0, n = q.numSge(r); j < n; j++) {
            SimMr mr = t.dev.mrs.get(q.sgeLkey(r, j));
            long l = Integer.toUnsignedLong(q.sgeLen(r, j));
            if (mr == null || mr.basePd != base || !mr.contains(q.sgeAddr(r, j), l)
                    || (mr.access & Access.LOCAL_WRITE) == 0) {
                return WcStatus.LOC_PROT_ERR;
            }
        }
        return 0;
    }

    /** No receive at the target (caller holds q.lock). */
    private int noReceive(int s, SimRecvQueue q) {
        if (type == QpType.UD) {
            completeSend(s, WcStatus.SUCCESS); // dropped at the receiver
            return OK;
        }
        if (rnrRetry < 7) {
            return fail(s, WcStatus.RNR_RETRY_EXC_ERR);
        }
        q.addWaiter(this);
        return WAIT;
    }

    /** Copy {@code n} payload bytes of slot s, from payload offset {@code from}, to a contiguous range. */
    void gather(int s, long from, MemorySegment dst, long dstOff, long n) {
        if (n <= 0) {
            return;
        }
        if (inlined[s]) {
            MemorySegment.copy(inl, (long) s * maxInline + from, dst, dstOff, n);
            return;
        }
        int b = s * maxSge;
        long pos = 0;
        for (int j = 0, k = numSge[s]; j < k && n > 0; j++) {
            long l = Integer.toUnsignedLong(sgeLen[b + j]);
            if (from < pos + l) {
                long within = from - pos;
                long chunk = Math.min(l - within, n);
                SimMr mr = dev.mrs.get(sgeLkey[b + j]);
                if (mr != null) {
                    MemorySegment.copy(mr.segment, sgeAddr[b + j] - mr.address + within, dst, dstOff, chunk);
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
        long n = len[s];
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

    /** Scatter {@code n} bytes of {@code seg} from {@code src} into receive r from receive offset {@code at}. */
    static void scatterSegment(SimRecvQueue q, int r, long at, MemorySegment seg, long src, long n, SimDevice dev) {
        long pos = 0;
        for (int j = 0, k = q.numSge(r); j < k && n > 0; j++) {
            long l = Integer.toUnsignedLong(q.sgeLen(r, j));
            if (at < pos + l) {
                long within = at - pos;
                long chunk = Math.min(l - within, n);
                SimMr mr = dev.mrs.get(q.sgeLkey(r, j));
                if (mr != null) {
                    MemorySegment.copy(seg, src, mr.segment, q.sgeAddr(r, j) - mr.address + within, chunk);
                }
                src += chunk;
                at += chunk;
                n -= chunk;
            }
            pos += l;
        }
    }
}
