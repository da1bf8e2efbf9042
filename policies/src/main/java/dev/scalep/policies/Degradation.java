package dev.scalep.policies;

/**
 * A setting validation changed because a device (or the queue depth) could not honour it.
 *
 * @param className the endpoint class
 * @param setting   the dotted key, e.g. {@code inline}, {@code sharing}
 * @param requested the value asked for (or defaulted)
 * @param applied   the value in effect
 * @param reason    why, naming the limit and device
 */
public record Degradation(String className, String setting, String requested, String applied, String reason) {
    /** e.g. {@code class halo: inline 128 > device limit 32 on sim:efa → 32}. */
    public String message() {
        return "class " + className + ": " + reason + " \u2192 " + applied;
    }

    @Override
    public String toString() {
        return message();
    }
}
