package dev.scalep.endpoints;

import dev.scalep.policies.EndpointClass;
import dev.scalep.policies.Share;
import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.DeviceCapabilities;

/**
 * Per-manager endpoint settings: queue depths, buffer sizes and the operational features the
 * policy layer maps its YAML onto ({@link #from(EndpointClass, DeviceCapabilities)}). Immutable.
 *
 * @param sendDepth          send queue depth per QP (d)
 * @param recvDepth          receives posted per endpoint (receive slots)
 * @param bufferBytes        bytes of each of an endpoint's send, target and read regions
 * @param recvSlotBytes      bytes per receive slot
 * @param postlist           work requests per doorbell (p); 1 disables postlist
 * @param signalEvery        request a completion for every q-th work request (q); 1 signals all
 * @param inlineThreshold    payloads up to this many bytes are posted inline; 0 disables inlining
 * @param pin                pin each acquiring thread to a CPU (reported, never fatal)
 * @param pollBatch          completions taken from a CQ per poll
 * @param context            provider knobs for every context opened (BlueFlame among them)
 * @param chainPool          send records in a per-thread QP's pre-initialised pool; 0 = no pool
 *                           (the poster's own postlist)
 * @param chainMaxLength     longest chain of pool records handed to one post (at most chainPool)
 * @param sgeHeaderPayload   endpoints may post a header and a payload as one WR with two SGEs
 * @param srqDepth           receives an SRQ holds; 0 = the sum of its endpoints' receive slots
 * @param srqRefillThreshold refill an SRQ when fewer than this many receives are posted on it
 * @param srqRefillBatch     consumed receives reposted per {@code postRecv} call; 1 = each at once
 * @param cqDepth            entries per CQ; 0 = what the CQ's queues need (never less than that)
 * @param cqModerationCount  {@code ibv_modify_cq} count; 0 with period 0 = no moderation
 * @param cqModerationPeriodUs {@code ibv_modify_cq} period in microseconds
 * @param ordering           SRD ordering mode spelling ({@code none}, {@code receiver-reorder},
 *                           {@code sender-wait}); carried and reported, applied by the srd channels
 * @param atomicsEmulation   emulate atomics on SRD (carried and reported)
 * @param connection         port, GID, path MTU and RC timing/depth knobs of every QP (checked against
 *                           the device when the QPs are created; recorded in the sweep's JSON)
 */
public record EndpointOptions(int sendDepth, int recvDepth, int bufferBytes, int recvSlotBytes, int postlist,
                              int signalEvery, int inlineThreshold, boolean pin, int pollBatch,
                              ContextOptions context, int chainPool, int chainMaxLength, boolean sgeHeaderPayload,
                              int srqDepth, int srqRefillThreshold, int srqRefillBatch, int cqDepth,
                              int cqModerationCount, int cqModerationPeriodUs, String ordering,
                              boolean atomicsEmulation, ConnectionOptions connection) {
    /**
     * The defaults, the same as a policy class's ({@link EndpointClass#DEFAULT_QUEUE_DEPTH},
     * {@link EndpointClass#DEFAULT_POSTLIST}, {@link EndpointClass#DEFAULT_UNSIGNALED}) and as
     * {@code scalep sweep}'s {@code --depth}, {@code --postlist} and {@code --unsignaled}: send depth
     * d = 256, postlist p = 32, one signaled completion every q = 64, 32 receive slots of 256 bytes,
     * 4 KiB send/target/read regions, 32 completions per poll, no inline, no pinning, no WR pool, SRQ
     * and CQ sized from the queues, no CQ moderation, the provider's context defaults.
     * {@link #builder()} starts from these.
     */
    public static final EndpointOptions DEFAULTS =
            new EndpointOptions(EndpointClass.DEFAULT_QUEUE_DEPTH, 32, 4096, 256, EndpointClass.DEFAULT_POSTLIST,
                    EndpointClass.DEFAULT_UNSIGNALED, 0, false, 32, ContextOptions.DEFAULTS);

    /** A builder that starts from {@link #DEFAULTS}; values are checked together by {@link Builder#build()}. */
    public static Builder builder() {
        return new Builder(DEFAULTS);
    }

    /** A builder that starts from these options. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    public EndpointOptions {
        if (sendDepth < 1 || recvDepth < 1 || bufferBytes < 1 || recvSlotBytes < 1 || postlist < 1
                || signalEvery < 1 || inlineThreshold < 0 || pollBatch < 1) {
            throw new IllegalArgumentException("endpoint options out of range: sendDepth, recvDepth, bufferBytes, "
                    + "recvSlotBytes, postlist, signalEvery, pollBatch must be >= 1 and inlineThreshold >= 0");
        }
        if (postlist > sendDepth) {
            throw new IllegalArgumentException("postlist " + postlist + " exceeds the send depth " + sendDepth);
        }
        if (chainPool < 0 || (chainPool > 0 && (chainMaxLength < 1 || chainMaxLength > chainPool))) {
            throw new IllegalArgumentException("chained posts: pool " + chainPool + " must be >= 0 and the max length "
                    + chainMaxLength + " in 1..pool");
        }
        if (srqDepth < 0 || srqRefillThreshold < 0 || srqRefillBatch < 1 || cqDepth < 0 || cqModerationCount < 0
                || cqModerationPeriodUs < 0) {
            throw new IllegalArgumentException("srq depth/threshold and cq depth/moderation must be >= 0, srq refill batch >= 1");
        }
        if (context == null) {
            context = ContextOptions.DEFAULTS;
        }
        if (ordering == null) {
            ordering = "none";
        }
        if (connection == null) {
            connection = ConnectionOptions.DEFAULTS;
        }
    }

    /** The pre-policy options: no pool, no two-SGE posts, SRQ and CQ sized from the queues, no moderation. */
    public EndpointOptions(int sendDepth, int recvDepth, int bufferBytes, int recvSlotBytes, int postlist,
                           int signalEvery, int inlineThreshold, boolean pin, int pollBatch, ContextOptions context) {
        this(sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, pin, pollBatch,
                context, 0, 0, false, 0, 0, 1, 0, 0, 0, "none", false, ConnectionOptions.DEFAULTS);
    }

    /**
     * Every feature of an effective endpoint class, mapped onto the endpoint layer: queue depth to
     * the send and receive depths, postlist, unsignaled interval, inline threshold, BlueFlame
     * ({@code auto} = what {@code caps} reports; {@code caps == null}: the context default), the
     * WR pool and chain length, two-SGE header+payload posts, SRQ sizing and refill (only when the
     * class's sharing has an SRQ), CQ depth and moderation, SRD ordering and atomics emulation, and
     * the receive slot size from the messages' eager limit (plus the {@value MessageHub#HEADER}-byte header).
     * Device limits are applied later by {@link EndpointManager}, which lists each change.
     */
    public static EndpointOptions from(EndpointClass c, DeviceCapabilities caps) {
        int d = c.queueDepth();
        int p = Math.max(1, Math.min(c.postlist(), d));
        int q = Math.max(1, c.unsignaled());
        boolean bf = switch (c.blueFlame()) {
            case ON -> true;
            case OFF -> false;
            case AUTO -> caps == null ? ContextOptions.DEFAULTS.blueFlame() : caps.blueFlame();
        };
        ContextOptions ctx = ContextOptions.DEFAULTS.withBlueFlame(bf);
        int pool = 0;
        int maxLen = 0;
        if (c.chained().enabled()) {
            pool = Math.max(1, c.chained().poolSize());
            maxLen = Math.max(1, Math.min(c.chained().maxLength(), pool));
        }
        boolean srq = c.sharing().srq().kind() != Share.Kind.NONE;
        int srqDepth = srq ? c.srq().depth() : 0;
        int srqThreshold = srq ? c.srq().refillThreshold() : 0;
        int srqBatch = srq ? Math.max(1, c.srq().refillBatch()) : 1;
        EndpointOptions base = DEFAULTS;
        int slot = c.messages().eagerLimit() + MessageHub.HEADER;
        return new EndpointOptions(d, d, base.bufferBytes(), slot, p, q, c.inlineThreshold(), false,
                Math.max(1, Math.min(d / q, 256)), ctx, pool, maxLen, c.sgeHeaderPayload(), srqDepth, srqThreshold,
                srqBatch, c.cq().depth(), c.cq().moderationCount(), c.cq().moderationPeriodUs(),
                c.srd().ordering().spelling(), c.srd().atomicsEmulation(), c.connection());
    }

    public EndpointOptions withDepths(int send, int recv) {
        return new EndpointOptions(send, recv, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, pin,
                pollBatch, context, chainPool, chainMaxLength, sgeHeaderPayload, srqDepth, srqRefillThreshold,
                srqRefillBatch, cqDepth, cqModerationCount, cqModerationPeriodUs, ordering, atomicsEmulation, connection);
    }

    public EndpointOptions withBuffers(int bytes, int slotBytes) {
        return new EndpointOptions(sendDepth, recvDepth, bytes, slotBytes, postlist, signalEvery, inlineThreshold, pin,
                pollBatch, context, chainPool, chainMaxLength, sgeHeaderPayload, srqDepth, srqRefillThreshold,
                srqRefillBatch, cqDepth, cqModerationCount, cqModerationPeriodUs, ordering, atomicsEmulation, connection);
    }

    /** Postlist p, unsignaled interval q, inline threshold. */
    public EndpointOptions withFeatures(int p, int q, int inline) {
        return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, p, q, inline, pin,
                pollBatch, context, chainPool, chainMaxLength, sgeHeaderPayload, srqDepth, srqRefillThreshold,
                srqRefillBatch, cqDepth, cqModerationCount, cqModerationPeriodUs, ordering, atomicsEmulation, connection);
    }

    public EndpointOptions withPin(boolean on) {
        return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, on,
                pollBatch, context, chainPool, chainMaxLength, sgeHeaderPayload, srqDepth, srqRefillThreshold,
                srqRefillBatch, cqDepth, cqModerationCount, cqModerationPeriodUs, ordering, atomicsEmulation, connection);
    }

    public EndpointOptions withContext(ContextOptions c) {
        return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, pin,
                pollBatch, c, chainPool, chainMaxLength, sgeHeaderPayload, srqDepth, srqRefillThreshold,
                srqRefillBatch, cqDepth, cqModerationCount, cqModerationPeriodUs, ordering, atomicsEmulation, connection);
    }

    /** WR pool of {@code pool} records, chains of up to {@code maxLength}; {@code pool == 0} turns it off. */
    public EndpointOptions withChained(int pool, int maxLength) {
        return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, pin,
                pollBatch, context, pool, pool == 0 ? 0 : maxLength, sgeHeaderPayload, srqDepth, srqRefillThreshold,
                srqRefillBatch, cqDepth, cqModerationCount, cqModerationPeriodUs, ordering, atomicsEmulation, connection);
    }

    public EndpointOptions withSgeHeaderPayload(boolean on) {
        return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, pin,
                pollBatch, context, chainPool, chainMaxLength, on, srqDepth, srqRefillThreshold,
                srqRefillBatch, cqDepth, cqModerationCount, cqModerationPeriodUs, ordering, atomicsEmulation, connection);
    }

    /** SRQ depth (0 = derived), refill threshold and refill batch. */
    public EndpointOptions withSrq(int depth, int refillThreshold, int refillBatch) {
        return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, pin,
                pollBatch, context, chainPool, chainMaxLength, sgeHeaderPayload, depth, refillThreshold,
                refillBatch, cqDepth, cqModerationCount, cqModerationPeriodUs, ordering, atomicsEmulation, connection);
    }

    /** CQ depth (0 = derived) and moderation (count, period µs; both 0 = none). */
    public EndpointOptions withCq(int depth, int moderationCount, int moderationPeriodUs) {
        return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, pin,
                pollBatch, context, chainPool, chainMaxLength, sgeHeaderPayload, srqDepth, srqRefillThreshold,
                srqRefillBatch, depth, moderationCount, moderationPeriodUs, ordering, atomicsEmulation, connection);
    }

    /** Port, GID, path MTU and RC knobs for every QP. */
    public EndpointOptions withConnection(ConnectionOptions c) {
        return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, pin,
                pollBatch, context, chainPool, chainMaxLength, sgeHeaderPayload, srqDepth, srqRefillThreshold,
                srqRefillBatch, cqDepth, cqModerationCount, cqModerationPeriodUs, ordering, atomicsEmulation, c);
    }

    /**
     * Builds {@link EndpointOptions} one setting at a time, starting from {@link #DEFAULTS} (or from
     * {@link #toBuilder()}'s options); {@link #build()} checks them together, so the order of the
     * calls does not matter (a postlist above the default depth is fine when the depth is raised too).
     */
    public static final class Builder {
        private int sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery, inlineThreshold, pollBatch;
        private int chainPool, chainMaxLength, srqDepth, srqRefillThreshold, srqRefillBatch, cqDepth, cqModerationCount,
                cqModerationPeriodUs;
        private boolean pin, sgeHeaderPayload, atomicsEmulation;
        private ContextOptions context;
        private String ordering;
        private ConnectionOptions connection;

        private Builder(EndpointOptions o) {
            sendDepth = o.sendDepth;
            recvDepth = o.recvDepth;
            bufferBytes = o.bufferBytes;
            recvSlotBytes = o.recvSlotBytes;
            postlist = o.postlist;
            signalEvery = o.signalEvery;
            inlineThreshold = o.inlineThreshold;
            pin = o.pin;
            pollBatch = o.pollBatch;
            context = o.context;
            chainPool = o.chainPool;
            chainMaxLength = o.chainMaxLength;
            sgeHeaderPayload = o.sgeHeaderPayload;
            srqDepth = o.srqDepth;
            srqRefillThreshold = o.srqRefillThreshold;
            srqRefillBatch = o.srqRefillBatch;
            cqDepth = o.cqDepth;
            cqModerationCount = o.cqModerationCount;
            cqModerationPeriodUs = o.cqModerationPeriodUs;
            ordering = o.ordering;
            atomicsEmulation = o.atomicsEmulation;
            connection = o.connection;
        }

        /** Send queue depth d per QP (default 256). */
        public Builder sendDepth(int d) {
            sendDepth = d;
            return this;
        }

        /** Receive slots per endpoint (default 32). */
        public Builder recvDepth(int n) {
            recvDepth = n;
            return this;
        }

        /** Bytes of each of an endpoint's send, target and read regions (default 4096). */
        public Builder bufferBytes(int n) {
            bufferBytes = n;
            return this;
        }

        /** Bytes per receive slot (default 256). */
        public Builder recvSlotBytes(int n) {
            recvSlotBytes = n;
            return this;
        }

        /** Work requests per doorbell p, at most the send depth (default 32; 1 turns postlist off). */
        public Builder postlist(int p) {
            postlist = p;
            return this;
        }

        /** One signaled completion every q work requests (default 64; 1 signals all). */
        public Builder signalEvery(int q) {
            signalEvery = q;
            return this;
        }

        /** Payloads up to this many bytes go inline (default 0: none). */
        public Builder inlineThreshold(int bytes) {
            inlineThreshold = bytes;
            return this;
        }

        /** Pin each acquiring thread to a CPU (default off). */
        public Builder pin(boolean on) {
            pin = on;
            return this;
        }

        /** Completions taken from a CQ per poll (default 32). */
        public Builder pollBatch(int n) {
            pollBatch = n;
            return this;
        }

        /** Provider knobs of every context opened, BlueFlame among them (default {@link ContextOptions#DEFAULTS}). */
        public Builder context(ContextOptions c) {
            context = c;
            return this;
        }

        /** A pre-initialised pool of {@code pool} send records, chains of up to {@code maxLength} (default: no pool). */
        public Builder chained(int pool, int maxLength) {
            chainPool = pool;
            chainMaxLength = pool == 0 ? 0 : maxLength;
            return this;
        }

        /** Header and payload posted as one WR with two SGEs (default off). */
        public Builder sgeHeaderPayload(boolean on) {
            sgeHeaderPayload = on;
            return this;
        }

        /** SRQ depth (0 = the sum of its endpoints' slots), refill threshold and batch (default 0, 0, 1). */
        public Builder srq(int depth, int refillThreshold, int refillBatch) {
            srqDepth = depth;
            srqRefillThreshold = refillThreshold;
            srqRefillBatch = refillBatch;
            return this;
        }

        /** CQ depth (0 = what its queues need) and moderation count and period in µs (default 0, 0, 0). */
        public Builder cq(int depth, int moderationCount, int moderationPeriodUs) {
            cqDepth = depth;
            cqModerationCount = moderationCount;
            cqModerationPeriodUs = moderationPeriodUs;
            return this;
        }

        /** Port, GID, path MTU and RC knobs for every QP (default {@link ConnectionOptions#DEFAULTS}). */
        public Builder connection(ConnectionOptions c) {
            connection = c;
            return this;
        }

        /** The options; {@link IllegalArgumentException} naming what is out of range. */
        public EndpointOptions build() {
            return new EndpointOptions(sendDepth, recvDepth, bufferBytes, recvSlotBytes, postlist, signalEvery,
                    inlineThreshold, pin, pollBatch, context, chainPool, chainMaxLength, sgeHeaderPayload, srqDepth,
                    srqRefillThreshold, srqRefillBatch, cqDepth, cqModerationCount, cqModerationPeriodUs, ordering,
                    atomicsEmulation, connection);
        }
    }
}
