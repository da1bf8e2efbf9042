package dev.scalep.verbs;

/** A device name that no provider knows: a user mistake, reported with the names that exist. */
public final class NoSuchDeviceException extends IllegalArgumentException {
    public NoSuchDeviceException(String message) {
        super(message);
    }
}
