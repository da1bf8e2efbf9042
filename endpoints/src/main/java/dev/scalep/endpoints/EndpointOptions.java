package dev.scalep.endpoints;

import dev.scalep.verbs.ContextOptions;

/**
 * Per-manager endpoint settings: queue depths, buffer sizes and the operational features the
 * policy layer maps its YAML onto. Immutable.
 *
 * @param sendDepth       send queue depth per QP (d)
 * @param recvDepth       receives posted per endpoint (receive slots)
 * @param bufferBytes     bytes of each of an endpoint's send, target and read regions
 * @param recvSlotBytes   bytes per receive slot
 * @param postlist        work requests per doorbell (p); 1 disables postlist
 * @param signalEvery     request a completion for every q-th work request (q); 1 signals all
 * @param inlineThreshold payloads up to this many bytes are posted inline; 0 disables inlining
 * @param pin             pin each acquiring thread to a CPU (reported, never fatal)
 * @param pollBatch       completions taken from a CQ per poll
 * @param context         provider knobs for every context opened
 */
public record EndpointOptions(int sendDepth, int recvDepth, int bufferBytes, int recvSlotBytes, int postlist,
                              int signalEvery, int inlineThreshold, boolean pin, int pollBatch,
                              ContextOptions context) {
    /** d = 256, 32 receive slots of 256 bytes, 4 KiB regions, p = 1, q = 1, no inline, no pinning. */
    public static final EndpointOptions DEFAULTS =
            new EndpointOptions(256, 32, 4096, 256, 1, 1, 0, false, 32, ContextOptions.DEFAULTS);

    public EndpointOptions {
        if (sendDepth < 1 || recvDepth < 1 || bufferBytes < 1 || recvSlotBytes < 1 || postlist < 1
                || signalEvery < 1 || inlineThreshold < 0 || pollBatch < 1) {
            throw new IllegalArgumentException("endpoint options out of range: sendDepth, recvDepth, bufferBytes, "
                    + "recvSlotBytes, postlist, signalEvery, pollBatch must be >= 1 and inlineThreshold >= 0");
        }
        if (postlist > sendDepth) {
            throw new IllegalArgumentException("postlist " + postlist + " exceeds the send depth " + sendDepth);
        }
        if (context == null) {
            context = ContextOptions.DEFAULTS;
        }
    }

    public EndpointOptions withDepths(int send, int recv) {
        return new EndpointOptions(send, recv, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, pin, pollBatch, context);
    }

    public EndpointOptions withBuffers(int bytes, int slotBytes) {
        return new EndpointOptions(sendDepth, recvDepth, bytes, slotBytes, postlist, signalEvery, inlineThreshold, pin, pollBatch, context);
    }

    /** Postlist p, unsignaled interval q, inline threshold. */
    public EndpointOptions withFeatures(int p, int q, int inline) {
        return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, p, q, inline, pin, pollBatch, context);
    }

    public EndpointOptions withPin(boolean on) {
        return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, on, pollBatch, context);
    }

    public EndpointOptions withContext(ContextOptions c) {
        return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, pin, pollBatch, c);
    }
}
