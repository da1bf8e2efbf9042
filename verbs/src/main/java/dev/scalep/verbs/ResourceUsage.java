package dev.scalep.verbs;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A snapshot of verbs resources: counts of live objects, UAR pages and data-path uUARs allocated
 * (static and thread-domain pages), uUARs with at least one QP on them, and software memory in
 * bytes (mlx5 per-resource sizes from the research: CTX 256 KiB, PD 144, MR 144, QP 80 KiB and
 * CQ 9 KiB at default depths, QP and CQ scaled by depth).
 */
public record ResourceUsage(long contexts, long pds, long mrs, long qps, long cqs, long srqs, long tds,
                            long uarPages, long uuars, long uuarsInUse, long memoryBytes) {

    public static final ResourceUsage ZERO = new ResourceUsage(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** Element-wise sum. */
    public ResourceUsage plus(ResourceUsage o) {
        return new ResourceUsage(contexts + o.contexts, pds + o.pds, mrs + o.mrs, qps + o.qps, cqs + o.cqs,
                srqs + o.srqs, tds + o.tds, uarPages + o.uarPages, uuars + o.uuars,
                uuarsInUse + o.uuarsInUse, memoryBytes + o.memoryBytes);
    }

    /** Element-wise difference (this minus a baseline). */
    public ResourceUsage minus(ResourceUsage o) {
        return new ResourceUsage(contexts - o.contexts, pds - o.pds, mrs - o.mrs, qps - o.qps, cqs - o.cqs,
                srqs - o.srqs, tds - o.tds, uarPages - o.uarPages, uuars - o.uuars,
                uuarsInUse - o.uuarsInUse, memoryBytes - o.memoryBytes);
    }

    /** The report's keys in order, values as numbers. */
    public Map<String, Long> toMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("contexts", contexts);
        m.put("pds", pds);
        m.put("mrs", mrs);
        m.put("qps", qps);
        m.put("cqs", cqs);
        m.put("srqs", srqs);
        m.put("tds", tds);
        m.put("uarPages", uarPages);
        m.put("uuars", uuars);
        m.put("uuarsInUse", uuarsInUse);
        m.put("memoryBytes", memoryBytes);
        return m;
    }
}
