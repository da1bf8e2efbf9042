package dev.scalep.endpoints;

/**
 * Who progresses a rank's endpoints ({@link WorldEndpoints#open(dev.scalep.spmd.World,
 * dev.scalep.verbs.Device, dev.scalep.policies.SharingConfig, int, EndpointOptions, ProgressMode)}).
 */
public enum ProgressMode {
    /**
     * Only the threads holding the slots, in their calls (the default): traffic for a slot whose
     * thread makes no call waits until it does, and a peer that sends it more than the credits,
     * waits for a rendezvous read or an active-message reply waits with it.
     */
    CALLER,
    /**
     * As {@link #CALLER}, and one progress thread per rank progresses every acquired slot whose
     * thread has made no call for one of its passes (matching, running active-message handlers,
     * returning credits, serving emulated atomics), excluding that thread for the pass. Each call
     * of a slot then costs one uncontended CAS on entry and a store on exit.
     */
    THREAD
}
