package dev.scalep.policies;

/** What validation does when a device cannot honour a setting of an endpoint class. */
public enum OnUnsupported implements Spelled {
    /** Reject the policy with a located error. */
    FAIL,
    /** Substitute the nearest supported value and report the substitution. */
    DEGRADE;

    @Override
    public String toString() {
        return spelling();
    }
}
