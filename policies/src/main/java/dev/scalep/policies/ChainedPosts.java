package dev.scalep.policies;

/**
 * Pre-initialised work-request pool and chained posts (one {@code post} call for a linked list).
 *
 * @param enabled   whether WRs come from a pre-initialised pool and are posted as chains
 * @param poolSize  WRs in the per-endpoint pool (1..65536)
 * @param maxLength longest chain handed to one post (1..4096)
 */
public record ChainedPosts(boolean enabled, int poolSize, int maxLength) {
}
