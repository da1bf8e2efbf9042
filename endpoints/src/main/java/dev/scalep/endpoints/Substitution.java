package dev.scalep.endpoints;

/**
 * A setting the manager could not honour on the opened device, and what it used instead.
 *
 * @param setting   the axis or feature ({@code td}, {@code signalEvery}, ...)
 * @param requested what the configuration asked for
 * @param applied   what was built
 * @param reason    why, naming the device and the missing capability
 */
public record Substitution(String setting, String requested, String applied, String reason) {
    @Override
    public String toString() {
        return setting + ": " + requested + " -> " + applied + " (" + reason + ")";
    }
}
