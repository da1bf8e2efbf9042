package dev.scalep.threading;

/**
 * Told about work requests a send path accepted but the provider refused at post time (verbs'
 * {@code bad_wr} and after), one call per request, so that nothing accepted is silently lost.
 * Called on whichever thread posted the list (for a combining QP: the combiner), so
 * implementations must be thread-safe and must not block.
 */
@FunctionalInterface
public interface PostFailureHandler {
    /** {@code wrId} is the id the caller staged; {@code errno} what {@code ibv_post_send} returned. */
    void rejected(long wrId, int errno);
}
