package dev.scalep.policies;

import java.util.ArrayList;
import java.util.List;

/**
 * The six sharing levels of the research (Zambre et al., ICPADS 2018), from most independent
 * (fastest, most hardware) to most shared (fewest resources, slowest). Each is a named preset
 * {@link SharingConfig}; CQs are per QP in every preset (CQ sharing is orthogonal) and payload
 * buffers are per thread and cache-line aligned in every preset (sharing them serialises the NIC).
 *
 * <p>What the caller must serialise is stated per constant; "thread-bound" means an endpoint must
 * only be used by the thread that acquired it (the runtime detects and refuses other threads,
 * because it removed the driver's locks on that promise).
 */
public enum Category {
    /**
     * One context per thread, each with its own PD, MR, QP and CQ: every thread gets its own UAR page
     * (a low-latency uUAR). Endpoints are thread-bound; the caller serialises nothing else. Costs
     * a whole context (about 256 KiB on mlx5) per thread.
     */
    MPI_EVERYWHERE("mpi-everywhere", "ctx=per-thread,td=none,pd=per-thread,mr=per-thread,buf=per-thread,qp=per-thread,cq=per-qp,srq=none"),
    /**
     * One shared context; 2N maximally independent thread domains (a UAR page each), threads use only
     * the even ones, so each thread rings a page no other thread writes (no uUAR lock, no QP lock
     * through the parent domain) and the odd TDs' pages stay idle. Endpoints are thread-bound; nothing
     * else to serialise. Matches MPI everywhere at a fraction of its hardware.
     */
    TWO_X_DYNAMIC("2x-dynamic", "ctx=shared,td=dedicated-2x,pd=shared,mr=per-thread,buf=per-thread,qp=per-thread,cq=per-qp,srq=none"),
    /**
     * One shared context; one maximally independent TD per thread (own uUAR, the page's second uUAR
     * wasted). Endpoints are thread-bound; nothing else to serialise.
     */
    DYNAMIC("dynamic", "ctx=shared,td=dedicated,pd=shared,mr=per-thread,buf=per-thread,qp=per-thread,cq=per-qp,srq=none"),
    /**
     * One shared context; one TD per thread at the default sharing, so two threads write to two uUARs
     * of one UAR page (BlueFlame writes without postlist lose rate). Endpoints are thread-bound.
     */
    SHARED_DYNAMIC("shared-dynamic", "ctx=shared,td=paired,pd=shared,mr=per-thread,buf=per-thread,qp=per-thread,cq=per-qp,srq=none"),
    /**
     * One shared context, N QPs without TDs: the driver gives the first QPs low-latency uUARs and maps
     * the rest onto shared medium uUARs behind the driver's lock (the driver serialises those
     * BlueFlame writes; the QP lock stays). Endpoints are thread-bound by the runtime's contract.
     */
    STATIC("static", "ctx=shared,td=none,pd=shared,mr=per-thread,buf=per-thread,qp=per-thread,cq=per-qp,srq=none"),
    /**
     * One context, one QP and one CQ for all threads, posts under a lock (what MPI+threads does
     * today). Endpoints may be used from any thread; the runtime serialises posts with the QP lock and
     * completions with the CQ lock and atomic counters. Far the slowest.
     */
    MPI_THREADS("mpi-threads", "ctx=shared,td=none,pd=shared,mr=shared,buf=per-thread,qp=shared:locked,cq=shared,srq=none");

    private final String spelling;
    private final String axes;
    private volatile SharingConfig config;

    Category(String spelling, String axes) {
        this.spelling = spelling;
        this.axes = axes;
    }

    /** The name used in policy files and on the command line. */
    public String spelling() {
        return spelling;
    }

    /** The preset's sharing configuration. */
    public SharingConfig config() {
        SharingConfig c = config;
        if (c == null) {
            config = c = SharingConfig.parse(axes);
        }
        return c;
    }

    /** The category spelled {@code s}, or null. */
    public static Category bySpelling(String s) {
        for (Category c : values()) {
            if (c.spelling.equals(s)) {
                return c;
            }
        }
        return null;
    }

    /** Every spelling, comma separated. */
    public static String names() {
        List<String> n = new ArrayList<>();
        for (Category c : values()) {
            n.add(c.spelling);
        }
        return String.join(", ", n);
    }

    @Override
    public String toString() {
        return spelling;
    }
}
