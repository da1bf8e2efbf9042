package dev.scalep.verbs;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A snapshot of verbs resources: counts of live objects; mlx5 UAR pages and data-path uUARs
 * <em>allocated</em> (counted as the research counts them: every page, static or dynamic, with both of
 * its data-path uUARs, used or idle) and <em>in use</em> (pages and uUARs that at least one QP rings;
 * {@code EndpointManager.resources()} counts only the QPs its endpoints post on); and host memory in
 * bytes from {@link MemoryModel}.
 */
public record ResourceUsage(long contexts, long pds, long mrs, long qps, long cqs, long srqs, long tds,
                            long uarPages, long uuars, long uarPagesInUse, long uuarsInUse, long memoryBytes) {

    public static final ResourceUsage ZERO = new ResourceUsage(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** Element-wise sum. */
    public ResourceUsage plus(ResourceUsage o) {
        return new ResourceUsage(contexts + o.contexts, pds + o.pds, mrs + o.mrs, qps + o.qps, cqs + o.cqs,
                srqs + o.srqs, tds + o.tds, uarPages + o.uarPages, uuars + o.uuars,
                uarPagesInUse + o.uarPagesInUse, uuarsInUse + o.uuarsInUse, memoryBytes + o.memoryBytes);
    }

    /** Element-wise difference (this minus a baseline). */
    public ResourceUsage minus(ResourceUsage o) {
        return new ResourceUsage(contexts - o.contexts, pds - o.pds, mrs - o.mrs, qps - o.qps, cqs - o.cqs,
                srqs - o.srqs, tds - o.tds, uarPages - o.uarPages, uuars - o.uuars,
                uarPagesInUse - o.uarPagesInUse, uuarsInUse - o.uuarsInUse, memoryBytes - o.memoryBytes);
    }

    /** This snapshot with the in-use counts replaced. */
    public ResourceUsage withInUse(long pagesInUse, long uuarsUsed) {
        return new ResourceUsage(contexts, pds, mrs, qps, cqs, srqs, tds, uarPages, uuars, pagesInUse, uuarsUsed,
                memoryBytes);
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
        m.put("uarPagesInUse", uarPagesInUse);
        m.put("uuarsInUse", uuarsInUse);
        m.put("memoryBytes", memoryBytes);
        return m;
    }
}
