package dev.scalep.verbs.ibv;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.counters.Events;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
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
import dev.scalep.verbs.SharedReceiveQueue;
import dev.scalep.verbs.UnsupportedFeatureException;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.ffm.IbvConst;
import dev.scalep.verbs.ffm.IbvStructs;
import dev.scalep.verbs.ffm.Native;
import dev.scalep.verbs.ffm.Ops;
import dev.scalep.verbs.ffm.Structs;
import dev.scalep.verbs.ibv.efa.Efa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * An {@code ibv_qp}: RC and UD through {@code ibv_create_qp} (or {@code ibv_create_qp_ex} through a
 * parent domain), SRD through {@code efadv_create_qp_ex}. RC/UD posts go straight to the provider's
 * {@code post_send}/{@code post_recv} with the flyweight chains; SRD posts go through the
 * {@code ibv_wr_*} API (one {@code wr_start..wr_complete} batch per chain) under the v44 EFA rules:
 * every WR signaled, only SIGNALED and INLINE flags, send and send-with-imm, and RDMA read (write
 * from v46) where the device reports it, addressed with {@link SendWorkRequests#srdRdma}.
 * State changes are thread-safe.
 *
 * <p><b>Atomics (RC).</b> {@code IBV_WR_ATOMIC_FETCH_AND_ADD} and {@code IBV_WR_ATOMIC_CMP_AND_SWP}
 * go through the same native chain ({@link SendWorkRequests#atomic} fills {@code wr.atomic}); on a
 * device whose {@code atomic_cap} is NONE they are refused at post (EINVAL at the atomic), and
 * {@link #init} refuses REMOTE_ATOMIC access naming the device. Operands are host-order values and
 * the word's original value lands in the 8-byte local SGE in host order: rxe's completer converts
 * the big-endian AtomicAckETH back to CPU order before copying it, and mlx5's kernel driver reports
 * {@code IBV_ATOMIC_HCA} only where the device answers 8-byte atomics in host endianness
 * ({@code atomic_req_8B_endianness_mode}). The behavioural suite's
 * {@code fetchAndAddReturnsTheOriginalWordInHostOrderAndAddsExactly} checks it on rxe with a word of
 * eight different bytes. The initiator and responder depths ({@code max_rd_atomic} at RTS,
 * {@code max_dest_rd_atomic} at RTR) come from the connection options and bound the reads and
 * atomics in flight.
 *
 * <p><b>Data path without a Java lock.</b> The provider's QP lock (absent on a parent-domain QP)
 * serialises the native post; this class adds none. Its own send accounting ({@link #outstandingSends}
 * and the ENOMEM at {@code max_send_wr}) is a single-producer ring ({@link SendRing}): the posting side (one thread at
 * a time, as every scalep send path guarantees: a TD QP has one owner, a shared QP posts under its
 * {@code SendPath}'s lock or combiner role) publishes with release stores; the polling side retires
 * with compare-and-set, so concurrent pollers of a CQ stay exact. The check is kept because rxe
 * accepts posts beyond the {@code max_send_wr} it reports (its ring is rounded up), and the
 * {@link dev.scalep.verbs.QueuePair} contract promises the same back-pressure on every provider;
 * endpoints never reach it, since {@code SendCredits} gates their posts first. The {@code bad_wr}
 * slot belongs to the posted list, chains are passed by address and SRD work requests by raw
 * pointers: a post allocates nothing.
 *
 * <p><b>Reading order.</b> {@link #create} checks the attributes against the device and creates the
 * native QP; {@code modify} drives INIT → RTR → RTS with the connection attributes; {@code postSend}
 * hands RC/UD chains to the provider, {@code postSendEx} builds the SRD batch, {@code postRecv}
 * posts receives; {@code completed} is called by {@link IbvCq} for every completion. The send
 * accounting is {@link SendRing}, port/GID/MTU resolution {@link Path}, port queries {@link Ports}.
 */
final class IbvQp extends IbvResource implements QueuePair {
    private static final long WR = Structs.IBV_SEND_WR.byteSize();
    private static final long RWR = Structs.IBV_RECV_WR.byteSize();

    private final IbvPd pd;
    final MemorySegment qp;
    final int qpNum;
    private final QpType type;
    private final QpInitAttr attr;
    private final IbvCq sendCq;
    private final IbvCq recvCq;
    private final IbvSrq srq;
    private final int psn;
    /** The doorbell register the mlx5 driver's model implies ({@link Mlx5UarModel}); -1 off mlx5. */
    int uuar = -1;
    private final MemorySegment postSendFn;
    private final MemorySegment postRecvFn;
    /** {@code ibv_qp_ex} and its ops, SRD only. */
    private final MemorySegment qpx;
    private final MemorySegment wrSend, wrSendImm, wrSetUdAddr, wrSetSgeList, wrSetInline, wrStart, wrComplete;
    private final MemorySegment wrRdmaRead, wrRdmaWrite;
    private volatile QpState state = QpState.RESET;
    /** Port, source GID and advertised MTU from the connection options; the path MTU agreed at RTR. */
    private final Path path;
    private volatile int pathMtu;

    /** Send WQEs posted and not yet retired (lock-free; see {@link SendRing}). */
    private final SendRing sends;
    /** Receives posted to / consumed from this QP's own receive queue. */
    private final AtomicLong recvPosted = new AtomicLong();
    private final AtomicLong recvConsumed = new AtomicLong();
    private final Counters counters = new Counters();
    /** Whether the device executes remote atomics ({@code atomic_cap} not NONE): else they are refused at post. */
    private final boolean atomics;

    private IbvQp(IbvPd pd, MemorySegment qp, QpType type, QpInitAttr attr, IbvCq sendCq, IbvCq recvCq, IbvSrq srq,
                  Path path) {
        super(pd.context);
        this.pd = pd;
        this.qp = qp.reinterpret(IbvStructs.IBV_QP.byteSize());
        this.qpNum = this.qp.get(JAVA_INT, IbvStructs.QP_NUM);
        this.type = type;
        this.attr = attr;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.srq = srq;
        this.psn = ThreadLocalRandom.current().nextInt(1 << 24);
        this.postSendFn = context.postSendFn;
        this.postRecvFn = context.postRecvFn;
        this.path = path;
        this.sends = new SendRing(attr.maxSendWr());
        this.atomics = context.capabilities().atomicCap().supported();
        if (type == QpType.SRD) {
            qpx = context.lib.qpToQpEx(this.qp).reinterpret(IbvStructs.IBV_QP_EX.byteSize());
            wrSend = qpx.get(ADDRESS, IbvStructs.QPX_SEND);
            wrSendImm = qpx.get(ADDRESS, IbvStructs.QPX_SEND_IMM);
            wrSetUdAddr = qpx.get(ADDRESS, IbvStructs.QPX_SET_UD_ADDR);
            wrSetSgeList = qpx.get(ADDRESS, IbvStructs.QPX_SET_SGE_LIST);
            wrSetInline = qpx.get(ADDRESS, IbvStructs.QPX_SET_INLINE_DATA);
            wrStart = qpx.get(ADDRESS, IbvStructs.QPX_START);
            wrComplete = qpx.get(ADDRESS, IbvStructs.QPX_COMPLETE);
            wrRdmaRead = qpx.get(ADDRESS, IbvStructs.QPX_RDMA_READ);
            wrRdmaWrite = qpx.get(ADDRESS, IbvStructs.QPX_RDMA_WRITE);
        } else {
            qpx = wrSend = wrSendImm = wrSetUdAddr = wrSetSgeList = wrSetInline = wrStart = wrComplete = null;
            wrRdmaRead = wrRdmaWrite = null;
        }
    }

    static IbvQp create(IbvPd pd, QpInitAttr a) {
        IbvContext ctx = pd.context;
        String dev = ctx.name;
        DeviceCapabilities caps = ctx.capabilities();
        if (!caps.qpTypes().contains(a.type())) {
            throw new UnsupportedFeatureException("ibv_create_qp", dev, a.type() + " queue pairs");
        }
        IbvCq scq = cq(a.sendCq(), ctx, "send");
        IbvCq rcq = cq(a.recvCq(), ctx, "receive");
        IbvSrq srq = null;
        if (a.srq() != null) {
            if (!(a.srq() instanceof IbvSrq s) || s.context != ctx) {
                throw new IllegalArgumentException("SRQ " + a.srq() + " is not of " + ctx);
            }
            s.checkOpen();
            srq = s;
        }
        limit(a.maxSendWr(), 1, caps.maxQpWr(), "max_send_wr", dev);
        if (srq == null) {
            limit(a.maxRecvWr(), 1, caps.maxQpWr(), "max_recv_wr", dev);
        }
        limit(a.maxSendSge(), 1, caps.maxSge(), "max_send_sge", dev);
        limit(a.maxRecvSge(), 1, caps.maxRecvSge(), "max_recv_sge", dev);
        limit(a.maxInline(), 0, caps.maxInline(), "max_inline_data", dev);
        Path path = Path.resolve(ctx, a.connection(), "ibv_create_qp");
        a.connection().initiatorDepth("ibv_create_qp", dev, caps); // refused on every QP type, as the sim does
        a.connection().responderDepth("ibv_create_qp", dev, caps);
        try (Arena ar = Arena.ofConfined()) {
            MemorySegment st = Native.callState(ar);
            MemorySegment ia = ar.allocate(IbvStructs.IBV_QP_INIT_ATTR_EX); // its prefix is ibv_qp_init_attr
            ia.set(ADDRESS, IbvStructs.QPIAX_SEND_CQ, scq.cq);
            ia.set(ADDRESS, IbvStructs.QPIAX_RECV_CQ, rcq.cq);
            ia.set(ADDRESS, IbvStructs.QPIAX_SRQ, srq == null ? MemorySegment.NULL : srq.srq);
            long cap = IbvStructs.QPIAX_CAP;
            ia.set(JAVA_INT, cap + IbvStructs.CAP_MAX_SEND_WR, a.maxSendWr());
            ia.set(JAVA_INT, cap + IbvStructs.CAP_MAX_RECV_WR, srq == null ? a.maxRecvWr() : 0);
            ia.set(JAVA_INT, cap + IbvStructs.CAP_MAX_SEND_SGE, a.maxSendSge());
            ia.set(JAVA_INT, cap + IbvStructs.CAP_MAX_RECV_SGE, srq == null ? a.maxRecvSge() : 0);
            ia.set(JAVA_INT, cap + IbvStructs.CAP_MAX_INLINE, a.maxInline());
            ia.set(JAVA_INT, IbvStructs.QPIAX_QP_TYPE, a.type().code);
            ia.set(JAVA_INT, IbvStructs.QPIAX_SQ_SIG_ALL, a.sigAll() ? 1 : 0);
            MemorySegment qp;
            String verb;
            if (a.type() == QpType.SRD) {
                verb = "efadv_create_qp_ex";
                if (ctx.device.efa == null) {
                    throw new UnsupportedFeatureException(verb, dev, "SRD queue pairs");
                }
                if (pd.td != null) {
                    throw new UnsupportedFeatureException(verb, dev, "SRD QPs through a parent domain");
                }
                qp = Efa.createSrdQp(ar, st, ctx.ctx, pd.pd, ia, ctx.device.efa);
            } else if (pd.td != null) {
                verb = "ibv_create_qp_ex";
                MemorySegment create = ExtOps.op(ctx.ctx, "create_qp_ex");
                if (create == null) {
                    throw new UnsupportedFeatureException(verb, dev, "QPs through a parent domain");
                }
                ia.set(JAVA_INT, IbvStructs.QPIAX_COMP_MASK, IbvConst.IBV_QP_INIT_ATTR_PD);
                ia.set(ADDRESS, IbvStructs.QPIAX_PD, pd.pd);
                qp = Ops.createWithAttr(st, create, ctx.ctx, ia);
            } else {
                verb = "ibv_create_qp";
                qp = ctx.lib.createQp(st, pd.pd, ia);
            }
            if (qp.equals(MemorySegment.NULL)) {
                throw Check.fail(verb, Native.errno(st), dev, a.type() + " queue pairs",
                        "type=" + a.type() + ", max_send_wr=" + a.maxSendWr() + ", max_recv_wr=" + a.maxRecvWr()
                                + ", max_inline_data=" + a.maxInline());
            }
            QpInitAttr actual = new QpInitAttr(a.type(), a.sendCq(), a.recvCq(), a.srq(),
                    ia.get(JAVA_INT, cap + IbvStructs.CAP_MAX_SEND_WR), srq == null
                    ? ia.get(JAVA_INT, cap + IbvStructs.CAP_MAX_RECV_WR) : a.maxRecvWr(),
                    ia.get(JAVA_INT, cap + IbvStructs.CAP_MAX_SEND_SGE), srq == null
                    ? ia.get(JAVA_INT, cap + IbvStructs.CAP_MAX_RECV_SGE) : a.maxRecvSge(),
                    ia.get(JAVA_INT, cap + IbvStructs.CAP_MAX_INLINE), a.sigAll(), a.connection());
            IbvQp q = new IbvQp(pd, qp, a.type(), actual, scq, rcq, srq, path);
            scq.attach(q);
            rcq.attach(q);
            if (srq != null) {
                srq.addUser(q);
            }
            return q;
        }
    }

    private static IbvCq cq(CompletionQueue c, IbvContext ctx, String side) {
        if (!(c instanceof IbvCq cq) || cq.context != ctx) {
            throw new IllegalArgumentException(side + " CQ " + c + " is not of " + ctx);
        }
        cq.checkOpen();
        return cq;
    }

    private static void limit(int v, int min, int max, String what, String dev) {
        if (v < min || v > max) {
            throw new VerbsException("ibv_create_qp", Errno.EINVAL, dev,
                    what + "=" + v + " outside " + min + ".." + max + " (device limit)");
        }
    }

    // ---------------------------------------------------------------- state

    @Override
    public IbvPd pd() {
        return pd;
    }

    @Override
    public QpType type() {
        return type;
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    /** The device's view ({@code ibv_query_qp}): an error completion moves a QP to ERR behind the API's back. */
    @Override
    public QpState state() {
        if (isClosed()) {
            return state;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment at = a.allocate(IbvStructs.IBV_QP_ATTR);
            int rc = context.lib.queryQp(qp, at, IbvConst.IBV_QP_STATE, a.allocate(IbvStructs.IBV_QP_INIT_ATTR));
            if (rc == 0) {
                int code = at.get(JAVA_INT, IbvStructs.QPA_STATE);
                for (QpState q : QpState.values()) {
                    if (q.code == code) {
                        state = q;
                    }
                }
            }
        }
        return state;
    }

    /** The connection attributes the device holds for this QP ({@link Path#query}); for tests and reports. */
    Map<String, Integer> queryConnection() {
        checkOpen();
        return Path.query(context, qp, toString());
    }

    @Override
    public QpInitAttr attributes() {
        return attr;
    }

    @Override
    public boolean lockFree() {
        return pd.td != null;
    }

    @Override
    public int uuar() {
        return uuar;
    }

    @Override
    public QpAddress address() {
        return new QpAddress(context.name, path.gid().gid(), path.port().lid(), qpNum, psn, path.mtu());
    }

    /** The path MTU the device holds for this QP ({@code ibv_query_qp}); 0 before RTR or for UD/SRD. */
    @Override
    public int pathMtu() {
        if (type != QpType.RC || isClosed()) {
            return pathMtu;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment at = a.allocate(IbvStructs.IBV_QP_ATTR);
            int rc = context.lib.queryQp(qp, at, IbvConst.IBV_QP_PATH_MTU, a.allocate(IbvStructs.IBV_QP_INIT_ATTR));
            return rc == 0 && state().ordinal() >= QpState.RTR.ordinal() && state() != QpState.ERR
                    ? PathMtu.bytes(at.get(JAVA_INT, IbvStructs.QPA_PATH_MTU)) : pathMtu;
        }
    }

    private void modify(String step, QpState to, int mask, Consumer<MemorySegment> fill) {
        checkOpen();
        QpState state = state();
        if (!state.canMoveTo(to)) {
            throw new VerbsException("ibv_modify_qp", Errno.EINVAL, context.name,
                    step + ": QP " + qpNum + " is in " + state + ", cannot move to " + to);
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment at = a.allocate(IbvStructs.IBV_QP_ATTR);
            at.set(JAVA_INT, IbvStructs.QPA_STATE, to.code);
            fill.accept(at);
            int rc = context.lib.modifyQp(qp, at, IbvConst.IBV_QP_STATE | mask);
            if (rc != 0) {
                throw Check.fail("ibv_modify_qp", rc, context.name,
                        step + " of " + type + " QP " + qpNum + " (" + state + " -> " + to + "), attr_mask=0x"
                                + Integer.toHexString(IbvConst.IBV_QP_STATE | mask));
            }
            Events.qpState(context.name, qpNum, state, to);
            this.state = to;
        }
    }

    @Override
    public void init(int accessFlags) {
        if ((accessFlags & Access.REMOTE_ATOMIC) != 0 && !context.capabilities().atomicCap().supported()) {
            throw new UnsupportedFeatureException("ibv_modify_qp", context.name, "REMOTE_ATOMIC access on " + this
                    + " (atomic_cap is NONE: " + context.name + " has no RDMA atomics)");
        }
        if (type == QpType.RC) {
            modify("init", QpState.INIT, IbvConst.IBV_QP_PKEY_INDEX | IbvConst.IBV_QP_PORT
                    | IbvConst.IBV_QP_ACCESS_FLAGS, at -> {
                at.set(JAVA_BYTE, IbvStructs.QPA_PORT_NUM, (byte) path.port().port());
                at.set(JAVA_INT, IbvStructs.QPA_ACCESS_FLAGS, accessFlags);
            });
        } else {
            modify("init", QpState.INIT, IbvConst.IBV_QP_PKEY_INDEX | IbvConst.IBV_QP_PORT | IbvConst.IBV_QP_QKEY,
                    at -> {
                        at.set(JAVA_BYTE, IbvStructs.QPA_PORT_NUM, (byte) path.port().port());
                        at.set(JAVA_INT, IbvStructs.QPA_QKEY, QKEY);
                    });
        }
    }

    @Override
    public void readyToReceive(QpAddress remote) {
        if (type != QpType.RC) {
            modify("readyToReceive", QpState.RTR, 0, at -> { });
            return;
        }
        if (remote == null) {
            throw new IllegalArgumentException("an RC QP needs the remote QP's address to reach RTR");
        }
        var conn = attr.connection();
        int rdAtomic = conn.responderDepth("ibv_modify_qp", context.name, context.capabilities());
        int mtu = PathMtu.agree(path.mtu(), path.mtu(), remote.mtu());
        modify("readyToReceive", QpState.RTR, IbvConst.IBV_QP_AV | IbvConst.IBV_QP_PATH_MTU
                | IbvConst.IBV_QP_DEST_QPN | IbvConst.IBV_QP_RQ_PSN | IbvConst.IBV_QP_MAX_DEST_RD_ATOMIC
                | IbvConst.IBV_QP_MIN_RNR_TIMER, at -> {
            at.set(JAVA_INT, IbvStructs.QPA_PATH_MTU, PathMtu.code(mtu));
            at.set(JAVA_INT, IbvStructs.QPA_DEST_QP_NUM, remote.qpn());
            remoteQpn = remote.qpn();
            at.set(JAVA_INT, IbvStructs.QPA_RQ_PSN, remote.psn());
            at.set(JAVA_BYTE, IbvStructs.QPA_MAX_DEST_RD_ATOMIC, (byte) rdAtomic);
            at.set(JAVA_BYTE, IbvStructs.QPA_MIN_RNR_TIMER, (byte) conn.minRnrTimer());
            path.fillAh(at.asSlice(IbvStructs.QPA_AH_ATTR, IbvStructs.IBV_AH_ATTR), remote);
        });
        pathMtu = mtu;
    }

    @Override
    public void readyToSend(int retryCount, int rnrRetry) {
        if (retryCount < 0 || retryCount > 7 || rnrRetry < 0 || rnrRetry > 7) {
            throw new IllegalArgumentException("retryCount and rnrRetry must be in 0..7: " + retryCount + ", "
                    + rnrRetry);
        }
        if (type == QpType.RC) {
            var conn = attr.connection();
            int rdAtomic = conn.initiatorDepth("ibv_modify_qp", context.name, context.capabilities());
            modify("readyToSend", QpState.RTS, IbvConst.IBV_QP_TIMEOUT | IbvConst.IBV_QP_RETRY_CNT
                    | IbvConst.IBV_QP_RNR_RETRY | IbvConst.IBV_QP_SQ_PSN | IbvConst.IBV_QP_MAX_QP_RD_ATOMIC, at -> {
                at.set(JAVA_BYTE, IbvStructs.QPA_TIMEOUT, (byte) conn.timeout());
                at.set(JAVA_BYTE, IbvStructs.QPA_RETRY_CNT, (byte) retryCount);
                at.set(JAVA_BYTE, IbvStructs.QPA_RNR_RETRY, (byte) rnrRetry);
                at.set(JAVA_INT, IbvStructs.QPA_SQ_PSN, psn);
                at.set(JAVA_BYTE, IbvStructs.QPA_MAX_RD_ATOMIC, (byte) rdAtomic);
            });
        } else {
            boolean rnr = type == QpType.SRD && context.device.efa != null
                    && (context.device.efa.deviceCaps() & IbvConst.EFADV_DEVICE_ATTR_CAPS_RNR_RETRY) != 0;
            modify("readyToSend", QpState.RTS, IbvConst.IBV_QP_SQ_PSN | (rnr ? IbvConst.IBV_QP_RNR_RETRY : 0),
                    at -> {
                        at.set(JAVA_INT, IbvStructs.QPA_SQ_PSN, psn);
                        at.set(JAVA_BYTE, IbvStructs.QPA_RNR_RETRY, (byte) rnrRetry);
                    });
        }
    }

    @Override
    public void toError() {
        modify("toError", QpState.ERR, 0, at -> { });
    }

    @Override
    public void reset() {
        modify("reset", QpState.RESET, 0, at -> { });
        sends.reset();
        pathMtu = 0;
        recvConsumed.set(recvPosted.get()); // RESET empties the receive queue
    }

    // ---------------------------------------------------------------- data path

    @Override
    public int postSend(SendWorkRequests wrs) {
        return postSend(wrs, 0, wrs.count());
    }

    /**
     * Records {@code [from, from + n)}: {@code ibv_post_send} gets the address of record {@code from}
     * and the chain is cut after the last record posted (restored before returning); the EFA
     * {@code ibv_wr_*} path iterates the range. The records are accounted before the native call (a
     * completion may be polled before it returns) and the part the provider refused is taken back.
     */
    @Override
    public int postSend(SendWorkRequests wrs, int from, int n) {
        Objects.checkFromIndexSize(from, n, wrs.count());
        checkOpen();
        if (n == 0) {
            wrs.badIndex(-1);
            return 0;
        }
        if (qpx != null) {
            return postSendEx(wrs, from, n);
        }
        // Refuse what the QP was not created for, before the provider sees it (it may be lenient).
        int end = from + n;
        int limit = end;
        int refusal = 0;
        for (int i = from; i < end; i++) {
            int flags = wrs.flags(i);
            Opcode op = Opcode.of(wrs.opcode(i));
            if ((type == QpType.UD && op != Opcode.SEND && op != Opcode.SEND_WITH_IMM)
                    || (op != null && op.isAtomic() && !atomics)
                    || ((flags & SendFlags.INLINE) != 0 && wrs.length(i) > attr.maxInline())) {
                limit = i;
                refusal = Errno.EINVAL;
                break;
            }
        }
        int room = attr.maxSendWr() - outstandingSends();
        if (room < limit - from) {
            limit = from + Math.max(0, room);
            refusal = Errno.ENOMEM;
        }
        int rc = 0;
        int accepted = from;
        if (limit > from) {
            long posted0 = sends.postedMark();
            long tail0 = sends.tailMark();
            sends.publish(wrs, from, limit, posted0, tail0, attr.sigAll());
            MemorySegment chain = wrs.segment();
            long cut = WR * (limit - 1) + Structs.SEND_NEXT;
            long saved = chain.get(JAVA_LONG, cut);
            if (saved != 0L) {
                chain.set(JAVA_LONG, cut, 0L); // post only [from, limit); restored below
            }
            MemorySegment bad = wrs.badWrSlot();
            rc = Ops.postAt(postSendFn, qp, chain.address() + WR * from, bad);
            if (saved != 0L) {
                chain.set(JAVA_LONG, cut, saved);
            }
            accepted = limit;
            if (rc != 0) {
                long b = bad.get(JAVA_LONG, 0);
                accepted = b == 0 ? from : (int) ((b - wrs.address(0)) / WR);
                sends.publish(wrs, from, accepted, posted0, tail0, attr.sigAll()); // take back the refused
            }
        }
        if (rc == 0 && limit < end) {
            rc = refusal;
        }
        wrs.badIndex(rc == 0 ? -1 : accepted);
        count(wrs, from, accepted);
        return rc;
    }

    /** SRD: one {@code wr_start..wr_complete} batch, after checking the v44 EFA rules for every WR. */
    private int postSendEx(SendWorkRequests wrs, int from, int n) {
        int end = from + n;
        for (int i = from; i < end; i++) {
            int flags = wrs.flags(i);
            Opcode op = Opcode.of(wrs.opcode(i));
            boolean inline = (flags & SendFlags.INLINE) != 0;
            if ((flags & ~(SendFlags.SIGNALED | SendFlags.INLINE)) != 0 || (flags & SendFlags.SIGNALED) == 0
                    || !srdOpcode(op, wrs, i)
                    || (inline && wrs.numSge(i) > 1)) {
                wrs.badIndex(i);
                return Errno.EINVAL;
            }
        }
        if (attr.maxSendWr() - outstandingSends() < n) {
            wrs.badIndex(from);
            return Errno.ENOMEM;
        }
        long posted0 = sends.postedMark();
        long tail0 = sends.tailMark();
        sends.publish(wrs, from, end, posted0, tail0, true); // SRD: every WR is signaled
        MemorySegment sges = wrs.segment();
        Ops.voidOp(wrStart, qpx);
        for (int i = from; i < end; i++) {
            long base = WR * i;
            qpx.set(JAVA_LONG, IbvStructs.QPX_WR_ID, wrs.wrId(i));
            int flags = wrs.flags(i);
            qpx.set(JAVA_INT, IbvStructs.QPX_WR_FLAGS, flags);
            int op = wrs.opcode(i);
            if (op == Opcode.SEND_WITH_IMM.code) {
                Ops.wrSendImm(wrSendImm, qpx, sges.get(JAVA_INT, base + Structs.SEND_IMM));
            } else if (op == Opcode.SEND.code) {
                Ops.voidOp(wrSend, qpx);
            } else {
                Ops.wrRdma(op == Opcode.RDMA_READ.code ? wrRdmaRead : wrRdmaWrite, qpx, wrs.rkey(i), wrs.remoteAddr(i));
            }
            if (op == Opcode.SEND.code || op == Opcode.SEND_WITH_IMM.code) {
                Ops.wrSetUdAddr(wrSetUdAddr, qpx, wrs.ahHandle(i), wrs.remoteQpn(i), wrs.remoteQkey(i));
            } else {
                Ops.wrSetUdAddr(wrSetUdAddr, qpx, wrs.srdAhHandle(i), wrs.srdRemoteQpn(i), wrs.srdRemoteQkey(i));
            }
            if ((flags & SendFlags.INLINE) != 0) {
                Ops.wrSetInlineData(wrSetInline, qpx, wrs.sgeAddr(i, 0), Integer.toUnsignedLong(wrs.sgeLength(i, 0)));
            } else {
                Ops.wrSetSgeList(wrSetSgeList, qpx, wrs.numSge(i), sges.get(JAVA_LONG, base + Structs.SEND_SG_LIST));
            }
        }
        int rc = Ops.intOp(wrComplete, qpx);
        if (rc != 0) {
            sends.publish(wrs, from, from, posted0, tail0, true);
        }
        wrs.badIndex(rc == 0 ? -1 : from);
        count(wrs, from, rc == 0 ? end : from);
        return rc;
    }

    /** v44 EFA: send and send-with-imm; RDMA read/write only where the device reports them, via {@code srdRdma}. */
    private boolean srdOpcode(Opcode op, SendWorkRequests wrs, int i) {
        if (op == Opcode.SEND || op == Opcode.SEND_WITH_IMM) {
            return true;
        }
        var caps = context.capabilities();
        return wrs.srdAhHandle(i) != 0 && (op == Opcode.RDMA_READ && caps.rdmaRead()
                || op == Opcode.RDMA_WRITE && caps.rdmaWrite());
    }

    /** Feature counters for records {@code [from, acceptedEnd)} (poster-owned plain fields). */
    private void count(SendWorkRequests wrs, int from, int acceptedEnd) {
        int accepted = acceptedEnd - from;
        if (accepted <= 0) {
            return;
        }
        int inline = 0;
        for (int i = from; i < acceptedEnd; i++) {
            if ((wrs.flags(i) & SendFlags.INLINE) != 0) {
                inline++;
            }
        }
        Counters c = counters;
        c.doorbells++;
        c.wqes += accepted;
        c.inlineWqes += inline;
    }

    @Override
    public int postRecv(RecvWorkRequests wrs) {
        checkOpen();
        if (srq != null) {
            throw new IllegalStateException("QP " + qpNum + " receives through " + srq + ": post to the SRQ");
        }
        int n = wrs.count();
        if (n == 0) {
            return 0;
        }
        // The device may have made the receive queue larger than it reports (rxe rounds up): hold
        // posts to the reported max_recv_wr so that back-pressure is the same on every provider.
        int limit = Math.min(n, Math.max(0, attr.maxRecvWr() - (int) (recvPosted.get() - recvConsumed.get())));
        int rc = 0;
        int accepted = 0;
        if (limit > 0) {
            MemorySegment chain = wrs.segment();
            long cut = RWR * (limit - 1) + Structs.RECV_NEXT;
            long saved = chain.get(JAVA_LONG, cut);
            if (limit < n) {
                chain.set(JAVA_LONG, cut, 0L); // post only the prefix that fits; restored below
            }
            MemorySegment bad = wrs.badWrSlot();
            rc = Ops.post(postRecvFn, qp, chain, bad);
            if (limit < n) {
                chain.set(JAVA_LONG, cut, saved);
            }
            accepted = rc == 0 ? limit : IbvSrq.badIndex(wrs, bad);
        }
        if (rc == 0 && limit < n) {
            rc = Errno.ENOMEM;
        }
        wrs.badIndex(rc == 0 ? -1 : accepted);
        recvPosted.addAndGet(accepted);
        counters.receives += accepted;
        return rc;
    }

    /** The connected peer's QP number (RC), reported as a receive's source QP; 0 before RTR. */
    volatile int remoteQpn;

    /**
     * Called by a polling CQ for each completion of this QP. A send completion retires every WQE up
     * to the next signaled one (in-order devices), or one WQE when no signaled entry is pending (an
     * error completion of an unsignaled WQE). Lock-free ({@link SendRing}).
     */
    void completed(int status, int opcode, IbvCq cq) {
        boolean recv = status == WcStatus.SUCCESS ? WcOpcode.isReceive(opcode) : cq != sendCq;
        if (recv) {
            if (srq != null && status == WcStatus.SUCCESS) {
                srq.consumed.incrementAndGet();
            } else if (srq == null) {
                recvConsumed.incrementAndGet();
            }
            return;
        }
        sends.completed();
    }

    @Override
    public int outstandingSends() {
        return sends.outstanding();
    }

    @Override
    public QpCounters counters() {
        return counters;
    }

    /** Counts written by the posting thread; approximate when several threads post to one QP. */
    private static final class Counters implements QpCounters {
        long doorbells, wqes, inlineWqes, receives;

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

        /** Not observable through verbs: 0. */
        @Override
        public long blueFlameWrites() {
            return 0;
        }

        @Override
        public long receivesPosted() {
            return receives;
        }
    }

    // ---------------------------------------------------------------- lifecycle

    @Override
    void destroyNative() {
        int rc = context.lib.destroyQp(qp);
        if (rc != 0) {
            throw Check.fail("ibv_destroy_qp", rc, context.name, toString());
        }
    }

    @Override
    void unlink() {
        sendCq.detach(this);
        recvCq.detach(this);
        if (srq != null) {
            srq.removeUser(this);
        }
        pd.removeChild(this);
        synchronized (context) {
            context.qps.remove(this);
        }
        context.releaseUuar(uuar);
        context.usage.add(Usage.Kind.QP, -1, Usage.qpBytes(attr.maxSendWr(), attr.maxRecvWr()));
    }

    @Override
    public void close() {
        destroy();
    }

    @Override
    public String toString() {
        return type + " QP " + qpNum + " on " + context.name;
    }

    SharedReceiveQueue srq() {
        return srq;
    }
}
