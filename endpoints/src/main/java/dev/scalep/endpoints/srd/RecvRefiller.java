package dev.scalep.endpoints.srd;

import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SharedReceiveQueue;
import dev.scalep.verbs.VerbsException;

/**
 * Keeps a receive queue (an SRQ or a QP's own) stocked with receives, reposting consumed ones in
 * batches: buffers returned with {@link #release(int)} are collected and posted with one call once
 * at least {@code threshold} are waiting (UCCL's batched SRQ refill). Receive {@code k} uses bytes
 * {@code [k*bufSize, (k+1)*bufSize)} of the buffer region (or no SGE when {@code bufSize == 0});
 * its wr_id is {@code idBase | k}. On an SRQ a low-water mark may be set as well: once fewer than
 * {@code lowWater} receives are posted on the SRQ (by every user of it), a release posts whatever is
 * waiting even below the batch size. Not thread-safe; allocation-free after construction.
 */
public final class RecvRefiller implements AutoCloseable {
    private final SharedReceiveQueue srq;
    private final QueuePair qp;
    private final long bufAddr;
    private final int bufSize;
    private final int lkey;
    private final int threshold;
    private final int lowWater;
    private final long idBase;
    private final RecvWorkRequests list;
    private final int[] pending;
    private int pendingCount;
    private long batches;
    private long posted;

    private RecvRefiller(SharedReceiveQueue srq, QueuePair qp, int count, long bufAddr, int bufSize, int lkey,
                         int threshold, int lowWater, long idBase) {
        if (threshold < 1 || threshold > count) {
            throw new IllegalArgumentException("refill threshold must be in 1.." + count + ": " + threshold);
        }
        this.srq = srq;
        this.qp = qp;
        this.bufAddr = bufAddr;
        this.bufSize = bufSize;
        this.lkey = lkey;
        this.threshold = threshold;
        this.lowWater = lowWater;
        this.idBase = idBase;
        this.list = new RecvWorkRequests(count, 1);
        this.pending = new int[count];
        for (int k = 0; k < count; k++) {
            pending[pendingCount++] = k;
        }
        flush();
    }

    /** Stock {@code srq} with {@code count} receives now; refill in batches of {@code >= threshold}. */
    public static RecvRefiller forSrq(SharedReceiveQueue srq, int count, long bufAddr, int bufSize, int lkey,
                                      int threshold) {
        return new RecvRefiller(srq, null, count, bufAddr, bufSize, lkey, threshold, 0, 0);
    }

    /**
     * Stock {@code srq} with {@code count} receives (ids {@code idBase | k}) in one call now; later
     * repost consumed ones {@code batch} at a time, or all waiting as soon as fewer than
     * {@code lowWater} receives are posted on the SRQ (0: no low-water mark).
     */
    public static RecvRefiller forSrq(SharedReceiveQueue srq, int count, long bufAddr, int bufSize, int lkey,
                                      int batch, int lowWater, long idBase) {
        return new RecvRefiller(srq, null, count, bufAddr, bufSize, lkey, batch, lowWater, idBase);
    }

    /** As {@link #forSrq} for a QP's own receive queue. */
    public static RecvRefiller forQp(QueuePair qp, int count, long bufAddr, int bufSize, int lkey, int threshold) {
        return new RecvRefiller(null, qp, count, bufAddr, bufSize, lkey, threshold, 0, 0);
    }

    /** Address of receive buffer {@code k}. */
    public long buffer(int k) {
        return bufAddr + (long) k * bufSize;
    }

    /** Return consumed receive {@code k}; posts a batch once {@code threshold} are waiting. */
    public void release(int k) {
        pending[pendingCount++] = k;
        if (pendingCount >= threshold || (lowWater > 0 && srq != null && srq.posted() < lowWater)) {
            flush();
        }
    }

    /** Post every waiting receive now. */
    public void flush() {
        if (pendingCount == 0) {
            return;
        }
        list.clear();
        for (int j = 0; j < pendingCount; j++) {
            int k = pending[j];
            int i = list.add(idBase | k);
            if (bufSize > 0) {
                list.sge(i, bufAddr + (long) k * bufSize, bufSize, lkey);
            }
        }
        int rc = srq != null ? srq.postRecv(list) : qp.postRecv(list);
        if (rc != 0) {
            throw new VerbsException(srq != null ? "ibv_post_srq_recv" : "ibv_post_recv", rc,
                    (srq != null ? srq.pd() : qp.pd()).context().device().name(),
                    "refill of " + pendingCount + " receives failed at " + list.badIndex());
        }
        posted += pendingCount;
        pendingCount = 0;
        batches++;
    }

    /** Receives waiting to be reposted. */
    public int waiting() {
        return pendingCount;
    }

    /** Post calls made (the initial stock included). */
    public long batches() {
        return batches;
    }

    /** Receives posted in all. */
    public long posted() {
        return posted;
    }

    @Override
    public void close() {
        list.close();
    }
}
