package dev.scalep.endpoints;

import dev.scalep.endpoints.srd.RecvRefiller;
import dev.scalep.threading.WrIds;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SharedReceiveQueue;

/**
 * One endpoint's receive side: its receive slots in the endpoint's region, posted to its QP's
 * receive queue, or as its share of an SRQ through a {@link RecvRefiller} that reposts consumed
 * slots in batches. The lock is the one of every endpoint on the same QP (they post to one queue).
 */
final class EndpointReceives {
    private final int endpoint;
    private final int owner;
    private final QueuePair qp;
    private final SharedReceiveQueue srq;
    private final Object lock;
    private final RecvWorkRequests recv = new RecvWorkRequests(1, 1);
    private final long addr;
    private final int slotBytes;
    private final int lkey;
    private final int depth;
    private final int slots;
    private final int refillBatch;
    private final int refillThreshold;
    private RecvRefiller refiller;

    EndpointReceives(int endpoint, int owner, QueuePair qp, SharedReceiveQueue srq, Object lock, long addr, int lkey,
                     EndpointPlan plan) {
        this.endpoint = endpoint;
        this.owner = owner;
        this.qp = qp;
        this.srq = srq;
        this.lock = lock;
        this.addr = addr;
        this.lkey = lkey;
        this.slotBytes = plan.options().recvSlotBytes();
        this.depth = plan.options().recvDepth();
        this.slots = srq != null ? plan.recvSlotsPerEndpoint() : depth;
        this.refillBatch = plan.srqRefillBatch();
        this.refillThreshold = plan.srqRefillThreshold();
    }

    void postInitial() {
        if (srq != null) {
            // One postRecv call stocks this endpoint's share of the SRQ; consumed slots go back in batches.
            synchronized (lock) {
                refiller = RecvRefiller.forSrq(srq, slots, addr, slotBytes, lkey, Math.min(refillBatch, slots),
                        refillThreshold, WrIds.recv(owner, 0));
            }
            return;
        }
        for (int s = 0; s < depth; s++) {
            int rc = post(s);
            if (rc != 0) {
                throw new IllegalStateException("posting receive " + s + " of endpoint " + endpoint + " failed: errno="
                        + rc + " (" + Errno.name(rc) + ")");
            }
        }
    }

    int post(int slot) {
        if (slot < 0 || slot >= slots) {
            throw new IllegalArgumentException("receive slot " + slot + " out of range 0.." + (slots - 1));
        }
        synchronized (lock) {
            if (refiller != null) {
                refiller.release(slot);
                return 0;
            }
            recv.clear();
            recv.add(WrIds.recv(owner, slot));
            recv.sge(0, addr + (long) slot * slotBytes, slotBytes, lkey);
            return srq != null ? srq.postRecv(recv) : qp.postRecv(recv);
        }
    }

    int slots() {
        return slots;
    }

    long postCalls() {
        synchronized (lock) {
            return refiller == null ? -1 : refiller.batches();
        }
    }

    long posted() {
        synchronized (lock) {
            return refiller == null ? -1 : refiller.posted();
        }
    }

    int waiting() {
        synchronized (lock) {
            return refiller == null ? 0 : refiller.waiting();
        }
    }

    void close() {
        recv.close();
        synchronized (lock) {
            if (refiller != null) {
                refiller.close();
                refiller = null;
            }
        }
    }
}
