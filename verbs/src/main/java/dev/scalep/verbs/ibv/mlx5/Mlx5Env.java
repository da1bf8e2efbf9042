package dev.scalep.verbs.ibv.mlx5;

import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.ffm.Native;

/**
 * The mlx5 provider's environment knobs, read by {@code mlx5_alloc_context} when a context is opened
 * (rdma-core v44): {@code MLX5_TOTAL_UUARS}, {@code MLX5_NUM_LOW_LAT_UUARS}, {@code MLX5_SHUT_UP_BF}.
 * They are process-wide, so {@link #apply} and the open that follows must not race with another
 * open that wants different values: callers hold {@link #LOCK} across both.
 */
public final class Mlx5Env {
    private Mlx5Env() {
    }

    /** Serialises "set the knobs, then ibv_open_device". */
    public static final Object LOCK = new Object();

    /** Set the knobs for {@code options} with {@code setenv}; returns them as {@code NAME=value ...}. */
    public static String apply(ContextOptions options, String device) {
        String[][] kv = {
                {"MLX5_TOTAL_UUARS", Integer.toString(options.totalUuars())},
                {"MLX5_NUM_LOW_LAT_UUARS", Integer.toString(options.lowLatencyUuars())},
                {"MLX5_SHUT_UP_BF", options.blueFlame() ? "0" : "1"}};
        StringBuilder sb = new StringBuilder();
        for (String[] e : kv) {
            int rc = Native.setenv(e[0], e[1]);
            if (rc != 0) {
                throw new VerbsException("setenv", rc, device, e[0] + "=" + e[1]);
            }
            sb.append(sb.isEmpty() ? "" : " ").append(e[0]).append('=').append(e[1]);
        }
        return sb.toString();
    }
}
