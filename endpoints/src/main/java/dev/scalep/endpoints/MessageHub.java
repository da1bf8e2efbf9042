package dev.scalep.endpoints;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One rank's tagged messages ({@link Messages}): the per-thread-slot state of every slot, and the
 * receive hook every endpoint of the world offers its receives of a send with immediate to (after
 * the atomics emulation). The hook runs in whichever thread polls the receive (at levels whose
 * threads share a QP, any sharer): it copies an eager message or a rendezvous request into the
 * destination slot's inbox ring at the message's sequence number and marks it ready, or applies a
 * credit or a rendezvous completion to the slot's counters, and gives the receive slot back at
 * once. Matching happens later, in the destination thread ({@link Messages#progress()}).
 *
 * <p>Header ({@value #HEADER} bytes, host byte order): {@code +0 u16 magic, +2 u16 source thread
 * slot, +4 u8 kind, +5 u8 status (FIN), +6 u16 destination thread slot, +8 u32 source rank, +12
 * i32 tag, +16 u64 sequence (EAGER,
 * RTS) | consumed count (CREDIT) | sender request (FIN), +24 u64 length, +32 u64 piggybacked
 * consumed count of the reverse direction, +40 u16 window (RTS), +44 u32 sender request (RTS),
 * +48 u64 window offset (RTS)}; an eager payload follows it. An active message (AM) is eager with
 * the handler id in the tag field and its two header words at +40 and +48; a rendezvous active
 * message (AM_RTS) is a rendezvous request for a handler id, its header words in a 16-byte body.
 */
final class MessageHub implements Endpoint.Emulation {
    /** Immediate of every tagged-message send (the emulation's are 0xA7A70001 and 0xA7A70002). */
    static final int IMM_MESSAGE = 0xA7A70003;
    /** The header's first 16 bits. */
    static final short MAGIC = (short) 0xE7A9;
    static final int HEADER = 56;
    static final byte EAGER = 1;
    static final byte RTS = 2;
    static final byte CREDIT = 3;
    static final byte FIN = 4;
    /** An active message ({@link ActiveMessages}): eager, handler id at +12, two header words at +40 and +48. */
    static final byte AM = 5;
    /**
     * A rendezvous active message: a rendezvous request (window, sender request and offset at +40,
     * +44, +48; the payload length at +24) for handler id +12, with the two header words in a
     * {@value #AM_RTS_BODY}-byte body after the header.
     */
    static final byte AM_RTS = 6;
    static final int AM_RTS_BODY = 16;
    /** Control sends (credits, rendezvous completions) one thread may have in flight. */
    static final int CONTROL = 16;
    static final int CONTROL_BYTES = 64;
    /** Requests one thread slot may have open at once. */
    static final int REQUESTS = 1024;
    /** Bytes of one source rank's line in a mailbox: the consumed count, then the mapped-sender flag. */
    static final int LINE = 64;

    /*
     * A thread slot's mailbox, in window 0 (so that a rank whose part the device maps can write into
     * it, WorldEndpoints.mapMessages): the inbox ring (per source pair (rank, and with ANY_SLOT its
     * slot), credits slots of slotBytes; a message is ready in its ring slot once the slot's sequence
     * field, +16 of the header, holds its sequence number: stored last with a release, by the sender
     * through the mapping or by the hook after the copy; never cleared, -1 before the first message;
     * a slot is free for seq once seq - credits was consumed: the ready mark shares the message's
     * cache line instead of a word array whose line every message of the ring wrote),
     * one LINE per source pair (+0 how many of its messages this slot consumed, published with a
     * release store; +8 nonzero when that rank writes its messages here through the mapping), and
     * one FIN word per request of this slot (a rendezvous send's outcome + 1).
     */

    /** Bytes of one slot's mailbox. */
    static long boxBytes(int pairs, int credits, int slotBytes) {
        return finAt(pairs, credits, slotBytes) + 4L * REQUESTS;
    }

    static long lineAt(int pairs, int credits, int slotBytes) {
        return align((long) pairs * credits * slotBytes);
    }

    /**
     * The stride of a mailbox's and a staging area's slots for receive slots of
     * {@code recvSlotBytes}: rounded down to 8 bytes, so that every slot's sequence field is an
     * aligned word (the eager limit is this less the header).
     */
    static int slotBytes(int recvSlotBytes) {
        return recvSlotBytes & ~7;
    }

    static long finAt(int pairs, int credits, int slotBytes) {
        return lineAt(pairs, credits, slotBytes) + (long) LINE * pairs;
    }

    private static long align(long bytes) {
        return (bytes + 63) & ~63L;
    }

    final WorldEndpoints world;
    final int ranks;
    final int threads;
    final int me;
    /** Messages one thread may have unconsumed at one thread of another rank (the inbox ring per source). */
    final int credits;
    /**
     * Thread slots of a rank a slot keeps a stream with: 1 when messages reach the slot of the same
     * index ({@link SlotAddressing#SAME_INDEX}), {@link #threads} when a send may name any slot
     * ({@link SlotAddressing#ANY_SLOT}). A slot's streams (sequence, credits, inbox ring) are one per
     * pair index {@code rank * width + (width == 1 ? 0 : slot)}.
     */
    final int width;
    /** Per thread slot, the index of the QP its endpoints use (the same on every rank: every rank opens the same level). */
    final int[] qpOfSlot;
    /** Bytes per inbox and staging slot: the receive slot size. */
    final int slotBytes;
    final boolean connectionless;
    /** Per thread slot, per destination rank, per ring slot: the eager staging ({@link #slotBytes} each), registered. */
    final MemorySegment staging;
    final int[] stagingLkey;
    /** Per thread slot, {@value #CONTROL} control staging entries of {@value #CONTROL_BYTES} bytes, registered. */
    final MemorySegment control;
    final int[] controlLkey;
    /** Messages refused, by {@link MessageRefusal} reason (any thread of the rank counts). */
    private final AtomicLongArray refused = new AtomicLongArray(MessageRefusal.REASONS);
    final Messages[] slots;

    MessageHub(WorldEndpoints world, int ranks, int threads, int me, int credits, int width, int[] qpOfSlot, int slotBytes,
               boolean connectionless, MemorySegment staging, int[] stagingLkey, MemorySegment control, int[] controlLkey,
               MemorySegment boxes) {
        this.world = world;
        this.ranks = ranks;
        this.threads = threads;
        this.me = me;
        this.credits = credits;
        this.width = width;
        this.qpOfSlot = qpOfSlot;
        this.slotBytes = slotBytes;
        this.connectionless = connectionless;
        this.staging = staging;
        this.stagingLkey = stagingLkey;
        this.control = control;
        this.controlLkey = controlLkey;
        this.slots = new Messages[threads];
        long box = boxBytes(ranks * width, credits, slotBytes);
        for (int t = 0; t < threads; t++) {
            slots[t] = new Messages(this, t, boxes.asSlice(t * box, box));
        }
    }

    /**
     * Every send with the messages' immediate is the hub's: one that is not a well-formed message a
     * peer within its credits could have sent is refused (counted by reason, {@link #refused}) and
     * its receive given back, so the endpoint goes on with the next one.
     */
    @Override
    public boolean receive(Endpoint e, int slot, MemorySegment region, long offset, int imm, int length) {
        if (imm != IMM_MESSAGE) {
            return false;
        }
        int why = accept(region, offset, length);
        if (why != MessageRefusal.NONE) {
            refused.getAndIncrement(why);
        }
        e.repostSlot(slot);
        return true;
    }

    private int accept(MemorySegment region, long offset, int length) {
        if (length < HEADER || region.get(ValueLayout.JAVA_SHORT_UNALIGNED, offset) != MAGIC) {
            return MessageRefusal.MALFORMED;
        }
        int from = Short.toUnsignedInt(region.get(ValueLayout.JAVA_SHORT_UNALIGNED, offset + 2));
        int kind = region.get(ValueLayout.JAVA_BYTE, offset + 4);
        int thread = Short.toUnsignedInt(region.get(ValueLayout.JAVA_SHORT_UNALIGNED, offset + 6));
        int rank = region.get(ValueLayout.JAVA_INT_UNALIGNED, offset + 8);
        if (kind < EAGER || kind > AM_RTS) {
            return MessageRefusal.MALFORMED;
        }
        // the source slot: any slot where sends may name one, else the destination's own index
        if (credits == 0 || thread >= threads || rank < 0 || rank >= ranks || (width == 1 ? from != thread : from >= threads)) {
            return MessageRefusal.ADDRESS;
        }
        Messages m = slots[thread];
        int pair = rank * width + (width == 1 ? 0 : from);
        long value = region.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + 16);
        long len = region.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + 24);
        switch (kind) {
            case EAGER, AM -> {
                if (len < 0 || len > slotBytes - HEADER) {
                    return MessageRefusal.OVERSIZE;
                }
                if (length != HEADER + len) {
                    return MessageRefusal.MALFORMED;
                }
                if (kind == AM && (region.get(ValueLayout.JAVA_INT_UNALIGNED, offset + 12) & ~(ActiveMessages.HANDLERS - 1)) != 0) {
                    return MessageRefusal.HANDLER;
                }
            }
            case RTS -> {
                if (length != HEADER || len < 0) {
                    return MessageRefusal.MALFORMED;
                }
            }
            case AM_RTS -> {
                if (length != HEADER + AM_RTS_BODY || len < 0) {
                    return MessageRefusal.MALFORMED;
                }
                if ((region.get(ValueLayout.JAVA_INT_UNALIGNED, offset + 12) & ~(ActiveMessages.HANDLERS - 1)) != 0) {
                    return MessageRefusal.HANDLER;
                }
            }
            case CREDIT -> {
                m.credit(pair, value);
                return MessageRefusal.NONE;
            }
            default -> { // FIN
                m.finished(value, Byte.toUnsignedInt(region.get(ValueLayout.JAVA_BYTE, offset + 5)));
                return MessageRefusal.NONE;
            }
        }
        if (value < 0 || !m.arrived(pair, value, region, offset, length)) {
            return MessageRefusal.SEQUENCE;
        }
        m.credit(pair, region.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + 32));
        return MessageRefusal.NONE;
    }

    /** Count a message refused by the destination slot (an active message no handler is registered for). */
    void refuse(int reason) {
        refused.getAndIncrement(reason);
    }

    /** Messages of this rank refused for {@code reason}. */
    long refused(int reason) {
        return refused.get(reason);
    }

    /** A control send of thread slot {@code e.index()} completed: its staging entry is free. */
    void sent(Endpoint e, int entry) {
        int t = e.index();
        if (t < threads && entry < CONTROL) {
            slots[t].controlDone(entry);
        }
    }

    Window window(int id) {
        return world.window(id);
    }
}
