package dev.scalep.policies;

import dev.scalep.verbs.ConnectionOptions;

import java.util.Objects;

/**
 * One endpoint class of a policy (e.g. {@code halo}, {@code bulk}) with every setting filled in.
 * Immutable and thread-safe. The defaults (used for keys a file leaves out) are the constants
 * below; the research's best values for 16 threads were postlist 32 and unsignaled 64.
 *
 * @param name             class name ({@code [a-z][a-z0-9_-]*}, at most 64 characters)
 * @param sharing          sharing level
 * @param queueDepth       send and receive queue depth in WRs (d)
 * @param postlist         WRs per post (p); 1 = no postlist
 * @param unsignaled       one signaled WR every q WRs; 1 = every WR signaled
 * @param inlineThreshold  payloads up to this many bytes are inlined; 0 = never
 * @param blueFlame        BlueFlame use
 * @param chained          WR pool and chained posts
 * @param sgeHeaderPayload post header and payload as two SGEs instead of copying into one buffer
 * @param srq              SRQ sizing (used when {@code sharing.srq()} is not none)
 * @param cq               CQ depth and moderation
 * @param srd              ordering and atomics on out-of-order (SRD) devices
 * @param onUnsupported    what validation does when a device cannot honour a setting
 * @param connection       port, GID, path MTU and RC timing/depth knobs of the class's QPs
 *                         ({@link ConnectionOptions#DEFAULTS} when the file has no {@code connection})
 */
public record EndpointClass(String name, SharingConfig sharing, int queueDepth, int postlist, int unsignaled,
                            int inlineThreshold, BlueFlame blueFlame, ChainedPosts chained, boolean sgeHeaderPayload,
                            SrqSettings srq, CqSettings cq, SrdSettings srd, OnUnsupported onUnsupported,
                            ConnectionOptions connection) {
    /** Default sharing level: {@link Category#STATIC} (works on every device). */
    public static final Category DEFAULT_SHARING = Category.STATIC;
    public static final int DEFAULT_QUEUE_DEPTH = 256;
    public static final int DEFAULT_POSTLIST = 32;
    public static final int DEFAULT_UNSIGNALED = 64;
    /** Fits both mlx5 (about 60 bytes) and EFA (32 bytes). */
    public static final int DEFAULT_INLINE = 32;
    public static final BlueFlame DEFAULT_BLUEFLAME = BlueFlame.AUTO;
    public static final boolean DEFAULT_CHAINED = true;
    public static final int DEFAULT_CHAIN_POOL = 256;
    /** Default longest chain: the postlist size. */
    public static final int DEFAULT_CHAIN_MAX_LENGTH = DEFAULT_POSTLIST;
    public static final boolean DEFAULT_SGE_HEADER_PAYLOAD = false;
    public static final int DEFAULT_SRQ_DEPTH = 1024;
    /** Default refill threshold: a quarter of the SRQ depth. */
    public static final int DEFAULT_SRQ_REFILL_DIVISOR = 4;
    /** Default refill batch: 64, at most the SRQ depth. */
    public static final int DEFAULT_SRQ_REFILL_BATCH = 64;
    /** Default CQ depth: the queue depth. */
    public static final int DEFAULT_CQ_MODERATION_COUNT = 0;
    public static final int DEFAULT_CQ_MODERATION_PERIOD_US = 0;
    public static final Ordering DEFAULT_ORDERING = Ordering.NONE;
    public static final boolean DEFAULT_ATOMICS_EMULATION = false;
    public static final OnUnsupported DEFAULT_ON_UNSUPPORTED = OnUnsupported.DEGRADE;

    public EndpointClass {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(sharing, "sharing");
        Objects.requireNonNull(blueFlame, "blueFlame");
        Objects.requireNonNull(chained, "chained");
        Objects.requireNonNull(srq, "srq");
        Objects.requireNonNull(cq, "cq");
        Objects.requireNonNull(srd, "srd");
        Objects.requireNonNull(onUnsupported, "onUnsupported");
        if (connection == null) {
            connection = ConnectionOptions.DEFAULTS;
        }
    }

    /** A class with the default connection options. */
    public EndpointClass(String name, SharingConfig sharing, int queueDepth, int postlist, int unsignaled,
                         int inlineThreshold, BlueFlame blueFlame, ChainedPosts chained, boolean sgeHeaderPayload,
                         SrqSettings srq, CqSettings cq, SrdSettings srd, OnUnsupported onUnsupported) {
        this(name, sharing, queueDepth, postlist, unsignaled, inlineThreshold, blueFlame, chained, sgeHeaderPayload,
                srq, cq, srd, onUnsupported, ConnectionOptions.DEFAULTS);
    }

    /** Every setting at its default, for a class called {@code name}. */
    public static EndpointClass defaults(String name) {
        return new EndpointClass(name, DEFAULT_SHARING.config(), DEFAULT_QUEUE_DEPTH, DEFAULT_POSTLIST,
                DEFAULT_UNSIGNALED, DEFAULT_INLINE, DEFAULT_BLUEFLAME,
                new ChainedPosts(DEFAULT_CHAINED, DEFAULT_CHAIN_POOL, DEFAULT_CHAIN_MAX_LENGTH),
                DEFAULT_SGE_HEADER_PAYLOAD,
                new SrqSettings(DEFAULT_SRQ_DEPTH, DEFAULT_SRQ_DEPTH / DEFAULT_SRQ_REFILL_DIVISOR, DEFAULT_SRQ_REFILL_BATCH),
                new CqSettings(2 * DEFAULT_QUEUE_DEPTH, DEFAULT_CQ_MODERATION_COUNT, DEFAULT_CQ_MODERATION_PERIOD_US),
                new SrdSettings(DEFAULT_ORDERING, DEFAULT_ATOMICS_EMULATION), DEFAULT_ON_UNSUPPORTED);
    }
}
