package dev.scalep.policies;

/**
 * How many threads share one instance of a resource, one axis of a {@link SharingConfig}.
 * Immutable value.
 *
 * <ul>
 *   <li>{@link Kind#NONE}: the resource is not used (only the SRQ axis allows it);</li>
 *   <li>{@link Kind#PER_QP}: one instance per queue pair (only the CQ axis);</li>
 *   <li>{@link Kind#PER_THREAD}: one instance per thread, never shared;</li>
 *   <li>{@link Kind#WAYS}: one instance per group of {@link #ways()} threads ("x-way sharing": 16
 *       threads 8-way make two instances);</li>
 *   <li>{@link Kind#ALL}: one instance for all threads of the process.</li>
 * </ul>
 *
 * @param kind the sharing kind
 * @param ways threads per instance for {@link Kind#WAYS} (2..{@link #MAX_WAYS}); 1 for
 *             {@code PER_THREAD} and {@code PER_QP}; 0 for {@code NONE} and {@code ALL}
 */
public record Share(Kind kind, int ways) {
    /** The largest x in x-way sharing. */
    public static final int MAX_WAYS = 4096;

    /** The sharing kinds. */
    public enum Kind { NONE, PER_QP, PER_THREAD, WAYS, ALL }

    public static final Share NONE = new Share(Kind.NONE, 0);
    public static final Share PER_QP = new Share(Kind.PER_QP, 1);
    public static final Share PER_THREAD = new Share(Kind.PER_THREAD, 1);
    public static final Share ALL = new Share(Kind.ALL, 0);

    public Share {
        if (kind == null) {
            throw new IllegalArgumentException("kind is null");
        }
        switch (kind) {
            case NONE, ALL -> {
                if (ways != 0) {
                    throw new IllegalArgumentException(kind + " takes ways=0, not " + ways);
                }
            }
            case PER_QP, PER_THREAD -> {
                if (ways != 1) {
                    throw new IllegalArgumentException(kind + " takes ways=1, not " + ways);
                }
            }
            case WAYS -> {
                if (ways < 2 || ways > MAX_WAYS) {
                    throw new IllegalArgumentException("x-way sharing needs 2 <= x <= " + MAX_WAYS + ", not " + ways);
                }
            }
        }
    }

    /** x-way sharing; {@code ways(1)} is {@link #PER_THREAD}. */
    public static Share ways(int ways) {
        return ways == 1 ? PER_THREAD : new Share(Kind.WAYS, ways);
    }

    /** Threads that share one instance when {@code threads} threads run (at least 1; 0 for NONE). */
    public int threadsPerInstance(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, not " + threads);
        }
        return switch (kind) {
            case NONE -> 0;
            case PER_QP, PER_THREAD -> 1;
            case WAYS -> Math.min(ways, threads);
            case ALL -> threads;
        };
    }

    /** Instances needed for {@code threads} threads (per thread for PER_QP: multiply by QPs per thread). */
    public int instances(int threads) {
        if (kind == Kind.NONE) {
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be >= 1, not " + threads);
            }
            return 0;
        }
        int per = threadsPerInstance(threads);
        return (threads + per - 1) / per;
    }

    /** Whether more than one thread uses one instance when {@code threads} threads run. */
    public boolean shared(int threads) {
        return threadsPerInstance(threads) > 1;
    }

    /** Sharing width for containment checks: 0 none, 1 per-thread/per-QP, x for x-way, MAX_VALUE for all. */
    int width() {
        return switch (kind) {
            case NONE -> 0;
            case PER_QP, PER_THREAD -> 1;
            case WAYS -> ways;
            case ALL -> Integer.MAX_VALUE;
        };
    }

    /** The axes-form spelling: {@code none}, {@code per-qp}, {@code per-thread}, {@code <x>way}, {@code shared}. */
    @Override
    public String toString() {
        return switch (kind) {
            case NONE -> "none";
            case PER_QP -> "per-qp";
            case PER_THREAD -> "per-thread";
            case WAYS -> ways + "way";
            case ALL -> "shared";
        };
    }
}
