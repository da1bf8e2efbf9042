package dev.scalep.policies;

import dev.scalep.verbs.TdSharing;

/**
 * The thread-domain axis: whether QPs are created through thread domains (mlx5 {@code ibv_alloc_td}
 * plus a parent domain) and how independent each TD's doorbell register (uUAR) is.
 */
public enum TdMode {
    /** No TDs: the driver assigns uUARs statically (low-latency first, then shared medium uUARs). */
    NONE("none"),
    /** One maximally independent TD per thread (research's {@code sharing = 1}): own UAR page, wasting its second uUAR. */
    DEDICATED("dedicated"),
    /** One TD per thread at the driver's default sharing: two threads' TDs share one UAR page. */
    PAIRED("paired"),
    /**
     * The research's 2xDynamic: two maximally independent TDs per thread (2N TDs, a UAR page each),
     * threads use the even ones; the odd TDs' pages are allocated and idle.
     */
    DEDICATED_2X("dedicated-2x");

    private final String spelling;

    TdMode(String spelling) {
        this.spelling = spelling;
    }

    /** The axes-form and YAML spelling. */
    public String spelling() {
        return spelling;
    }

    /** The TD sharing attribute to ask the device for; null for {@link #NONE}. */
    public TdSharing tdSharing() {
        return switch (this) {
            case NONE -> null;
            case DEDICATED, DEDICATED_2X -> TdSharing.INDEPENDENT;
            case PAIRED -> TdSharing.DEFAULT;
        };
    }

    /** TDs allocated per thread (0, 1 or 2). */
    public int tdsPerThread() {
        return switch (this) {
            case NONE -> 0;
            case DEDICATED, PAIRED -> 1;
            case DEDICATED_2X -> 2;
        };
    }

    /** The mode spelled {@code s}, or null. */
    public static TdMode bySpelling(String s) {
        for (TdMode m : values()) {
            if (m.spelling.equals(s)) {
                return m;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return spelling;
    }
}
