package dev.scalep.policies;

/**
 * Settings of the tagged messages an endpoint carries.
 *
 * @param eagerLimit the largest message sent eager (copied into a runtime-owned receive slot of
 *                   this many bytes plus the message header); longer ones go by rendezvous (the
 *                   receiver reads them from the sender's window), so this is the eager/rendezvous
 *                   crossover
 */
public record MessageSettings(int eagerLimit) {
    /** The default settings ({@link PolicyKeys#MESSAGES_EAGER_LIMIT}). */
    public static final MessageSettings DEFAULTS = new MessageSettings(PolicyKeys.DEFAULT_EAGER_LIMIT);
}
