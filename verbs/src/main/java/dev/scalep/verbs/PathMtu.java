package dev.scalep.verbs;

/**
 * The InfiniBand path MTUs ({@code enum ibv_mtu}): 256, 512, 1024, 2048 and 4096 bytes, coded 1..5.
 * RoCE carries the same five sizes; an RC QP's path MTU is fixed at RTR and both ends of a
 * connection must use the same one (a responder drops packets larger than its own MTU, and current
 * rxe and every NIC reject first/middle packets that are not exactly the MTU).
 */
public final class PathMtu {
    /** The path MTU is not set: use the smaller of the port's active MTU and the peer's. */
    public static final int AUTO = 0;

    private PathMtu() {
    }

    /** Whether {@code bytes} is one of the five path MTUs. */
    public static boolean valid(int bytes) {
        return bytes >= 256 && bytes <= 4096 && Integer.bitCount(bytes) == 1;
    }

    /** The {@code enum ibv_mtu} code (1..5) of {@code bytes}. */
    public static int code(int bytes) {
        if (!valid(bytes)) {
            throw new IllegalArgumentException("path MTU " + bytes + " is not one of 256, 512, 1024, 2048, 4096");
        }
        return Integer.numberOfTrailingZeros(bytes) - 7;
    }

    /** The bytes of {@code enum ibv_mtu} code {@code code} (1..5); 0 for any other code. */
    public static int bytes(int code) {
        return code >= 1 && code <= 5 ? 128 << code : 0;
    }

    /**
     * The MTU a connection uses: {@code requested} when set (it must not exceed {@code localMax}),
     * else the smaller of {@code localMax} and the peer's advertised {@code remote} (0: unknown).
     */
    public static int agree(int requested, int localMax, int remote) {
        int m = requested != AUTO ? requested : localMax;
        return remote > 0 ? Math.min(m, remote) : m;
    }

    /** "256, 512, 1024, 2048, 4096" up to {@code max}. */
    public static String upTo(int max) {
        StringBuilder b = new StringBuilder();
        for (int m = 256; m <= max && m <= 4096; m <<= 1) {
            b.append(b.isEmpty() ? "" : ", ").append(m);
        }
        return b.toString();
    }
}
