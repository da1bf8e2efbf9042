package dev.scalep.verbs;

/** {@code enum ibv_send_flags} bits for {@link SendWorkRequests#flags(int, int)}. */
public final class SendFlags {
    private SendFlags() {
    }

    public static final int FENCE = 1;
    /** Ask for a completion for this work request. */
    public static final int SIGNALED = 2;
    public static final int SOLICITED = 4;
    /** Copy the payload into the WQE at post time; the buffer may be reused when post returns. */
    public static final int INLINE = 8;
}
