package dev.scalep.verbs;

import dev.scalep.verbs.ffm.Structs;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A reusable, allocation-free chain of receive work requests in the native
 * {@code struct ibv_recv_wr} layout, posted with one call to a QP's receive queue or an SRQ.
 * Not thread-safe; owns its native memory until {@link #close()}.
 */
public final class RecvWorkRequests extends WorkRequestList {
    private static final long WR = Structs.IBV_RECV_WR.byteSize();


    public RecvWorkRequests(int capacity, int maxSge) {
        super(capacity, maxSge, WR, Structs.RECV_SG_LIST);
    }

    /** Append a receive with no SGEs; returns its index, or -1 when the list is full. */
    public int add(long wrId) {
        int i = count;
        if (i == capacity()) {
            return -1;
        }
        long base = WR * i;
        wrs.set(JAVA_LONG, base + Structs.RECV_WR_ID, wrId);
        wrs.set(JAVA_LONG, base + Structs.RECV_NEXT, 0L);
        wrs.set(JAVA_INT, base + Structs.RECV_NUM_SGE, 0);
        if (i > 0) {
            wrs.set(JAVA_LONG, base - WR + Structs.RECV_NEXT, wrs.address() + base);
        }
        count = i + 1;
        return i;
    }

    public RecvWorkRequests sge(int i, long addr, int length, int lkey) {
        long base = WR * i;
        int n = wrs.get(JAVA_INT, base + Structs.RECV_NUM_SGE);
        if (n == maxSge()) {
            throw new IllegalStateException("receive " + i + " already has " + maxSge() + " SGEs");
        }
        putSge(i, n, addr, length, lkey);
        wrs.set(JAVA_INT, base + Structs.RECV_NUM_SGE, n + 1);
        return this;
    }

    public RecvWorkRequests sge(int i, MemoryRegion mr, long offset, int length) {
        return sge(i, mr.address() + offset, length, mr.lkey());
    }

    public long wrId(int i) {
        return wrs.get(JAVA_LONG, WR * i + Structs.RECV_WR_ID);
    }

    public int numSge(int i) {
        return wrs.get(JAVA_INT, WR * i + Structs.RECV_NUM_SGE);
    }
}
