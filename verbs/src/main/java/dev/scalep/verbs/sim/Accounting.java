package dev.scalep.verbs.sim;

import dev.scalep.verbs.ResourceUsage;

/**
 * Live and peak resource counters (one per device, one per context). Updated on the control path
 * under the object's monitor; snapshots are consistent.
 *
 * <p>Memory model (bytes of host memory the mlx5 driver allocates, as measured by the research for
 * one endpoint at default depths): CTX 256 KiB, PD 144, MR 144, QP 80 KiB for the default 256 send +
 * 256 receive WRs, CQ 9 KiB for the default 256 CQEs. QPs and CQs scale linearly with depth:
 * {@link #QP_BYTES_PER_WR} = 160 bytes per send or receive WR, {@link #CQ_BYTES_PER_CQE} = 36 bytes
 * per CQE. SRQs use {@link #SRQ_BYTES_PER_WR} per WR. Thread domains and AHs add no host memory.
 * The EFA personality uses the same table so that reports compare like with like.
 */
final class Accounting {
    static final long CTX_BYTES = 256 * 1024;
    static final long PD_BYTES = 144;
    static final long MR_BYTES = 144;
    static final long QP_BYTES_PER_WR = 80 * 1024 / 512;
    static final long CQ_BYTES_PER_CQE = 9 * 1024 / 256;
    static final long SRQ_BYTES_PER_WR = 64;

    static final int CONTEXTS = 0, PDS = 1, MRS = 2, QPS = 3, CQS = 4, SRQS = 5, TDS = 6, UAR_PAGES = 7,
            UUARS = 8, UUARS_IN_USE = 9, MEMORY = 10;

    private final long[] live = new long[11];
    private final long[] peak = new long[11];
    private final Accounting parent;

    Accounting(Accounting parent) {
        this.parent = parent;
    }

    void add(int field, long delta) {
        synchronized (this) {
            long v = live[field] += delta;
            if (v > peak[field]) {
                peak[field] = v;
            }
        }
        if (parent != null) {
            parent.add(field, delta);
        }
    }

    synchronized ResourceUsage live() {
        return of(live);
    }

    synchronized ResourceUsage peak() {
        return of(peak);
    }

    private static ResourceUsage of(long[] a) {
        return new ResourceUsage(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
    }
}
