package dev.scalep.policies;

import java.util.Locale;

/**
 * An enum constant written in policy files and on the command line as its name in lower case with
 * dashes for underscores ({@code RECEIVER_REORDER} is {@code receiver-reorder}).
 */
public interface Spelled {
    /** The constant's name, as an enum has it. */
    String name();

    /** How files and options spell this constant. */
    default String spelling() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
