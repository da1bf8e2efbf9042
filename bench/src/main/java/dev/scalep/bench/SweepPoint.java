package dev.scalep.bench;

/**
 * One configuration of the message-rate benchmark ({@code scalep sweep}): {@code threads} sender
 * threads post 2-byte RDMA writes on QPs of depth {@code depth} in multiples of postlist
 * {@code postlist}, one signaled completion every {@code unsignaled} WQEs.
 *
 * @param device     device name
 * @param label      what the row is called in tables and charts (a category, a policy class, or an
 *                   axis sweep such as {@code qp 4-way})
 * @param sharing    the sharing level in axes form or a category name, as the endpoint layer takes it
 * @param threads    sender threads
 * @param postlist   p: WQEs per post
 * @param unsignaled q: one signaled WQE every q
 * @param depth      d: send queue depth; completions are polled c = d / q at a time
 * @param messages   messages per thread
 * @param inline     payloads inlined into the WQE
 * @param blueFlame  BlueFlame writes enabled (mlx5)
 * @param shareAxis  the axis of an x-way sharing sweep, or {@code null}
 * @param ways       x of the x-way sharing (1 when not a sharing sweep)
 * @param variant    "all" or "w/o FEATURE" for the ablations
 * @param policyClass the effective policy class the point runs (every feature mapped by
 *                   {@code EndpointOptions.from}), or {@code null} for the flag-driven points
 */
public record SweepPoint(String device, String label, String sharing, int threads, int postlist, int unsignaled,
                         int depth, long messages, boolean inline, boolean blueFlame, String shareAxis, int ways,
                         String variant, dev.scalep.policies.EndpointClass policyClass) {

    /** A flag-driven point (no policy class). */
    public SweepPoint(String device, String label, String sharing, int threads, int postlist, int unsignaled, int depth,
                      long messages, boolean inline, boolean blueFlame, String shareAxis, int ways, String variant) {
        this(device, label, sharing, threads, postlist, unsignaled, depth, messages, inline, blueFlame, shareAxis, ways,
                variant, null);
    }

    /** Completions polled per call: c = d / q (at least 1). */
    public int pollBatch() {
        return Math.max(1, depth / unsignaled);
    }
}
