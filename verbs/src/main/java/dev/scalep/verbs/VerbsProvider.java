package dev.scalep.verbs;

import java.util.List;

/**
 * A provider of devices (service-provider interface, loaded with {@link java.util.ServiceLoader}):
 * {@code sim} always, {@code ibv} when libibverbs finds devices.
 */
public interface VerbsProvider {
    /** {@code sim} or {@code ibv}. */
    String name();

    /** The devices this provider can open now (empty when none). */
    List<Device> devices();

    /** Why {@link #devices()} is empty (what was tried and what failed), or {@code null}. */
    String unavailableReason();
}
