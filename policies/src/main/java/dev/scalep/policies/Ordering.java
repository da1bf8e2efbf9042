package dev.scalep.policies;

/** How the runtime restores ordering on devices that deliver out of order (EFA SRD). */
public enum Ordering implements Spelled {
    /** No ordering: completions are handed out as the device reports them. */
    NONE,
    /** The receiver buffers early arrivals and releases them in sequence-number order. */
    RECEIVER_REORDER,
    /** The sender posts a dependent WR only after the WRs it follows have completed. */
    SENDER_WAIT;

    @Override
    public String toString() {
        return spelling();
    }
}
