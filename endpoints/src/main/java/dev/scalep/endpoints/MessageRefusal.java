package dev.scalep.endpoints;

/**
 * Why a rank refused a message a peer sent it ({@link Messages#refused(int)},
 * {@link ActiveMessages#refused(int)}). A refused message is dropped whole (its receive given back
 * to the device at once, nothing delivered, no handler run), counted under one of these reasons,
 * and the endpoint goes on with the next message: a faulty or hostile peer costs the messages it
 * sent wrong, not the stream.
 */
public final class MessageRefusal {
    /** Not refused (never counted). */
    static final int NONE = 0;
    /** A corrupt header: shorter than a header, a bad magic word or kind, or a length field that disagrees with the bytes received. */
    public static final int MALFORMED = 1;
    /** A thread slot or source rank that is not one of the world's. */
    public static final int ADDRESS = 2;
    /**
     * A length field beyond the receive slot (the bounce buffer an eager message lives in), or a
     * rendezvous active message beyond the receiving slot's rendezvous buffer.
     */
    public static final int OVERSIZE = 3;
    /** A sequence number outside the sender's credit window, or for a ring slot still in use. */
    public static final int SEQUENCE = 4;
    /** An active message whose handler id is outside 0..255 or has no handler registered on the destination slot. */
    public static final int HANDLER = 5;
    /** Reasons (the size of a table indexed by them). */
    static final int REASONS = 6;

    private MessageRefusal() {
    }

    /** A readable name of a reason. */
    public static String name(int reason) {
        return switch (reason) {
            case MALFORMED -> "MALFORMED";
            case ADDRESS -> "ADDRESS";
            case OVERSIZE -> "OVERSIZE";
            case SEQUENCE -> "SEQUENCE";
            case HANDLER -> "HANDLER";
            default -> "reason " + reason;
        };
    }
}
