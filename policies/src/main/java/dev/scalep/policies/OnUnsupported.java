package dev.scalep.policies;

/** What validation does when a device cannot honour a setting of an endpoint class. */
public enum OnUnsupported {
    /** Reject the policy with a located error. */
    FAIL("fail"),
    /** Substitute the nearest supported value and report the substitution. */
    DEGRADE("degrade");

    private final String spelling;

    OnUnsupported(String spelling) {
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
