package dev.scalep.policies;

/**
 * One problem found in a policy, located in its source.
 *
 * @param where   where in the source
 * @param message what is wrong and what is allowed
 */
public record PolicyError(SourceLocation where, String message) {
    /** {@code file:line:column: message}. */
    @Override
    public String toString() {
        return where + ": " + message;
    }
}
