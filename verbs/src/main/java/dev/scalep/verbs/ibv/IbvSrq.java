package dev.scalep.verbs.ibv;

import dev.scalep.verbs.MemoryModel;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SharedReceiveQueue;
import dev.scalep.verbs.ffm.Ops;
import dev.scalep.verbs.ffm.Structs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;


/**
 * An {@code ibv_srq}. {@link #postRecv} calls the provider's {@code post_srq_recv} (thread-safe in the
 * provider); {@link #posted()} counts receives posted minus receive completions polled for its QPs.
 */
final class IbvSrq extends IbvResource implements SharedReceiveQueue {

    private final IbvPd pd;
    final MemorySegment srq;
    private final int maxWr;
    private final int maxSge;
    private final MemorySegment postFn;
    final AtomicLong posted = new AtomicLong();
    final AtomicLong consumed = new AtomicLong();
    private final List<IbvQp> users = new ArrayList<>();

    IbvSrq(IbvPd pd, MemorySegment srq, int maxWr, int maxSge) {
        super(pd.context);
        this.pd = pd;
        this.srq = srq;
        this.maxWr = maxWr;
        this.maxSge = maxSge;
        this.postFn = context.postSrqRecvFn;
    }

    synchronized void addUser(IbvQp qp) {
        users.add(qp);
    }

    synchronized void removeUser(IbvQp qp) {
        users.remove(qp);
    }

    @Override
    public IbvPd pd() {
        return pd;
    }

    @Override
    public int maxWr() {
        return maxWr;
    }

    @Override
    public int maxSge() {
        return maxSge;
    }

    @Override
    public int postRecv(RecvWorkRequests wrs) {
        checkOpen();
        int n = wrs.count();
        if (n == 0) {
            return 0;
        }
        MemorySegment bad = wrs.badWrSlot();
        int rc = Ops.post(postFn, srq, wrs.segment(), bad);
        int accepted = rc == 0 ? n : badIndex(wrs, bad);
        wrs.badIndex(rc == 0 ? -1 : accepted);
        posted.addAndGet(accepted);
        return rc;
    }

    static int badIndex(RecvWorkRequests wrs, MemorySegment bad) {
        long b = bad.get(ValueLayout.JAVA_LONG, 0);
        return b == 0 ? 0 : (int) ((b - wrs.address(0)) / Structs.IBV_RECV_WR.byteSize());
    }

    @Override
    public int posted() {
        return (int) Math.max(0, posted.get() - consumed.get());
    }

    @Override
    synchronized void checkNoChildren() {
        if (!users.isEmpty()) {
            throw Check.busy("ibv_destroy_srq", context.name, toString(), users);
        }
    }

    @Override
    void destroyNative() {
        int rc = context.lib.destroySrq(srq);
        if (rc != 0) {
            throw Check.fail("ibv_destroy_srq", rc, context.name, toString());
        }
    }

    @Override
    void unlink() {
        pd.removeChild(this);
        synchronized (context) {
            context.srqs.remove(this);
        }
        context.usage.add(Usage.Kind.SRQ, -1, MemoryModel.srqBytes(maxWr));
    }

    @Override
    public void close() {
        destroy();
    }

    @Override
    public String toString() {
        return "SRQ 0x" + Long.toHexString(srq.address()) + " on " + context.name;
    }
}
