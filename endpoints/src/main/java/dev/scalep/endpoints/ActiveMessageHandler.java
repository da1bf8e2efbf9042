package dev.scalep.endpoints;

/**
 * What runs when an active message arrives ({@link ActiveMessages#register}): called in the
 * progress of the destination thread slot, by the thread holding it, with the message as a view
 * that is valid only during the call (copy what must outlive it). It may send, including a
 * {@link ActiveMessage#reply}; calls that progress from inside it do not run other handlers.
 */
@FunctionalInterface
public interface ActiveMessageHandler {
    void onMessage(ActiveMessage message);
}
