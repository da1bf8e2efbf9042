package dev.scalep.endpoints;

/**
 * A peer's put with notification as the target sees it ({@link RankEndpoint#pollNotification}):
 * the 32-bit value the initiator gave and the bytes its put wrote. A holder the application
 * allocates once and passes to every poll (nothing is allocated per notification). Not thread-safe.
 */
public final class Notification {
    private int value;
    private int length;
    private boolean hasValue;

    public Notification() {
    }

    void set(int value, int length, boolean hasValue) {
        this.value = value;
        this.length = length;
        this.hasValue = hasValue;
    }

    /** The value the initiator passed to {@link RankEndpoint#putNotify}. */
    public int value() {
        return value;
    }

    /** Bytes the notifying put wrote into the window. */
    public int length() {
        return length;
    }

    /**
     * Whether this receive carried a value: true for a put with notification; false for a plain
     * send from the peer (an {@link Endpoint#send} that consumed a receive of this endpoint).
     */
    public boolean hasValue() {
        return hasValue;
    }

    @Override
    public String toString() {
        return "notification value=" + value + " length=" + length + (hasValue ? "" : " (a send, no value)");
    }
}
