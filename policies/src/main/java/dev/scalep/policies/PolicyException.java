package dev.scalep.policies;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A policy that cannot be loaded or does not fit a device: a user mistake. Carries every error
 * found (not just the first), each as {@code file:line:column: message}; the exception message is
 * those lines joined by newlines.
 */
public final class PolicyException extends IllegalArgumentException {
    private final List<PolicyError> errors;

    public PolicyException(List<PolicyError> errors) {
        super(render(errors));
        if (errors.isEmpty()) {
            throw new IllegalArgumentException("a PolicyException needs at least one error");
        }
        List<PolicyError> sorted = new ArrayList<>(errors);
        sorted.sort(ORDER);
        this.errors = List.copyOf(sorted);
    }

    public PolicyException(PolicyError error) {
        this(List.of(error));
    }

    private static final Comparator<PolicyError> ORDER = Comparator
            .comparing((PolicyError e) -> e.where().file())
            .thenComparingInt(e -> e.where().line())
            .thenComparingInt(e -> e.where().column());

    /** Every error, ordered by position. */
    public List<PolicyError> errors() {
        return errors;
    }

    private static String render(List<PolicyError> errors) {
        List<PolicyError> sorted = new ArrayList<>(errors);
        sorted.sort(ORDER);
        StringBuilder sb = new StringBuilder();
        for (PolicyError e : sorted) {
            if (!sb.isEmpty()) {
                sb.append('\n');
            }
            sb.append(e);
        }
        return sb.toString();
    }
}
