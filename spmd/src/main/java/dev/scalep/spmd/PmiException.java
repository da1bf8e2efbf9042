package dev.scalep.spmd;

/** A PMI-1/PMI-2 exchange failed: the server refused, answered out of protocol, or the channel broke. One line. */
final class PmiException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    PmiException(String message) {
        super(message);
    }
}
