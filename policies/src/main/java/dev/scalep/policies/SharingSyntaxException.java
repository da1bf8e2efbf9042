package dev.scalep.policies;

/**
 * A sharing level in axes form that does not parse or is inconsistent. The message names the
 * offending token and what is allowed; {@link #offset()} is the token's character offset in the input.
 */
public final class SharingSyntaxException extends IllegalArgumentException {
    private final int offset;

    public SharingSyntaxException(String message, int offset) {
        super(message);
        this.offset = offset;
    }

    /** 0-based character offset of the offending token in the parsed string (0 for whole-config errors). */
    public int offset() {
        return offset;
    }
}
