package dev.scalep.verbs.sim;

import dev.scalep.verbs.MemoryModel;
import dev.scalep.verbs.ResourceUsage;

/**
 * Live and peak resource counters (one per device, one per context). Updated on the control path
 * under the object's monitor; snapshots are consistent.
 *
 * <p>Memory is {@link MemoryModel}'s, the one model both providers report with (the EFA personality
 * too, so that reports compare like with like). UAR pages are counted with both data-path uUARs of
 * every page, used or idle; "in use" counts pages and uUARs that at least one QP rings.
 */
final class Accounting {
    static final long CTX_BYTES = MemoryModel.CTX_BYTES;
    static final long PD_BYTES = MemoryModel.PD_BYTES;
    static final long MR_BYTES = MemoryModel.MR_BYTES;
    static final long QP_BYTES_PER_WR = MemoryModel.QP_BYTES_PER_WR;
    static final long CQ_BYTES_PER_CQE = MemoryModel.CQ_BYTES_PER_CQE;
    static final long SRQ_BYTES_PER_WR = MemoryModel.SRQ_BYTES_PER_WR;

    static final int CONTEXTS = 0, PDS = 1, MRS = 2, QPS = 3, CQS = 4, SRQS = 5, TDS = 6, UAR_PAGES = 7,
            UUARS = 8, UAR_PAGES_IN_USE = 9, UUARS_IN_USE = 10, MEMORY = 11;

    private final long[] live = new long[12];
    private final long[] peak = new long[12];
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
        return new ResourceUsage(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
    }
}
