package dev.scalep.threading;

/**
 * The work-request id convention of shared queues and completion routing. A 64-bit {@code wr_id}
 * carries, from the top: a receive marker (bit 63), the owner index (16 bits, 47..62) and the
 * caller's own id (47 bits). Routing needs the marker because an error completion's opcode is
 * undefined ({@code ibv_poll_cq(3)}), and the owner because several threads may share one QP.
 * Send paths that rewrite ids for exact queue accounting ({@link AbstractSendPath}) restore the
 * original id before a completion is routed.
 */
public final class WrIds {
    private WrIds() {
    }

    /** Set on receive work requests. */
    public static final long RECV = 1L << 63;
    /** Bits of the caller's own id. */
    public static final int USER_BITS = 47;
    public static final long USER_MASK = (1L << USER_BITS) - 1;
    /** Owners one id can name. */
    public static final int MAX_OWNERS = 1 << 16;

    /** A send id for {@code owner} carrying {@code user} (47 bits; higher bits are dropped). */
    public static long send(int owner, long user) {
        return ((long) owner << USER_BITS) | (user & USER_MASK);
    }

    /** A receive id for {@code owner} carrying {@code user}. */
    public static long recv(int owner, long user) {
        return RECV | ((long) owner << USER_BITS) | (user & USER_MASK);
    }

    public static boolean isRecv(long wrId) {
        return wrId < 0;
    }

    public static int owner(long wrId) {
        return (int) ((wrId >>> USER_BITS) & 0xFFFF);
    }

    public static long user(long wrId) {
        return wrId & USER_MASK;
    }
}
