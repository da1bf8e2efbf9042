package dev.scalep.verbs;

import dev.scalep.verbs.ffm.Structs;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * A reusable, allocation-free chain of receive work requests in the native
 * {@code struct ibv_recv_wr} layout, posted with one call to a QP's receive queue or an SRQ.
 * Not thread-safe; owns its native memory until {@link #close()}.
 */
public final class RecvWorkRequests extends WorkRequestList {
    private static final long WR = Structs.IBV_RECV_WR.byteSize();


    public RecvWorkRequests(int capacity, int maxSge) {
        super(capacity, maxSge, WR, Structs.RECV_WR_ID, Structs.RECV_NEXT, Structs.RECV_SG_LIST, Structs.RECV_NUM_SGE);
    }

    /** Append a receive with no SGEs; returns its index, or -1 when the list is full. */
    public int add(long wrId) {
        return appendRecord(wrId);
    }

    public RecvWorkRequests sge(int i, long addr, int length, int lkey) {
        appendSge(i, addr, length, lkey, "receive");
        return this;
    }

    public RecvWorkRequests sge(int i, MemoryRegion mr, long offset, int length) {
        return sge(i, mr.address() + offset, length, mr.lkey());
    }

    public long wrId(int i) {
        return wrs.get(JAVA_LONG_UNALIGNED, WR * i + Structs.RECV_WR_ID);
    }

    public int numSge(int i) {
        return wrs.get(JAVA_INT_UNALIGNED, WR * i + Structs.RECV_NUM_SGE);
    }
}
