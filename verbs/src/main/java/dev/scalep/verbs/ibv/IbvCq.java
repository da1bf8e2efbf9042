package dev.scalep.verbs.ibv;

import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.UnsupportedFeatureException;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import dev.scalep.verbs.ffm.IbvConst;
import dev.scalep.verbs.ffm.IbvStructs;
import dev.scalep.verbs.ffm.Native;
import dev.scalep.verbs.ffm.Ops;
import dev.scalep.verbs.ffm.Structs;

import org.agrona.collections.Int2ObjectHashMap;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * An {@code ibv_cq} ({@code ibv_create_cq}) or {@code ibv_cq_ex} ({@code ibv_create_cq_ex}: when
 * extended or single-threaded is asked for, and always on EFA). Legacy CQs poll with the provider's
 * {@code poll_cq} straight into the {@link WorkCompletions} memory; extended CQs walk
 * {@code start_poll}/{@code next_poll}/{@code end_poll} and copy each completion. Polling does not
 * allocate. Without the single-threaded flag the provider serialises concurrent polls.
 */
final class IbvCq extends IbvResource implements CompletionQueue {
    /** Completion fields asked of extended CQs. */
    static final long WC_FLAGS = IbvConst.IBV_WC_EX_WITH_BYTE_LEN | IbvConst.IBV_WC_EX_WITH_IMM
            | IbvConst.IBV_WC_EX_WITH_QP_NUM | IbvConst.IBV_WC_EX_WITH_SRC_QP;

    final MemorySegment cq;
    private final MemorySegment channel;
    private final boolean extended;
    private final boolean singleThreaded;
    private final int depth;
    private final Arena arena = Arena.ofShared();
    // legacy
    private final MemorySegment pollFn;
    private final MemorySegment reqNotifyFn;
    // extended
    private final MemorySegment pollAttr;
    private final MemorySegment startPoll, nextPoll, endPoll, readOpcode, readVendorErr, readByteLen, readImm,
            readQpNum, readSrcQp, readWcFlags;
    private static final VarHandle CQES;

    static {
        try {
            CQES = MethodHandles.lookup().findVarHandle(IbvCq.class, "cqes", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** QPs attached (send or receive side); replaced copy-on-write, read by pollers. */
    private volatile IbvQp[] qps = new IbvQp[0];
    /** The same QPs by QP number (copy-on-write with {@link #qps}): one hash probe per completion. */
    private volatile Int2ObjectHashMap<IbvQp> byQpn = new Int2ObjectHashMap<>();
    private volatile boolean overrun;
    /** Completions polled; added atomically (several threads may poll a CQ the provider serialises). */
    private volatile long cqes;
    private int unacked;

    private IbvCq(IbvContext ctx, MemorySegment cq, MemorySegment channel, boolean extended, boolean singleThreaded) {
        super(ctx);
        this.cq = cq.reinterpret(extended ? IbvStructs.IBV_CQ_EX.byteSize() : IbvStructs.IBV_CQ.byteSize());
        this.channel = channel;
        this.extended = extended;
        this.singleThreaded = singleThreaded;
        this.depth = this.cq.get(JAVA_INT, IbvStructs.CQ_CQE);
        this.pollFn = ctx.pollCqFn;
        this.reqNotifyFn = ctx.reqNotifyFn;
        if (extended) {
            pollAttr = arena.allocate(IbvStructs.IBV_POLL_CQ_ATTR);
            startPoll = this.cq.get(ADDRESS, IbvStructs.CQX_START_POLL);
            nextPoll = this.cq.get(ADDRESS, IbvStructs.CQX_NEXT_POLL);
            endPoll = this.cq.get(ADDRESS, IbvStructs.CQX_END_POLL);
            readOpcode = this.cq.get(ADDRESS, IbvStructs.CQX_READ_OPCODE);
            readVendorErr = this.cq.get(ADDRESS, IbvStructs.CQX_READ_VENDOR_ERR);
            readByteLen = this.cq.get(ADDRESS, IbvStructs.CQX_READ_BYTE_LEN);
            readImm = this.cq.get(ADDRESS, IbvStructs.CQX_READ_IMM_DATA);
            readQpNum = this.cq.get(ADDRESS, IbvStructs.CQX_READ_QP_NUM);
            readSrcQp = this.cq.get(ADDRESS, IbvStructs.CQX_READ_SRC_QP);
            readWcFlags = this.cq.get(ADDRESS, IbvStructs.CQX_READ_WC_FLAGS);
        } else {
            pollAttr = startPoll = nextPoll = endPoll = readOpcode = readVendorErr = readByteLen = readImm = null;
            readQpNum = readSrcQp = readWcFlags = null;
        }
    }

    static IbvCq create(IbvContext ctx, CqOptions o) {
        boolean extended = o.extended() || o.singleThreaded() || ctx.capabilities().extendedCqOnly();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = Native.callState(a);
            MemorySegment channel = MemorySegment.NULL;
            if (o.completionChannel()) {
                channel = ctx.lib.createCompChannel(st, ctx.ctx);
                if (channel.equals(MemorySegment.NULL)) {
                    throw Check.fail("ibv_create_comp_channel", Native.errno(st), ctx.name, "completion channels", null);
                }
                channel = channel.reinterpret(IbvStructs.IBV_COMP_CHANNEL.byteSize());
            }
            MemorySegment cq;
            String verb;
            if (extended) {
                verb = "ibv_create_cq_ex";
                MemorySegment create = ExtOps.op(ctx.ctx, "create_cq_ex");
                if (create == null) {
                    destroyChannel(ctx, channel);
                    throw new UnsupportedFeatureException(verb, ctx.name, "extended CQs");
                }
                MemorySegment attr = a.allocate(IbvStructs.IBV_CQ_INIT_ATTR_EX);
                attr.set(JAVA_INT, IbvStructs.CQIA_CQE, o.depth());
                attr.set(ADDRESS, IbvStructs.CQIA_CHANNEL, channel);
                attr.set(JAVA_LONG, IbvStructs.CQIA_WC_FLAGS, WC_FLAGS);
                if (o.singleThreaded()) {
                    attr.set(JAVA_INT, IbvStructs.CQIA_COMP_MASK, IbvConst.IBV_CQ_INIT_ATTR_MASK_FLAGS);
                    attr.set(JAVA_INT, IbvStructs.CQIA_FLAGS, IbvConst.IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
                }
                cq = Ops.createWithAttr(st, create, ctx.ctx, attr);
            } else {
                verb = "ibv_create_cq";
                cq = ctx.lib.createCq(st, ctx.ctx, o.depth(), channel, 0);
            }
            if (cq.equals(MemorySegment.NULL)) {
                int errno = Native.errno(st);
                destroyChannel(ctx, channel);
                throw Check.fail(verb, errno, ctx.name, o.singleThreaded() ? "single-threaded CQs" : "extended CQs",
                        "cqe=" + o.depth());
            }
            return new IbvCq(ctx, cq, channel, extended, o.singleThreaded());
        }
    }

    private static void destroyChannel(IbvContext ctx, MemorySegment channel) {
        if (!channel.equals(MemorySegment.NULL)) {
            try (Arena a = Arena.ofConfined()) {
                ctx.lib.destroyCompChannel(Native.callState(a), channel);
            }
        }
    }

    synchronized void attach(IbvQp qp) {
        IbvQp[] old = qps;
        for (IbvQp q : old) {
            if (q == qp) {
                return;
            }
        }
        IbvQp[] n = Arrays.copyOf(old, old.length + 1);
        n[old.length] = qp;
        publish(n);
    }

    /** Publish a new attachment set (under this CQ's monitor: attach/detach are control path). */
    private void publish(IbvQp[] n) {
        Int2ObjectHashMap<IbvQp> m = new Int2ObjectHashMap<>();
        for (IbvQp q : n) {
            m.put(q.qpNum, q);
        }
        byQpn = m;
        qps = n;
    }

    synchronized void detach(IbvQp qp) {
        IbvQp[] old = qps;
        int j = 0;
        IbvQp[] n = new IbvQp[old.length];
        for (IbvQp q : old) {
            if (q != qp) {
                n[j++] = q;
            }
        }
        publish(Arrays.copyOf(n, j));
    }

    @Override
    public IbvContext context() {
        return context;
    }

    @Override
    public int depth() {
        return depth;
    }

    @Override
    public boolean singleThreaded() {
        return singleThreaded;
    }

    @Override
    public int poll(WorkCompletions out, int max) {
        checkOpen();
        int n = Math.min(max, out.capacity());
        if (n <= 0) {
            return 0;
        }
        int got = extended ? pollExtended(out, n) : Ops.pollCq(pollFn, cq, n, out.segment());
        if (got < 0 || got > n) {
            // A negative result is a CQ error; more than asked is a stub's errno (e.g. EOPNOTSUPP), never completions.
            overrun = got < 0;
            return got > n ? -got : -Errno.EIO;
        }
        if (got > 0) {
            CQES.getAndAdd(this, (long) got);
            account(out, got);
        }
        return got;
    }

    private int pollExtended(WorkCompletions out, int n) {
        int rc = Ops.startPoll(startPoll, cq, pollAttr);
        if (rc == 2 /* ENOENT */) {
            return 0;
        }
        if (rc != 0) {
            return -rc;
        }
        int i = 0;
        while (true) {
            long wrId = cq.get(JAVA_LONG, IbvStructs.CQX_WR_ID);
            int status = cq.get(JAVA_INT, IbvStructs.CQX_STATUS);
            int qpNum = Ops.intOp(readQpNum, cq);
            if (status == WcStatus.SUCCESS) {
                int flags = Ops.intOp(readWcFlags, cq);
                boolean withImm = (flags & Structs.IBV_WC_WITH_IMM) != 0;
                out.put(i, wrId, status, Ops.intOp(readOpcode, cq), Ops.intOp(readByteLen, cq),
                        withImm ? Integer.reverseBytes(Ops.intOp(readImm, cq)) : 0, withImm, qpNum,
                        Ops.intOp(readSrcQp, cq));
            } else {
                out.put(i, wrId, status, 0, 0, 0, false, qpNum, 0);
                out.segment().set(JAVA_INT, (long) i * Structs.IBV_WC.byteSize() + Structs.WC_VENDOR_ERR,
                        Ops.intOp(readVendorErr, cq));
            }
            i++;
            if (i == n) {
                break;
            }
            rc = Ops.intOp(nextPoll, cq);
            if (rc != 0) {
                break; // ENOENT: drained; other errors surface on the next start_poll
            }
        }
        Ops.voidOp(endPoll, cq);
        return i;
    }

    /** Retires send WQEs and SRQ receives of the polled completions (for outstandingSends / posted). */
    private void account(WorkCompletions out, int n) {
        Int2ObjectHashMap<IbvQp> attached = byQpn;
        for (int i = 0; i < n; i++) {
            IbvQp q = attached.get(out.qpNum(i));
            if (q != null) {
                q.completed(out.status(i), out.opcode(i), this);
                if (q.remoteQpn != 0 && out.srcQp(i) == 0 && WcOpcode.isReceive(out.opcode(i))) {
                    // RC: the source QP is the connected peer (rxe leaves src_qp 0 on RC receives)
                    out.segment().set(JAVA_INT, (long) i * Structs.IBV_WC.byteSize() + Structs.WC_SRC_QP,
                            q.remoteQpn);
                }
            }
        }
    }

    @Override
    public void moderate(int count, int periodMicros) {
        checkOpen();
        MemorySegment modify = ExtOps.op(context.ctx, "modify_cq");
        if (modify == null) {
            throw new UnsupportedFeatureException("ibv_modify_cq", context.name, "CQ moderation");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IbvStructs.IBV_MODIFY_CQ_ATTR);
            attr.set(JAVA_INT, IbvStructs.MCQ_ATTR_MASK, IbvConst.IBV_CQ_ATTR_MODERATE);
            attr.set(ValueLayout.JAVA_SHORT, IbvStructs.MCQ_COUNT, (short) count);
            attr.set(ValueLayout.JAVA_SHORT, IbvStructs.MCQ_PERIOD, (short) periodMicros);
            int rc = Ops.modify(modify, cq, attr);
            if (rc != 0) {
                throw Check.fail("ibv_modify_cq", rc, context.name, "CQ moderation",
                        "count=" + count + ", period=" + periodMicros + "us");
            }
        }
    }

    private void requireChannel(String verb) {
        if (channel.equals(MemorySegment.NULL)) {
            throw new IllegalStateException(verb + ": " + this + " was created without a completion channel"
                    + " (CqOptions.withCompletionChannel(true))");
        }
    }

    @Override
    public void requestNotify() {
        checkOpen();
        requireChannel("ibv_req_notify_cq");
        int rc = Ops.reqNotifyCq(reqNotifyFn, cq, 0);
        if (rc != 0) {
            throw Check.fail("ibv_req_notify_cq", rc, context.name, toString());
        }
    }

    @Override
    public boolean awaitEvent(long timeoutNanos) {
        checkOpen();
        requireChannel("ibv_get_cq_event");
        int fd = channel.get(JAVA_INT, IbvStructs.CHANNEL_FD);
        int ms = timeoutNanos < 0 ? -1 : (int) Math.min(Integer.MAX_VALUE, (timeoutNanos + 999_999) / 1_000_000);
        int r = Native.pollIn(fd, ms);
        if (r < 0) {
            throw new VerbsException("poll(comp_channel fd)", -r, context.name, toString());
        }
        if (r == 0) {
            return false;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = Native.callState(a);
            MemorySegment cqOut = a.allocate(ADDRESS);
            MemorySegment ctxOut = a.allocate(ADDRESS);
            if (context.lib.getCqEvent(st, channel, cqOut, ctxOut) != 0) {
                throw Check.fail("ibv_get_cq_event", Native.errno(st), context.name, toString());
            }
            synchronized (this) {
                unacked++;
            }
            return true;
        }
    }

    @Override
    public void ackEvents(int n) {
        checkOpen();
        synchronized (this) {
            if (n < 0 || n > unacked) {
                throw new IllegalArgumentException("ack of " + n + " events, " + unacked + " unacknowledged");
            }
            context.lib.ackCqEvents(cq, n);
            unacked -= n;
        }
    }

    @Override
    public synchronized int unackedEvents() {
        return unacked;
    }

    @Override
    public boolean isOverrun() {
        return overrun;
    }

    @Override
    public long cqesWritten() {
        return cqes;
    }

    @Override
    synchronized void checkNoChildren() {
        if (qps.length > 0) {
            throw Check.busy("ibv_destroy_cq", context.name, toString(), List.of(qps));
        }
    }

    @Override
    void destroyNative() {
        synchronized (this) {
            if (unacked > 0) {
                context.lib.ackCqEvents(cq, unacked);
                unacked = 0;
            }
        }
        int rc = context.lib.destroyCq(cq);
        if (rc != 0) {
            throw Check.fail("ibv_destroy_cq", rc, context.name, toString());
        }
        if (!channel.equals(MemorySegment.NULL)) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment st = Native.callState(a);
                if (context.lib.destroyCompChannel(st, channel) != 0) {
                    throw Check.fail("ibv_destroy_comp_channel", Native.errno(st), context.name, toString());
                }
            }
        }
        arena.close();
    }

    @Override
    void unlink() {
        synchronized (context) {
            context.cqs.remove(this);
        }
        context.usage.add(Usage.Kind.CQ, -1, Usage.cqBytes(depth));
    }

    @Override
    public void close() {
        destroy();
    }

    @Override
    public String toString() {
        return (extended ? "CQ(ex)" : "CQ") + " 0x" + Long.toHexString(cq.address()) + " on " + context.name;
    }
}
