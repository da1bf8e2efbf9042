package dev.scalep.endpoints;

/**
 * What a completed {@link Messages} request reports (the application's holder, reused; the
 * runtime never allocates one): for a receive, the source rank and slot, the tag and the length of
 * the message that matched it (the sent length, also when it was truncated); for a send, its
 * destination rank and slot, tag and length. {@link #error()} is {@link #OK} or one of the codes below.
 */
public final class MessageStatus {
    /** The request completed normally. */
    public static final int OK = 0;
    /** The message was longer than the receive buffer: its first {@code capacity} bytes are there. */
    public static final int TRUNCATED = 1;
    /** The receive was cancelled before a message matched it ({@link Messages#cancel}). */
    public static final int CANCELLED = 2;
    /**
     * A rendezvous message (above the sender's threshold) matched a receive posted on memory that
     * is not a window: nothing was transferred, and the sender's request completes with
     * {@link #REMOTE_ERROR}.
     */
    public static final int NOT_REGISTERED = 3;
    /** The RDMA read of a rendezvous transfer failed (or the peer's receive refused it). */
    public static final int TRANSFER_FAILED = 4;
    /** A send's receiver reported an error for the message (NOT_REGISTERED or TRANSFER_FAILED there). */
    public static final int REMOTE_ERROR = 5;
    /**
     * The rank the request waited for ({@link #source()}) stopped answering: {@link Messages#waitFor}
     * probed it while waiting and the device reported it unreachable (the process died, or its
     * node). The request is closed; nothing more will arrive from or reach that rank here.
     */
    public static final int PEER_LOST = 6;

    private int source;
    private int sourceSlot = -1;
    private int tag;
    private long length;
    private int error;

    void set(int source, int slot, int tag, long length, int error) {
        this.source = source;
        this.sourceSlot = slot;
        this.tag = tag;
        this.length = length;
        this.error = error;
    }

    public int source() {
        return source;
    }

    /**
     * The thread slot of {@link #source()} at the other end: for a receive (or a probe) the slot
     * that sent the message, for a send the slot it was sent to; -1 where there is none (an eager
     * send's {@link Messages#COMPLETED}, a cancelled receive, a lost peer).
     */
    public int sourceSlot() {
        return sourceSlot;
    }

    public int tag() {
        return tag;
    }

    public long length() {
        return length;
    }

    public int error() {
        return error;
    }

    /** A readable name of an error code. */
    public static String errorName(int error) {
        return switch (error) {
            case OK -> "OK";
            case TRUNCATED -> "TRUNCATED";
            case CANCELLED -> "CANCELLED";
            case NOT_REGISTERED -> "NOT_REGISTERED";
            case TRANSFER_FAILED -> "TRANSFER_FAILED";
            case REMOTE_ERROR -> "REMOTE_ERROR";
            case PEER_LOST -> "PEER_LOST";
            default -> "error " + error;
        };
    }

    @Override
    public String toString() {
        return "MessageStatus[source=" + source + ", slot=" + sourceSlot + ", tag=" + tag + ", length=" + length + ", " + errorName(error) + "]";
    }
}
