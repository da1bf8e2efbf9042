package dev.scalep.cli;

/** A mistake in what the user asked for; printed as one line, exit code 2. */
public final class UserException extends RuntimeException {
    public UserException(String message) {
        super(message);
    }
}
