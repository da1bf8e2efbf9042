package dev.scalep.policies;

/** How threads that share one QP serialise their posts. */
public enum QpMode {
    /** The QP is not shared: its one owner thread posts directly, no lock. */
    DIRECT("direct"),
    /** A lock around every post (what MPI+threads does today; the reference). */
    LOCKED("locked"),
    /** Threads enqueue work requests into a lock-free MPSC ring; the combiner posts them as one list. */
    COMBINING("combining");

    private final String spelling;

    QpMode(String spelling) {
        this.spelling = spelling;
    }

    /** The axes-form spelling. */
    public String spelling() {
        return spelling;
    }

    /** The mode spelled {@code s}, or null. */
    public static QpMode bySpelling(String s) {
        for (QpMode m : values()) {
            if (m.spelling.equals(s)) {
                return m;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return spelling;
    }
}
