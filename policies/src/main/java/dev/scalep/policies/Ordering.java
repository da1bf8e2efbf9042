package dev.scalep.policies;

/** How the runtime restores ordering on devices that deliver out of order (EFA SRD). */
public enum Ordering {
    /** No ordering: completions are handed out as the device reports them. */
    NONE("none"),
    /** The receiver buffers early arrivals and releases them in sequence-number order. */
    RECEIVER_REORDER("receiver-reorder"),
    /** The sender posts a dependent WR only after the WRs it follows have completed. */
    SENDER_WAIT("sender-wait");

    private final String spelling;

    Ordering(String spelling) {
        this.spelling = spelling;
    }

    public String spelling() {
        return spelling;
    }

    @Override
    public String toString() {
        return spelling;
    }
}
