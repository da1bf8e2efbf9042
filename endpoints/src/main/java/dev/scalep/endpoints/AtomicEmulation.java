package dev.scalep.endpoints;

import dev.scalep.verbs.WcStatus;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Window atomics on a device without RDMA atomics (EFA: {@code atomic_cap} NONE), one rank's part:
 * a request/reply protocol over the world's endpoints, served by the target rank's threads as they
 * progress.
 *
 * <p>A fetch-and-add, compare-and-swap, swap or add is a send with immediate {@link #IMM_REQUEST}
 * of {@value #MESSAGE_BYTES} bytes from one of the initiating thread's {@value #SLOTS} staging slots
 * into a receive of the target rank. Whichever of the target's endpoints takes the receive copies
 * the message into the reply buffer's slot of its initiating rank, thread and staging slot (one
 * slot per request that can be in flight in the world, so replies never wait for one), posts the
 * receive again at once, applies the operation to its window word with a CPU atomic instruction
 * (every emulated atomic on a word is applied this way by the process that owns it, so they are
 * atomic against each other, from any number of target threads serving at once), writes the
 * word's previous value and a status into the copy, and sends it back (immediate
 * {@link #IMM_REPLY}). No receive ever waits on a send, so requests and replies crossing between
 * ranks whose send queues are full cannot wait on each other. Whichever of the initiating
 * rank's endpoints takes the reply stores the value into the result window, frees the staging
 * slot and counts the reply for the initiating thread; a flush waits for that count.
 *
 * <p>Credits: a thread may have at most {@link #credits} requests in flight to one target rank
 * (and {@value #SLOTS} in all); beyond that the call returns {@link Endpoint#BACK_PRESSURED}, and a
 * reply gives the credit back. The credits are what the receive slots leave after the tagged
 * messages' share, halved between requests arriving and replies coming back, so the emulation
 * never sends into a receive queue that has no receive for it (no receiver-not-ready retries),
 * whatever the receive depth and however many threads and ranks aim at one target.
 *
 * <p>Message ({@value #MESSAGE_BYTES} bytes, host byte order): {@code +0 u32 magic, +4 u8 op,
 * +5 u8 status (reply), +6 u16 target window, +8 u64 target offset, +16 u64 operand (the previous
 * value in the reply), +24 u64 second operand, +32 u16 result window (0xffff: none), +34 u16
 * initiating thread, +36 u16 staging slot, +38 u16 initiating rank, +40 u64 result offset}. A
 * user's send with one of the two immediates, that length and the magic would be taken for one.
 */
final class AtomicEmulation implements Endpoint.Emulation {
    static final int MESSAGE_BYTES = 48;
    static final int MAGIC = 0x5CA1E0A7;
    static final int IMM_REQUEST = 0xA7A70001;
    static final int IMM_REPLY = 0xA7A70002;
    static final byte FETCH_ADD = 1;
    static final byte COMPARE_AND_SWAP = 2;
    static final byte SWAP = 3;
    static final byte ADD = 4;
    /** Emulated atomics one thread may have in flight (its staging slots). */
    static final int SLOTS = 64;
    static final int SLOT_BYTES = 64;
    static final int NO_RESULT = 0xFFFF;
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();

    private final boolean connectionless;
    private final int threads;
    private final int ranks;
    /** {@code ranks * threads * SLOTS} reply slots of {@value #SLOT_BYTES} bytes, registered on every PD. */
    final MemorySegment replies;
    /** This rank's part of each open window, by id (set before the handles are exchanged). */
    private final AtomicReferenceArray<MemorySegment> windows = new AtomicReferenceArray<>(WorldEndpoints.MAX_WINDOWS);
    /** Per initiating thread: replies taken (by any thread of the rank). */
    private final AtomicLongArray done;
    /** Per initiating thread: requests sent (written by the thread that holds the slot; leases hand over under a lock). */
    private final long[] issued;
    /** Per initiating thread and staging slot: 1 while its request waits for the reply. */
    private final AtomicIntegerArray busy;
    /** Per initiating thread: the first error status a reply carried. */
    private final AtomicIntegerArray error;
    /**
     * Requests one initiating thread may have in flight to one target rank: the receives the
     * target's QP keeps for that thread's requests, and the initiator's for their replies.
     */
    final int credits;
    /** Per initiating thread and target rank: requests whose reply has not been taken yet. */
    private final AtomicIntegerArray inFlight;
    /** Per initiating thread and staging slot: the rank its request went to (written before the slot is marked busy). */
    private final int[] slotTarget;
    /** {@code threads * SLOTS} staging slots of {@value #SLOT_BYTES} bytes, registered on every PD. */
    final MemorySegment staging;
    final int[] stagingLkey;

    AtomicEmulation(boolean connectionless, int ranks, int threads, int credits, MemorySegment staging, int[] stagingLkey,
                    MemorySegment replies) {
        if (credits < 1) {
            throw new IllegalArgumentException("atomics emulation with " + credits + " credits");
        }
        this.credits = credits;
        this.inFlight = new AtomicIntegerArray(threads * ranks);
        this.slotTarget = new int[threads * SLOTS];
        this.connectionless = connectionless;
        this.ranks = ranks;
        this.threads = threads;
        this.replies = replies;
        this.staging = staging;
        this.stagingLkey = stagingLkey;
        this.done = new AtomicLongArray(threads);
        this.issued = new long[threads];
        this.busy = new AtomicIntegerArray(threads * SLOTS);
        this.error = new AtomicIntegerArray(threads);
    }

    /** Window {@code id}'s part on this rank is {@code local} (null: gone). */
    void window(int id, MemorySegment local) {
        windows.set(id, local);
    }

    /** Requests of thread slot {@code thread} whose reply has not been taken yet. */
    long pending(int thread) {
        return issued[thread] - done.get(thread);
    }

    int error(int thread) {
        return error.get(thread);
    }

    /**
     * The emulation's credits per (initiating thread, target rank) for receives of
     * {@code recvSlots} slots per endpoint, {@code senders} source QPs per receiving QP (1 on RC,
     * the ranks on connectionless devices) and {@code messageCredits} tagged-message credits (0
     * where messages do not run): each source's share of the receives, less the at most three per
     * message credit that tagged messages use (data, credits, rendezvous completions), halved
     * between that source's requests and the replies to this side's requests to it. Below 1 the
     * emulation cannot run without receiver-not-ready retries.
     */
    static int credits(int recvSlots, int senders, int messageCredits) {
        return (recvSlots / senders - 3 * messageCredits) / 2;
    }

    /** Whether thread slot {@code thread} has used up its credits towards rank {@code rank}. */
    boolean noCredit(int thread, int rank) {
        return inFlight.get(thread * ranks + rank) >= credits;
    }

    /** A free staging slot of {@code thread} from {@code from} on, or -1 when all are in flight. */
    int freeSlot(int thread, int from) {
        for (int k = 0; k < SLOTS; k++) {
            int s = (from + k) & (SLOTS - 1);
            if (busy.get(thread * SLOTS + s) == 0) {
                return s;
            }
        }
        return -1;
    }

    /**
     * Write the request into {@code thread}'s staging slot {@code slot}, mark it in flight and
     * stage its send on {@code e} (directed at the target). Returns the staging outcome; the slot
     * is free again unless it is {@link Endpoint#OK}.
     */
    int request(Endpoint e, int lkey, int thread, int slot, int me, int target, byte op, int window, long offset, long a,
                long b, int resultWindow, long resultOffset) {
        long at = ((long) thread * SLOTS + slot) * SLOT_BYTES;
        MemorySegment m = staging;
        m.set(ValueLayout.JAVA_INT_UNALIGNED, at, MAGIC);
        m.set(ValueLayout.JAVA_BYTE, at + 4, op);
        m.set(ValueLayout.JAVA_BYTE, at + 5, (byte) 0);
        m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at + 6, (short) window);
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 8, offset);
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 16, a);
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 24, b);
        m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at + 32, (short) resultWindow);
        m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at + 34, (short) thread);
        m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at + 36, (short) slot);
        m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at + 38, (short) me);
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 40, resultOffset);
        slotTarget[thread * SLOTS + slot] = target;
        inFlight.getAndIncrement(thread * ranks + target);
        busy.set(thread * SLOTS + slot, 1);
        int rc = e.stageRequest(m.address() + at, MESSAGE_BYTES, lkey, IMM_REQUEST);
        if (rc == Endpoint.OK) {
            issued[thread]++;
        } else {
            busy.set(thread * SLOTS + slot, 0);
            inFlight.getAndDecrement(thread * ranks + target);
        }
        return rc;
    }

    @Override
    public boolean receive(Endpoint e, int slot, MemorySegment region, long offset, int imm, int length) {
        if (length != MESSAGE_BYTES || (imm != IMM_REQUEST && imm != IMM_REPLY)
                || region.get(ValueLayout.JAVA_INT_UNALIGNED, offset) != MAGIC) {
            return false;
        }
        if (imm == IMM_REQUEST) {
            int rank = Short.toUnsignedInt(region.get(ValueLayout.JAVA_SHORT_UNALIGNED, offset + 38));
            int thread = Short.toUnsignedInt(region.get(ValueLayout.JAVA_SHORT_UNALIGNED, offset + 34));
            int staged = Short.toUnsignedInt(region.get(ValueLayout.JAVA_SHORT_UNALIGNED, offset + 36));
            if (rank >= ranks || thread >= threads || staged >= SLOTS) {
                e.repostSlot(slot); // names no staging slot of this world: nobody waits for a reply
                return true;
            }
            long at = (((long) rank * threads + thread) * SLOTS + staged) * SLOT_BYTES;
            MemorySegment.copy(region, offset, replies, at, MESSAGE_BYTES);
            e.repostSlot(slot);
            serve(replies, at);
            e.reply(replies.address() + at, connectionless ? rank : 0);
        } else {
            settle(region, offset);
            e.repostSlot(slot);
        }
        return true;
    }

    /** Apply a request to this rank's window word and turn it into its reply, in place. */
    private void serve(MemorySegment m, long at) {
        int op = m.get(ValueLayout.JAVA_BYTE, at + 4);
        int id = Short.toUnsignedInt(m.get(ValueLayout.JAVA_SHORT_UNALIGNED, at + 6));
        long offset = m.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 8);
        long a = m.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 16);
        long b = m.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 24);
        MemorySegment w = id < WorldEndpoints.MAX_WINDOWS ? windows.get(id) : null;
        int status = WcStatus.SUCCESS;
        long old = 0;
        if (w == null || offset < 0 || offset > w.byteSize() - 8 || ((w.address() + offset) & 7) != 0) {
            status = WcStatus.REM_ACCESS_ERR;
        } else {
            switch (op) {
                case FETCH_ADD, ADD -> old = (long) WORD.getAndAdd(w, offset, a);
                case COMPARE_AND_SWAP -> old = (long) WORD.compareAndExchange(w, offset, a, b);
                case SWAP -> old = (long) WORD.getAndSet(w, offset, a);
                default -> status = WcStatus.REM_INV_REQ_ERR;
            }
        }
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 16, old);
        m.set(ValueLayout.JAVA_BYTE, at + 5, (byte) status);
    }

    /** Take a reply: the previous value into the result window, the staging slot freed, the reply counted. */
    private void settle(MemorySegment m, long at) {
        int thread = Short.toUnsignedInt(m.get(ValueLayout.JAVA_SHORT_UNALIGNED, at + 34));
        int slot = Short.toUnsignedInt(m.get(ValueLayout.JAVA_SHORT_UNALIGNED, at + 36));
        if (thread >= threads || slot >= SLOTS || busy.get(thread * SLOTS + slot) == 0) {
            return; // not a reply to anything this rank has in flight
        }
        int status = Byte.toUnsignedInt(m.get(ValueLayout.JAVA_BYTE, at + 5));
        int rw = Short.toUnsignedInt(m.get(ValueLayout.JAVA_SHORT_UNALIGNED, at + 32));
        if (status == WcStatus.SUCCESS && rw != NO_RESULT) {
            long ro = m.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 40);
            MemorySegment r = rw < WorldEndpoints.MAX_WINDOWS ? windows.get(rw) : null;
            if (r != null && ro >= 0 && ro <= r.byteSize() - 8) {
                r.set(ValueLayout.JAVA_LONG_UNALIGNED, ro, m.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 16));
            } else {
                status = WcStatus.LOC_PROT_ERR;
            }
        }
        if (status != WcStatus.SUCCESS) {
            error.compareAndSet(thread, 0, status);
        }
        int target = slotTarget[thread * SLOTS + slot]; // written before the busy mark that the check above read
        inFlight.getAndDecrement(thread * ranks + target);
        busy.set(thread * SLOTS + slot, 0);
        done.incrementAndGet(thread);
    }
}
