package dev.scalep.verbs;

/** A verbs object was used after {@code close()}; thrown before any native call is made. */
public final class ClosedException extends IllegalStateException {
    public ClosedException(String what) {
        super(what + " is closed");
    }
}
