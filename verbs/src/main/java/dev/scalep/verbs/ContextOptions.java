package dev.scalep.verbs;

/**
 * Provider knobs fixed when a context is opened. On mlx5 they are the environment variables the
 * driver reads in {@code mlx5_alloc_context}: {@code MLX5_TOTAL_UUARS}, {@code MLX5_NUM_LOW_LAT_UUARS},
 * {@code MLX5_SHUT_UP_BF}; other devices ignore them.
 *
 * @param totalUuars      data-path uUARs allocated statically per context (even, 2..512; default 16)
 * @param lowLatencyUuars how many of them are low latency, one QP each, no lock (default 4)
 * @param blueFlame       BlueFlame writes on ({@code MLX5_SHUT_UP_BF=0}) or off
 * @param uarMode         classic static allocation (what the research measured) or the modern dynamic mode
 */
public record ContextOptions(int totalUuars, int lowLatencyUuars, boolean blueFlame, UarMode uarMode) {

    public static final ContextOptions DEFAULTS = new ContextOptions(16, 4, true, UarMode.CLASSIC);

    /** How the mlx5 driver allocates UAR pages for a context. */
    public enum UarMode {
        /** 8 pages / 16 uUARs mapped at context creation, statically classed. */
        CLASSIC,
        /** rdma-core ≥ v29: nothing mapped up front, QP pages on demand. */
        DYNAMIC
    }

    public ContextOptions {
        if (totalUuars < 2 || totalUuars > 512) {
            throw new IllegalArgumentException("totalUuars must be in 2..512 (MLX5_TOTAL_UUARS): " + totalUuars);
        }
        if ((totalUuars & 1) != 0) {
            totalUuars++; // the driver rounds up to a whole UAR page (2 data-path uUARs)
        }
        if (lowLatencyUuars < 0 || lowLatencyUuars > totalUuars - 1) {
            throw new IllegalArgumentException("lowLatencyUuars must be in 0.." + (totalUuars - 1)
                    + " (MLX5_NUM_LOW_LAT_UUARS): " + lowLatencyUuars);
        }
        if (uarMode == null) {
            uarMode = UarMode.CLASSIC;
        }
    }

    public ContextOptions withBlueFlame(boolean on) {
        return new ContextOptions(totalUuars, lowLatencyUuars, on, uarMode);
    }

    public ContextOptions withUuars(int total, int lowLatency) {
        return new ContextOptions(total, lowLatency, blueFlame, uarMode);
    }

    public ContextOptions withUarMode(UarMode mode) {
        return new ContextOptions(totalUuars, lowLatencyUuars, blueFlame, mode);
    }
}
