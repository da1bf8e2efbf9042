package dev.scalep.policies;

import dev.scalep.verbs.ConnectionOptions;

import java.util.Map;
import java.util.Objects;

/**
 * One endpoint class of a policy (e.g. {@code halo}, {@code bulk}) with every setting filled in.
 * Immutable and thread-safe. The defaults (used for keys a file leaves out) are declared with the
 * keys in {@link PolicyKeys}; the research's best values for 16 threads were postlist 32 and
 * unsignaled 64.
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
 * @param messages         tagged messages: the eager limit ({@link MessageSettings#DEFAULTS} when absent)
 */
public record EndpointClass(String name, SharingConfig sharing, int queueDepth, int postlist, int unsignaled,
                            int inlineThreshold, BlueFlame blueFlame, ChainedPosts chained, boolean sgeHeaderPayload,
                            SrqSettings srq, CqSettings cq, SrdSettings srd, OnUnsupported onUnsupported,
                            ConnectionOptions connection, MessageSettings messages) {
    /** The default queue depth ({@link PolicyKeys#QUEUE_DEPTH}). */
    public static final int DEFAULT_QUEUE_DEPTH = PolicyKeys.QUEUE_DEPTH.defaultValue();
    /** The default postlist ({@link PolicyKeys#POSTLIST}). */
    public static final int DEFAULT_POSTLIST = PolicyKeys.POSTLIST.defaultValue();
    /** The default unsignaled interval ({@link PolicyKeys#UNSIGNALED}). */
    public static final int DEFAULT_UNSIGNALED = PolicyKeys.UNSIGNALED.defaultValue();
    /** The default inline threshold ({@link PolicyKeys#INLINE}). */
    public static final int DEFAULT_INLINE = PolicyKeys.INLINE.defaultValue();
    /** The default work-request pool size ({@link PolicyKeys#CHAINED_POOL}). */
    public static final int DEFAULT_CHAIN_POOL = PolicyKeys.CHAINED_POOL.defaultValue();

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
        if (messages == null) {
            messages = MessageSettings.DEFAULTS;
        }
    }

    /** A class with the default message settings. */
    public EndpointClass(String name, SharingConfig sharing, int queueDepth, int postlist, int unsignaled,
                         int inlineThreshold, BlueFlame blueFlame, ChainedPosts chained, boolean sgeHeaderPayload,
                         SrqSettings srq, CqSettings cq, SrdSettings srd, OnUnsupported onUnsupported,
                         ConnectionOptions connection) {
        this(name, sharing, queueDepth, postlist, unsignaled, inlineThreshold, blueFlame, chained, sgeHeaderPayload,
                srq, cq, srd, onUnsupported, connection, MessageSettings.DEFAULTS);
    }

    /** A class with the default connection options. */
    public EndpointClass(String name, SharingConfig sharing, int queueDepth, int postlist, int unsignaled,
                         int inlineThreshold, BlueFlame blueFlame, ChainedPosts chained, boolean sgeHeaderPayload,
                         SrqSettings srq, CqSettings cq, SrdSettings srd, OnUnsupported onUnsupported) {
        this(name, sharing, queueDepth, postlist, unsignaled, inlineThreshold, blueFlame, chained, sgeHeaderPayload,
                srq, cq, srd, onUnsupported, ConnectionOptions.DEFAULTS);
    }

    /** Every setting at its default ({@link PolicyKeys}), for a class called {@code name}. */
    public static EndpointClass defaults(String name) {
        return PolicyKeys.build(name, PolicyKeys.values(Map.of()));
    }
}
