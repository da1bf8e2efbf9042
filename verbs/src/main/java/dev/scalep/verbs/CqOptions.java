package dev.scalep.verbs;

/**
 * Completion queue attributes.
 *
 * @param depth            minimum number of entries ({@code cqe})
 * @param singleThreaded   {@code IBV_CREATE_CQ_ATTR_SINGLE_THREADED}: the caller polls from one thread at a
 *                         time, so the provider drops the CQ lock
 * @param extended         create through {@code ibv_create_cq_ex} (required on EFA)
 * @param completionChannel attach a completion channel for {@link CompletionQueue#awaitEvent(long)}
 */
public record CqOptions(int depth, boolean singleThreaded, boolean extended, boolean completionChannel) {
    public CqOptions {
        if (depth < 1) {
            throw new IllegalArgumentException("CQ depth must be >= 1: " + depth);
        }
    }

    public static CqOptions of(int depth) {
        return new CqOptions(depth, false, false, false);
    }

    public CqOptions withSingleThreaded(boolean on) {
        return new CqOptions(depth, on, extended, completionChannel);
    }

    public CqOptions withExtended(boolean on) {
        return new CqOptions(depth, singleThreaded, on, completionChannel);
    }

    public CqOptions withCompletionChannel(boolean on) {
        return new CqOptions(depth, singleThreaded, extended, on);
    }
}
