package dev.scalep.verbs.sim;

import dev.scalep.verbs.Errno;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SharedReceiveQueue;
import dev.scalep.verbs.VerbsException;

import java.util.LinkedHashSet;
import java.util.Set;

/** A simulated SRQ: one receive ring consumed by whichever attached QP a message reaches. Thread-safe. */
final class SimSrq extends SimResource implements SharedReceiveQueue {
    final SimPd pd;
    final SimRecvQueue queue;
    final Set<SimQp> qps = new LinkedHashSet<>();

    SimSrq(SimPd pd, int maxWr, int maxSge) {
        super(pd.ctx);
        this.pd = pd;
        this.queue = new SimRecvQueue(maxWr, maxSge);
    }

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public int maxWr() {
        return queue.capacity;
    }

    @Override
    public int maxSge() {
        return queue.maxSge;
    }

    @Override
    public int postRecv(RecvWorkRequests wrs) {
        checkOpen();
        return queue.post(wrs);
    }

    @Override
    public int posted() {
        return queue.count();
    }

    @Override
    void checkNoChildren() {
        if (!qps.isEmpty()) {
            throw new VerbsException("ibv_destroy_srq", Errno.EBUSY, pd.ctx.device.name(), "still used by " + qps);
        }
    }

    @Override
    void release() {
        queue.clear();
        pd.srqs.remove(this);
        pd.ctx.srqs.remove(this);
        pd.ctx.accounting.add(Accounting.SRQS, -1);
        pd.ctx.accounting.add(Accounting.MEMORY, -Accounting.SRQ_BYTES_PER_WR * queue.capacity);
    }

    @Override
    public String toString() {
        return "SRQ (" + queue.capacity + " WRs)";
    }
}
