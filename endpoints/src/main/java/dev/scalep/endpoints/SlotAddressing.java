package dev.scalep.endpoints;

/**
 * Which thread slot of the target rank a tagged or active message reaches
 * ({@link WorldEndpoints#open(dev.scalep.spmd.World, dev.scalep.verbs.Device,
 * dev.scalep.policies.SharingConfig, int, EndpointOptions, ProgressMode, SlotAddressing)}); every
 * rank opens its world with the same one.
 */
public enum SlotAddressing {
    /**
     * The slot of the same index (the default), as the research pairs threads and LCI pairs
     * devices: one stream (sequence numbers, credits, inbox ring) per pair of slots, so slot
     * {@code t} of one rank talks to slot {@code t} of every rank.
     */
    SAME_INDEX,
    /**
     * A send may name any slot of the target rank ({@link Messages#send(int, int, int,
     * java.lang.foreign.MemorySegment, long, long)}): one stream per (rank, slot) pair on both
     * sides, so each pair's credits are those of {@link #SAME_INDEX} divided by the thread count
     * (the receives a QP posts are shared by T times as many streams) and the mailboxes grow by
     * the thread count. On a connectionless device (SRD, UD) the message goes from the sender's QP
     * straight to the QP of the named slot; on RC, where QP {@code k} is connected to the peer's QP
     * {@code k}, it travels on the sender's own index and the receiving rank hands it to the named
     * slot, so it moves when that rank's slot of the sender's index (or a progress thread) progresses.
     */
    ANY_SLOT
}
