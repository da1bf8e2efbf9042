package dev.scalep.policies;

/**
 * Completion queue sizing and moderation ({@code ibv_modify_cq}).
 *
 * @param depth              CQ entries (1..4194304)
 * @param moderationCount    completions per event, 0 = no moderation (0..65535)
 * @param moderationPeriodUs microseconds before an event fires anyway, 0 = none (0..65535)
 */
public record CqSettings(int depth, int moderationCount, int moderationPeriodUs) {
    /**
     * The fewest entries a CQ must hold at {@code sharing} and queue depth {@code queueDepth} (what
     * {@code cq.depth} defaults to when a file leaves it out), capped at the loader's maximum depth.
     */
    public static int entriesNeeded(SharingConfig sharing, int queueDepth) {
        return (int) Math.min(PolicyKeys.MAX_CQ_DEPTH, Validation.cqNeed(sharing, queueDepth));
    }
}
