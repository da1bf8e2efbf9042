package dev.scalep.endpoints;

import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.WcStatus;

import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One thread's reach into every rank of a world, its own included ({@link WorldEndpoints#acquire()}):
 * {@link #to(int)} names the rank (the only way to direct an endpoint of a world) and returns
 * the endpoint positioned at it, on which the
 * usual data-path calls post ({@code ep.to(r).write(...)}). On RC that is the thread's endpoint of
 * the per-peer manager for rank {@code r} (for this rank, of the loopback manager, whose QPs are
 * connected to themselves); on a connectionless device it is the thread's single endpoint with
 * rank {@code r}'s address handle (this rank's own address for itself) and buffers selected. Every
 * window operation and flush takes this rank as a target like any other: the loopback goes
 * through the device, so an atomic on a word of this rank's own window is atomic against the
 * other ranks' atomics on it. Thread-bound like
 * {@link Endpoint}; {@link #to} and {@link #poll} do not allocate.
 */
public final class RankEndpoint implements AutoCloseable {
    private final WorldEndpoints owner;
    private final int index;
    private final Endpoint[] byRank;
    private final Endpoint[] distinct;
    /** Turns of waits on one endpoint ({@link #waitOn}); the other endpoints are progressed every {@value #OTHERS_EVERY}th. */
    private int waitTurns;
    private static final int OTHERS_EVERY = 16;
    private final boolean shared;
    private final int me;
    private final Thread thread;
    /** Per rank: the QP index of the endpoint that reaches it, and its manager's ordinal times the QPs per manager. */
    private final int[] qpOf;
    private final int[] lkeyBase;
    private final int maxChunk;
    private final boolean writeImm;
    private final long scratch;
    private final boolean atomics;
    private final int[] scratchLkey;
    /** The atomics emulation (devices without RDMA atomics), else null. */
    private final AtomicEmulation emulation;
    private int emulationCursor;
    /** Windows (by id) named by an operation since this thread's endpoints were last quiet; read by a closing thread. */
    private final AtomicLongArray touched = new AtomicLongArray(WorldEndpoints.MAX_WINDOWS / 64);
    private final long[] touchedHere = new long[WorldEndpoints.MAX_WINDOWS / 64];
    private boolean anyTouched;
    private int next;
    private boolean released;
    /** The rank's tagged messages (null where the receive slots leave no room for them). */
    MessageHub hub;
    /** The slot's guard against the rank's progress thread ({@link ProgressMode#THREAD}), else null. */
    final SlotGuard guard;
    /** How this slot's waits idle (reset at the start of each): {@link WorldEndpoints#oversubscribed()}. */
    private final IdleStrategy idle;

    RankEndpoint(WorldEndpoints owner, int index, Endpoint[] byRank, boolean shared, int me, int[] managerOrdinal,
                 int qpsPerManager, int maxChunk, boolean writeImm, long scratch, int[] scratchLkey,
                 AtomicEmulation emulation, SlotGuard guard) {
        this.owner = owner;
        this.guard = guard;
        this.index = index;
        this.byRank = byRank;
        this.shared = shared;
        this.me = me;
        this.thread = Thread.currentThread();
        this.maxChunk = maxChunk;
        this.writeImm = writeImm;
        this.scratch = scratch;
        this.atomics = owner.atomics();
        this.scratchLkey = scratchLkey;
        this.emulation = emulation;
        this.idle = owner.waitIdle();
        List<Endpoint> d = new ArrayList<>();
        for (Endpoint e : byRank) {
            if (e != null && !d.contains(e)) {
                d.add(e);
            }
        }
        this.distinct = d.toArray(new Endpoint[0]);
        this.qpOf = new int[byRank.length];
        this.lkeyBase = new int[byRank.length];
        for (int r = 0; r < byRank.length; r++) {
            if (byRank[r] != null) {
                qpOf[r] = byRank[r].qpIndex();
                lkeyBase[r] = managerOrdinal[r] * qpsPerManager;
            }
        }
    }

    /**
     * The endpoint that reaches rank {@code rank}, directed at it; {@code rank} may be this rank
     * (the thread's loopback endpoint, whose peer buffers are its own).
     */
    public Endpoint to(int rank) {
        if (rank < 0 || rank >= byRank.length) {
            throw new IllegalArgumentException("rank " + rank + " is not a rank of a world of " + byRank.length
                    + " (this is rank " + me + ")");
        }
        Endpoint e = byRank[rank];
        return shared ? e.to(rank) : e;
    }

    /** Ranks of the world this endpoint reaches. */
    public int ranks() {
        return byRank.length;
    }

    /**
     * This thread slot's tagged messages ({@link Messages}): sends reach the same slot of the
     * target rank. Throws {@link UnsupportedOperationException} when the world's receive slots
     * leave no room for them (too few per source, or smaller than a message header).
     */
    public Messages messages() {
        if (hub == null) {
            throw new UnsupportedOperationException("messages: " + owner.messagesRefusal());
        }
        return hub.slots[index].bind(this);
    }

    /**
     * This thread slot's {@link Collectives} among the same slot of every rank, staging through
     * {@value WorldEndpoints#COLLECTIVE_SCRATCH} bytes of the runtime's own window: nothing to
     * allocate or lay out. The same object (and call sequence) stays with the slot from one acquire
     * to the next, so every rank's slot keeps calling the same collectives in the same order. Throws
     * as {@link #messages()} does where tagged messages cannot run.
     */
    public Collectives collectives() {
        messages();
        return owner.collectives(this);
    }

    /**
     * This thread slot's active messages ({@link ActiveMessages}): handlers registered by id, run
     * in the destination slot's progress. They share the slot's {@link #messages()} sequence and
     * credits, and throw as it does where the receive slots leave no room.
     */
    public ActiveMessages activeMessages() {
        return messages().active();
    }

    /** This rank. */
    int rank() {
        return me;
    }

    /**
     * Whether rank {@code rank} still answers: an 8-byte RDMA read of its part of the barrier window
     * into this slot's probe word of it (a word nothing else uses), flushed
     * for at most {@code timeoutNanos}. False only when the device failed it (a peer that is gone
     * completes it with a retry or transport error); true when it completed, took longer, or could
     * not be posted (a device without RDMA read: nothing to tell).
     */
    boolean answers(int rank, long timeoutNanos) {
        if (rank == me) {
            return true;
        }
        Window bw = owner.barrierWindow();
        long mine = 8L * ((long) byRank.length * owner.threads() + owner.threads() + index);
        int rc;
        long deadline = System.nanoTime() + timeoutNanos;
        while ((rc = get(rank, bw, 0, bw, mine, 8)) == Endpoint.BACK_PRESSURED) {
            waitOn(to(rank));
            if (System.nanoTime() - deadline > 0) {
                return true;
            }
        }
        if (rc != Endpoint.OK) {
            return true;
        }
        return flush(rank, Math.max(0, deadline - System.nanoTime())) || firstErrorStatus(rank) == 0;
    }

    /** Index into the keys of memory registered on every PD ({@code lkey[o * qps + k]}) for the endpoint reaching {@code rank}. */
    int keyIndex(int rank) {
        return lkeyBase[rank] + qpOf[rank];
    }

    /** How this slot's waits idle; the waiting method resets it first. Only the slot's thread uses it. */
    IdleStrategy idle() {
        return idle;
    }

    /** This thread's slot, 0..threads-1: it is connected to the same slot on every other rank. */
    public int index() {
        return index;
    }

    /** Take one completion of any of this thread's endpoints into {@code out}; false when none is waiting. */
    public boolean poll(Completion out) {
        SlotGuard g = guard;
        if (g == null) {
            return pollEntered(out);
        }
        g.enter();
        try {
            return pollEntered(out);
        } finally {
            g.exit();
        }
    }

    private boolean pollEntered(Completion out) {
        for (int i = 0; i < distinct.length; i++) {
            Endpoint e = distinct[next];
            next = next + 1 == distinct.length ? 0 : next + 1;
            if (e.poll(out)) {
                return true;
            }
        }
        return false;
    }

    /** Flush and wait until everything posted to every rank has completed, or {@code timeoutNanos} pass. */
    public boolean drain(long timeoutNanos) {
        SlotGuard g = guard;
        if (g == null) {
            return drainEntered(timeoutNanos);
        }
        g.enter();
        try {
            return drainEntered(timeoutNanos);
        } finally {
            g.exit();
        }
    }

    private boolean drainEntered(long timeoutNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        for (Endpoint e : distinct) {
            if (!e.drain(Math.max(0, deadline - System.nanoTime()))) {
                return false;
            }
        }
        return true;
    }

    Endpoint[] distinct() {
        return distinct;
    }

    Thread thread() {
        return thread;
    }

    /** Whether an operation of this thread named window {@code id} since its endpoints were last quiet. */
    boolean touched(int id) {
        return (touched.get(id >>> 6) & (1L << id)) != 0;
    }

    // ---- windows -------------------------------------------------------------------------------

    /**
     * RDMA write {@code length} bytes at {@code sourceOffset} of this rank's part of {@code source}
     * into rank {@code rank}'s part of {@code target} at {@code targetOffset}. Any length: above the
     * largest single request (1 GiB) the put is split, and a split
     * put waits through back-pressure between its pieces instead of returning it.
     */
    public int put(int rank, Window target, long targetOffset, Window source, long sourceOffset, long length) {
        return transfer("put", Opcode.RDMA_WRITE, rank, target, targetOffset, source, sourceOffset, length);
    }

    /**
     * RDMA read {@code length} bytes at {@code sourceOffset} of rank {@code rank}'s part of
     * {@code source} into this rank's part of {@code destination} at {@code destinationOffset};
     * the bytes are there once a flush to {@code rank} returned true. Any length, as {@link #put}.
     */
    public int get(int rank, Window source, long sourceOffset, Window destination, long destinationOffset, long length) {
        return transfer("get", Opcode.RDMA_READ, rank, source, sourceOffset, destination, destinationOffset, length);
    }

    /**
     * A put whose arrival the target can wait for: one RDMA write with immediate data carrying
     * {@code value}, which consumes a receive of the endpoint it reaches on rank {@code rank} (the
     * endpoint with this one's {@link #index()}, or one of the endpoints sharing its QP) and shows
     * there through {@link #pollNotification}. When the target sees the notification, this put's
     * bytes are in place; puts before it to the same rank are too on in-order (RC) devices, not on
     * EFA, whose SRD delivers out of order. At most 1 GiB (one
     * request). Needs a device with RDMA write with immediate.
     */
    public int putNotify(int rank, Window target, long targetOffset, Window source, long sourceOffset, int length, int value) {
        SlotGuard g = guard;
        if (g == null) {
            return putNotifyEntered(rank, target, targetOffset, source, sourceOffset, length, value);
        }
        g.enter();
        try {
            return putNotifyEntered(rank, target, targetOffset, source, sourceOffset, length, value);
        } finally {
            g.exit();
        }
    }

    private int putNotifyEntered(int rank, Window target, long targetOffset, Window source, long sourceOffset, int length,
                         int value) {
        if (!writeImm) {
            throw new IllegalStateException("putNotify: the device has no RDMA write with immediate (nothing posted)");
        }
        Endpoint e = to(rank);
        e.checkOwnerFor("putNotify");
        target.checkRange("putNotify", rank, targetOffset, length);
        source.checkRange("putNotify", me, sourceOffset, length);
        if (length > maxChunk) {
            throw new IllegalArgumentException("putNotify: length " + length + " is above one request's "
                    + maxChunk + " bytes (nothing posted)");
        }
        touch(target, source, "putNotify");
        return e.stageWindow(Opcode.RDMA_WRITE_WITH_IMM, source.localAddress + sourceOffset, length,
                source.lkey[lkeyBase[rank] + qpOf[rank]], target.address[rank] + targetOffset,
                target.rkey[rank * target.qps + qpOf[rank]], value);
    }

    private int transfer(String name, Opcode op, int rank, Window remote, long remoteOffset, Window local, long localOffset, long length) {
        SlotGuard g = guard;
        if (g == null) {
            return transferEntered(name, op, rank, remote, remoteOffset, local, localOffset, length);
        }
        g.enter();
        try {
            return transferEntered(name, op, rank, remote, remoteOffset, local, localOffset, length);
        } finally {
            g.exit();
        }
    }

    private int transferEntered(String name, Opcode op, int rank, Window remote, long remoteOffset, Window local,
                         long localOffset, long length) {
        Endpoint e = to(rank);
        e.checkOwnerFor(name);
        remote.checkRange(name, rank, remoteOffset, length);
        local.checkRange(name, me, localOffset, length);
        MemorySegment part = remote.mapped[rank];
        if (part != null && idleTo(e)) {
            remote.checkOpen(name);
            local.checkOpen(name);
            MemorySegment mine = local.localView;
            try {
                if (op == Opcode.RDMA_WRITE) {
                    if (length == Long.BYTES) { // a word: one load and one store, not the bulk copy's checks
                        part.set(ValueLayout.JAVA_LONG_UNALIGNED, remoteOffset, mine.get(ValueLayout.JAVA_LONG_UNALIGNED, localOffset));
                    } else {
                        MemorySegment.copy(mine, localOffset, part, remoteOffset, length);
                    }
                    VarHandle.releaseFence(); // later stores (a flag the target waits for) stay after the bytes
                } else {
                    VarHandle.acquireFence();
                    if (length == Long.BYTES) {
                        mine.set(ValueLayout.JAVA_LONG_UNALIGNED, localOffset, part.get(ValueLayout.JAVA_LONG_UNALIGNED, remoteOffset));
                    } else {
                        MemorySegment.copy(part, remoteOffset, mine, localOffset, length);
                    }
                }
            } catch (IllegalStateException closing) {
                throw closedUnder(name, remote, local, closing, NOTHING_DONE);
            }
            return Endpoint.OK;
        }
        touch(remote, local, name);
        if (length == 0) {
            return Endpoint.OK;
        }
        int k = qpOf[rank];
        int lk = local.lkey[lkeyBase[rank] + k];
        int rk = remote.rkey[rank * remote.qps + k];
        long laddr = local.localAddress + localOffset;
        long raddr = remote.address[rank] + remoteOffset;
        if (length <= maxChunk) {
            return e.stageWindow(op, laddr, (int) length, lk, raddr, rk, 0);
        }
        for (long done = 0; done < length; ) {
            int n = (int) Math.min(maxChunk, length - done);
            int rc;
            while ((rc = e.stageWindow(op, laddr + done, n, lk, raddr + done, rk, 0)) == Endpoint.BACK_PRESSURED) {
                waitOn(e);
                Thread.onSpinWait();
            }
            if (rc != Endpoint.OK) {
                return rc;
            }
            done += n;
        }
        return Endpoint.OK;
    }

    /**
     * 64-bit fetch-and-add on the 8-byte aligned word at {@code offset} of rank {@code rank}'s part
     * of {@code target}: the word's value before the add lands at {@code resultOffset} of this
     * rank's part of {@code result} (host byte order) once a flush to {@code rank} returned true.
     * Atomic against every other atomic on the same word, from any rank, thread or process, and
     * against nothing else: a put, a get or a CPU store to the word may interleave with it (the verbs
     * rule).
     *
     * <p>On a device without RDMA atomics (EFA: {@code atomic_cap} NONE) every atomic is emulated
     * ({@link AtomicEmulation}): a request message to rank {@code rank}, which one of its threads
     * applies to the word with a CPU atomic instruction when it progresses (any of
     * {@link #flush}, {@link #progress}, {@link #poll}, {@link #pollNotification}) and answers with
     * the previous value; the flush waits for the answer. It is slower than a NIC atomic (a round
     * trip through the target's CPU, and at most {@value AtomicEmulation#SLOTS} in flight per
     * thread and as many per target rank as the receive slots leave credits for
     * ({@link WorldEndpoints#emulationCredits()}): beyond that the call returns
     * {@link Endpoint#BACK_PRESSURED}), and it needs the
     * target to progress: a target thread that computes, sleeps or waits in a barrier without
     * progressing stalls the atomics that reach it (at levels where threads share a QP, the reply
     * can reach any thread sharing the initiator's, which must progress too). So before a thread
     * stops progressing, every thread that may still send it an atomic must have flushed: e.g.
     * each thread flushes, then marks itself done with a put and keeps calling {@link #progress}
     * until gets show every thread done (puts and gets need no target thread). Emulated atomics are
     * atomic against each other (the target process applies all of them); a window's memory on
     * such a device has no other atomics.
     */
    public int fetchAdd(int rank, Window target, long offset, long addend, Window result, long resultOffset) {
        SlotGuard g = guard;
        if (g == null) {
            return fetchAddEntered(rank, target, offset, addend, result, resultOffset);
        }
        g.enter();
        try {
            return fetchAddEntered(rank, target, offset, addend, result, resultOffset);
        } finally {
            g.exit();
        }
    }

    private int fetchAddEntered(int rank, Window target, long offset, long addend, Window result, long resultOffset) {
        Endpoint e = atomicTarget("fetchAdd", rank, target, offset);
        result.checkRange("fetchAdd result", me, resultOffset, 8);
        MemorySegment part = target.mapped[rank];
        if (part != null && idleTo(e)) {
            target.checkOpen("fetchAdd");
            result.checkOpen("fetchAdd");
            long previous;
            try {
                previous = (long) WORD.getAndAdd(part, offset, addend);
            } catch (IllegalStateException closing) {
                throw closedUnder("fetchAdd", target, result, closing, NOTHING_DONE);
            }
            storeResult("fetchAdd", target, result, resultOffset, previous);
            return Endpoint.OK;
        }
        touch(target, result, "fetchAdd");
        if (emulation != null) {
            return emulated(e, rank, AtomicEmulation.FETCH_ADD, target, offset, addend, 0, result.id, resultOffset);
        }
        int k = qpOf[rank];
        return e.stageAtomic(Opcode.ATOMIC_FETCH_AND_ADD, result.localAddress + resultOffset, result.lkey[lkeyBase[rank] + k],
                target.address[rank] + offset, target.rkey[rank * target.qps + k], addend, 0);
    }

    /**
     * 64-bit compare-and-swap: the word at {@code offset} becomes {@code desired} if it held
     * {@code expected}; its previous value lands at {@code resultOffset} of {@code result} (equal to
     * {@code expected} when the swap happened). Atomicity, alignment and devices as {@link #fetchAdd}.
     */
    public int compareAndSwap(int rank, Window target, long offset, long expected, long desired, Window result, long resultOffset) {
        SlotGuard g = guard;
        if (g == null) {
            return compareAndSwapEntered(rank, target, offset, expected, desired, result, resultOffset);
        }
        g.enter();
        try {
            return compareAndSwapEntered(rank, target, offset, expected, desired, result, resultOffset);
        } finally {
            g.exit();
        }
    }

    private int compareAndSwapEntered(int rank, Window target, long offset, long expected, long desired, Window result,
                              long resultOffset) {
        Endpoint e = atomicTarget("compareAndSwap", rank, target, offset);
        result.checkRange("compareAndSwap result", me, resultOffset, 8);
        MemorySegment part = target.mapped[rank];
        if (part != null && idleTo(e)) {
            target.checkOpen("compareAndSwap");
            result.checkOpen("compareAndSwap");
            long previous;
            try {
                previous = (long) WORD.compareAndExchange(part, offset, expected, desired);
            } catch (IllegalStateException closing) {
                throw closedUnder("compareAndSwap", target, result, closing, NOTHING_DONE);
            }
            storeResult("compareAndSwap", target, result, resultOffset, previous);
            return Endpoint.OK;
        }
        touch(target, result, "compareAndSwap");
        if (emulation != null) {
            return emulated(e, rank, AtomicEmulation.COMPARE_AND_SWAP, target, offset, expected, desired, result.id,
                    resultOffset);
        }
        int k = qpOf[rank];
        return e.stageAtomic(Opcode.ATOMIC_CMP_AND_SWP, result.localAddress + resultOffset, result.lkey[lkeyBase[rank] + k],
                target.address[rank] + offset, target.rkey[rank * target.qps + k], expected, desired);
    }

    /**
     * Non-fetching 64-bit add ({@code shmem_atomic_add}): a fetch-and-add whose result goes to this
     * thread's scratch word, so nothing to read; complete after a flush. As {@link #fetchAdd} otherwise.
     */
    public int add(int rank, Window target, long offset, long addend) {
        SlotGuard g = guard;
        if (g == null) {
            return addEntered(rank, target, offset, addend);
        }
        g.enter();
        try {
            return addEntered(rank, target, offset, addend);
        } finally {
            g.exit();
        }
    }

    private int addEntered(int rank, Window target, long offset, long addend) {
        Endpoint e = atomicTarget("add", rank, target, offset);
        MemorySegment part = target.mapped[rank];
        if (part != null && idleTo(e)) {
            target.checkOpen("add");
            try {
                WORD.getAndAdd(part, offset, addend);
            } catch (IllegalStateException closing) {
                throw closedUnder("add", target, target, closing, NOTHING_DONE);
            }
            return Endpoint.OK;
        }
        touch(target, "add");
        if (emulation != null) {
            return emulated(e, rank, AtomicEmulation.ADD, target, offset, addend, 0, AtomicEmulation.NO_RESULT, 0);
        }
        int k = qpOf[rank];
        return e.stageAtomic(Opcode.ATOMIC_FETCH_AND_ADD, scratch, scratchLkey[lkeyBase[rank] + k],
                target.address[rank] + offset, target.rkey[rank * target.qps + k], addend, 0);
    }

    /**
     * 64-bit swap, atomic against the other atomics on the word: verbs has no swap, so this is a
     * compare-and-swap loop (read the word with a fetch-and-add of 0, then compare-and-swap until
     * the word held what was read; under the emulation of a device without RDMA atomics, one
     * swap request), and it blocks: it flushes to {@code rank} after each step and
     * returns once the swap happened, with the previous value at {@code resultOffset} of
     * {@code result}. Returns {@link Endpoint#OK}, the errno with which the device refused a step,
     * or {@code EIO} when a step failed or did not complete in 60 s ({@link #firstErrorStatus(int)}).
     */
    public int swap(int rank, Window target, long offset, long value, Window result, long resultOffset) {
        SlotGuard g = guard;
        if (g == null) {
            return swapEntered(rank, target, offset, value, result, resultOffset);
        }
        g.enter();
        try {
            return swapEntered(rank, target, offset, value, result, resultOffset);
        } finally {
            g.exit();
        }
    }

    private int swapEntered(int rank, Window target, long offset, long value, Window result, long resultOffset) {
        MemorySegment part = target.mapped[rank];
        if (part != null) {
            Endpoint e = atomicTarget("swap", rank, target, offset);
            result.checkRange("swap result", me, resultOffset, 8);
            if (idleTo(e)) {
                target.checkOpen("swap");
                result.checkOpen("swap");
                long previous;
                try {
                    previous = (long) WORD.getAndSet(part, offset, value);
                } catch (IllegalStateException closing) {
                    throw closedUnder("swap", target, result, closing, NOTHING_DONE);
                }
                storeResult("swap", target, result, resultOffset, previous);
                return Endpoint.OK;
            }
            touch(target, result, "swap");
        }
        if (emulation != null) {
            Endpoint e = atomicTarget("swap", rank, target, offset);
            result.checkRange("swap result", me, resultOffset, 8);
            touch(target, result, "swap");
            int rc;
            while ((rc = emulated(e, rank, AtomicEmulation.SWAP, target, offset, value, 0, result.id, resultOffset))
                    == Endpoint.BACK_PRESSURED) {
                Thread.onSpinWait();
            }
            if (rc != Endpoint.OK) {
                return rc;
            }
            return flush(rank) ? Endpoint.OK : Errno.EIO;
        }
        int rc = blocking(fetchAdd(rank, target, offset, 0, result, resultOffset), rank, target, offset, 0, 0, result,
                resultOffset, false);
        if (rc != Endpoint.OK) {
            return rc;
        }
        long seen = result.local().get(ValueLayout.JAVA_LONG, resultOffset);
        for (;;) {
            rc = blocking(compareAndSwap(rank, target, offset, seen, value, result, resultOffset), rank, target, offset,
                    seen, value, result, resultOffset, true);
            if (rc != Endpoint.OK) {
                return rc;
            }
            long now = result.local().get(ValueLayout.JAVA_LONG, resultOffset);
            if (now == seen) {
                return Endpoint.OK;
            }
            seen = now;
        }
    }

    /** Retry {@code rc}'s operation through back-pressure, then flush to {@code rank}. */
    private int blocking(int rc, int rank, Window target, long offset, long expected, long desired, Window result,
                         long resultOffset, boolean cas) {
        while (rc == Endpoint.BACK_PRESSURED) {
            waitOn(to(rank));
            rc = cas ? compareAndSwap(rank, target, offset, expected, desired, result, resultOffset)
                    : fetchAdd(rank, target, offset, 0, result, resultOffset);
        }
        if (rc != Endpoint.OK) {
            return rc;
        }
        return flush(rank) ? Endpoint.OK : Errno.EIO;
    }

    private Endpoint atomicTarget(String op, int rank, Window target, long offset) {
        Endpoint e = to(rank);
        e.checkOwnerFor(op);
        if (!atomics && emulation == null) {
            throw new UnsupportedOperationException(op + ": " + owner.atomicsRefusal() + " (nothing posted)");
        }
        target.checkRange(op, rank, offset, 8);
        if (((target.address[rank] + offset) & 7) != 0) {
            throw new IllegalArgumentException(op + ": offset " + offset + " of window " + target.id + " of rank " + rank
                    + " is not 8-byte aligned (address 0x" + Long.toHexString(target.address[rank] + offset)
                    + "; a 64-bit atomic needs an aligned word; nothing posted)");
        }
        return e;
    }

    /**
     * An emulated atomic (no RDMA atomics on the device): a request to {@code rank} from a free
     * staging slot of this thread, or {@link Endpoint#BACK_PRESSURED} after progressing when its
     * credits towards {@code rank} or all {@value AtomicEmulation#SLOTS} slots are in flight. Does
     * not allocate.
     */
    private int emulated(Endpoint e, int rank, byte op, Window target, long offset, long a, long b, int resultWindow,
                         long resultOffset) {
        int slot = emulation.noCredit(index, rank) ? -1 : emulation.freeSlot(index, emulationCursor);
        if (slot < 0) {
            // What holds the credits or slots may still be staged in a postlist: post it, or no
            // reply can come back to free them.
            for (Endpoint d : distinct) {
                d.postStagedNow();
            }
            progressAll();
            return Endpoint.BACK_PRESSURED;
        }
        int rc = emulation.request(e, emulation.stagingLkey[lkeyBase[rank] + qpOf[rank]], index, slot, me, rank, op,
                target.id, offset, a, b, resultWindow, resultOffset);
        if (rc == Endpoint.OK) {
            emulationCursor = slot + 1;
        }
        return rc;
    }

    private static final String NOTHING_DONE = "nothing done";
    private static final String RESULT_LOST = "the atomic took effect on the target word; its result was not stored";

    /** Where a mapped atomic took effect, its previous value into {@code result}'s view. */
    private static void storeResult(String op, Window target, Window result, long resultOffset, long previous) {
        try {
            result.localView.set(ValueLayout.JAVA_LONG_UNALIGNED, resultOffset, previous);
        } catch (IllegalStateException closing) {
            throw closedUnder(op, target, result, closing, RESULT_LOST);
        }
    }

    /**
     * A mapped operation met a window's views closed between its open check and its access
     * ({@link Window#closeViews}); {@code what} says how far it got.
     */
    private static IllegalStateException closedUnder(String op, Window a, Window b, IllegalStateException cause, String what) {
        Window w = !a.isOpen() || b.isOpen() ? a : b;
        return new IllegalStateException(op + ": window " + w.id() + " was closed under the operation (" + what + ")", cause);
    }

    /**
     * Whether an operation to a mapped part of a window may bypass endpoint {@code e}: nothing of
     * this thread's is staged or in flight on it, and no emulated atomic waits for its reply, so
     * completing this one at once cannot overtake an earlier one.
     */
    private boolean idleTo(Endpoint e) {
        return e.settledNow() && emulatedPending() == 0;
    }

    /** Emulated atomics of this thread whose reply has not been taken yet (0 on devices with atomics). */
    private long emulatedPending() {
        return emulation == null ? 0 : emulation.pending(index);
    }

    private void progressAll() {
        for (Endpoint e : distinct) {
            e.progressKeepingReceives();
        }
    }

    /**
     * Progress this thread's endpoints without taking anything from the caller: serve the
     * emulated atomics other ranks (and this one) sent to this rank's windows, post what waits
     * for room, keep notifications for {@link #pollNotification} and drop send completions (their
     * errors remembered). On a device without RDMA atomics (EFA) a thread must keep calling this,
     * {@link #flush}, {@link #poll} or {@link #pollNotification} while another may send atomics to
     * its rank; on other devices it is only a poll. Does not allocate.
     */
    public void progress() {
        SlotGuard g = guard;
        if (g == null) {
            progressEntered();
            return;
        }
        g.enter();
        try {
            progressEntered();
        } finally {
            g.exit();
        }
    }

    private void progressEntered() {
        for (Endpoint e : distinct) {
            e.checkOwnerFor("progress");
        }
        publishMessageCredits();
        progressAll();
    }

    /**
     * Store the consumed counts of this slot's tagged messages that a mapped sender reads and that
     * are not stored yet ({@link Messages#publishConsumed}): the calling thread is about to wait
     * (in progress, a barrier or a flush that waits), and a rank it waits for may itself wait for
     * those credits.
     */
    private void publishMessageCredits() {
        if (hub != null) {
            hub.slots[index].publishConsumed();
        }
    }

    /**
     * Barrier among every thread slot of every rank of the world ({@code threads × ranks}
     * participants; every slot must call it, each from the thread holding it), which progresses
     * while it waits, so the emulated atomics of a device without RDMA atomics keep being served.
     * On return every operation any participant issued before its call is complete at its
     * target, and this thread's endpoints are quiet (nothing staged, nothing outstanding).
     * Waits at most 60 s; returns false when that passed or an operation failed.
     */
    public boolean barrier() {
        return barrier(60_000_000_000L);
    }

    /** As {@link #barrier()}, giving up after {@code timeoutNanos}. */
    public boolean barrier(long timeoutNanos) {
        SlotGuard g = guard;
        if (g == null) {
            return barrierEntered(timeoutNanos);
        }
        g.enter();
        try {
            return barrierEntered(timeoutNanos);
        } finally {
            g.exit();
        }
    }

    private boolean barrierEntered(long timeoutNanos) {
        publishMessageCredits();
        long deadline = System.nanoTime() + timeoutNanos;
        Window bw = owner.barrierWindow();
        int ranks = byRank.length;
        int slots = owner.threads();
        long epoch = owner.nextBarrierEpoch(index);
        if (!flush(timeoutNanos)) {
            return false;
        }
        long source = 8L * ((long) ranks * slots + index);
        MemorySegment local = bw.local();
        local.set(ValueLayout.JAVA_LONG, source, epoch);
        long arrival = 8L * ((long) me * slots + index);
        for (int r = 0; r < ranks; r++) {
            int rc;
            while ((rc = put(r, bw, arrival, bw, source, 8)) == Endpoint.BACK_PRESSURED) {
                progressAll();
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
            }
            if (rc != Endpoint.OK) {
                return false;
            }
        }
        if (!flush(Math.max(0, deadline - System.nanoTime()))) {
            return false;
        }
        int n = ranks * slots;
        idle.reset();
        for (int i = 0; i < n; ) {
            if ((long) ARRIVAL.getVolatile(local, 8L * i) >= epoch) {
                i++;
                continue;
            }
            progressAll();
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            idle.idle();
        }
        // Everyone flushed before arriving, so no request reaches this rank any more: what is left
        // here is replies to emulated atomics that were served and not yet completed.
        for (Endpoint e : distinct) {
            if (!quiet(e, deadline)) {
                return false;
            }
        }
        clearTouchedIfQuiet();
        return true;
    }

    private static final VarHandle ARRIVAL = ValueLayout.JAVA_LONG.varHandle();
    /** An aligned word of a mapped window part (the alignment was checked at the call). */
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();

    /**
     * Note that an operation names window {@code w} (a volatile write the first time since the last
     * quiet flush), then check that it is open: a closing thread marks it closed first and reads
     * the marks after, so either it sees this operation or this operation sees it closed. Clearing a
     * mark needs no more than a release store ({@link #clearTouchedIfQuiet}): the operations it
     * covers are complete before it, and nothing after it must be ordered against the closer.
     */
    private void touch(Window w, String op) {
        touch(w, w, op);
    }

    /** {@link #touch(Window, String)} for the two windows of one operation, with one volatile write when both are fresh. */
    private void touch(Window a, Window b, String op) {
        int wa = a.id >>> 6;
        int wb = b.id >>> 6;
        long ba = 1L << a.id;
        long bb = 1L << b.id;
        boolean freshA = (touchedHere[wa] & ba) == 0;
        boolean freshB = (touchedHere[wb] & bb) == 0;
        if (freshA || freshB) {
            touchedHere[wa] |= ba;
            touchedHere[wb] |= bb;
            touched.set(wa, touchedHere[wa]);
            if (wb != wa) {
                touched.set(wb, touchedHere[wb]);
            }
            anyTouched = true;
        }
        if (!a.isOpen() || !b.isOpen()) {
            if (freshA) {
                touchedHere[wa] &= ~ba;
                touched.setRelease(wa, touchedHere[wa]);
            }
            if (freshB && (wb != wa || bb != ba)) {
                touchedHere[wb] &= ~bb;
                touched.setRelease(wb, touchedHere[wb]);
            }
            a.checkOpen(op);
            b.checkOpen(op);
        }
    }

    /**
     * Operations to rank {@code rank} not complete yet (on connectionless devices, where one
     * endpoint reaches every rank, to any rank): 0 means everything posted to it completed.
     * Progresses nothing.
     */
    public long pending(int rank) {
        Endpoint e = to(rank);
        return e.outstanding() + e.staged() + emulatedPending();
    }

    /**
     * Post what is staged and wait until every operation to rank {@code rank} is complete at the
     * target ({@code MPI_Win_flush}). On connectionless devices (EFA), where one endpoint reaches
     * every rank, this waits for the operations to every rank. Returns true when all completed and
     * none of this endpoint's operations ever failed; false when one failed (see
     * {@link #firstErrorStatus(int)}) or 60 s passed. Notifications that arrive meanwhile are kept
     * for {@link #pollNotification}, and their receives are given back at once on every endpoint
     * of this thread, not only the one waited for, so a peer's notified puts never wait for this
     * flush.
     */
    public boolean flush(int rank) {
        return flush(rank, 60_000_000_000L);
    }

    /** As {@link #flush(int)}, giving up after {@code timeoutNanos}. */
    public boolean flush(int rank, long timeoutNanos) {
        SlotGuard g = guard;
        if (g == null) {
            return flushEntered(rank, timeoutNanos);
        }
        g.enter();
        try {
            return flushEntered(rank, timeoutNanos);
        } finally {
            g.exit();
        }
    }

    private boolean flushEntered(int rank, long timeoutNanos) {
        Endpoint e = to(rank);
        e.checkOwnerFor("flush");
        if (e.settledNow() && emulatedPending() == 0) { // nothing to wait for: no clock read (~30 ns)
            boolean ok = e.firstErrorStatus() == 0 && e.settledRejected() == 0 && (emulation == null || emulation.error(index) == 0);
            clearTouchedIfQuiet(); // the thread's other endpoints may still carry operations naming its windows
            return ok;
        }
        publishMessageCredits();
        long deadline = System.nanoTime() + timeoutNanos;
        boolean ok = quiet(e, deadline);
        ok &= settled(deadline);
        clearTouchedIfQuiet();
        return ok;
    }

    /** Flush to every rank ({@code shmem_quiet}): as {@link #flush(int)} for each. */
    public boolean flush() {
        return flush(60_000_000_000L);
    }

    /** As {@link #flush()}, giving up after {@code timeoutNanos}. */
    public boolean flush(long timeoutNanos) {
        SlotGuard g = guard;
        if (g == null) {
            return flushEntered(timeoutNanos);
        }
        g.enter();
        try {
            return flushEntered(timeoutNanos);
        } finally {
            g.exit();
        }
    }

    private boolean flushEntered(long timeoutNanos) {
        if (emulatedPending() == 0) { // every endpoint settled too: nothing to wait for, no clock read (~30 ns)
            boolean ok = emulation == null || emulation.error(index) == 0;
            boolean settled = true;
            for (Endpoint e : distinct) {
                e.checkOwnerFor("flush");
                if (!e.settledNow()) {
                    settled = false;
                    break;
                }
                ok &= e.firstErrorStatus() == 0 && e.settledRejected() == 0;
            }
            if (settled) {
                clearTouched();
                return ok;
            }
        }
        publishMessageCredits();
        long deadline = System.nanoTime() + timeoutNanos;
        boolean ok = true;
        for (Endpoint e : distinct) {
            e.checkOwnerFor("flush");
            ok &= quiet(e, deadline);
        }
        ok &= settled(deadline);
        clearTouchedIfQuiet();
        return ok;
    }

    private boolean quiet(Endpoint e, long deadline) {
        if (e.settledNow()) {
            return e.firstErrorStatus() == 0 && e.settledRejected() == 0;
        }
        int rc;
        while ((rc = e.flush()) == Endpoint.BACK_PRESSURED) {
            waitOn(e);
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
        }
        while (e.outstanding() > 0) {
            waitOn(e);
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.onSpinWait();
        }
        return rc == Endpoint.OK && e.firstErrorStatus() == 0 && e.rejected() == 0;
    }

    /**
     * One turn of a wait for endpoint {@code e}: progress it, and at times this thread's other endpoints.
     * Their receives (peers' notified puts) are given back only when they are progressed, so a
     * thread that progressed only the endpoint it waits for could close a cycle of waits: three
     * ranks, each waiting for its notified puts to the next while the next waits on its endpoint to
     * a third, every put meeting receiver-not-ready at a receive queue nobody gives back. The
     * others are progressed every {@value #OTHERS_EVERY}th turn: a short wait (a get's round trip)
     * then costs what it did (progressing them at every turn made {@code ucp_get}'s latency 13 %
     * longer at two ranks), and a long one still gives their receives back within microseconds.
     */
    private void waitOn(Endpoint e) {
        if ((++waitTurns & (OTHERS_EVERY - 1)) != 0) {
            e.progressKeepingReceives();
        } else {
            progressAll();
        }
    }

    /** Wait for the replies of this thread's emulated atomics (true at once on devices with atomics). */
    private boolean settled(long deadline) {
        if (emulation == null) {
            return true;
        }
        idle.reset();
        while (emulatedPending() > 0) {
            progressAll();
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            idle.idle(); // the replies need other threads (the targets') to run
        }
        return emulation.error(index) == 0;
    }

    private void clearTouchedIfQuiet() {
        if (!anyTouched || emulatedPending() != 0) {
            return;
        }
        for (Endpoint e : distinct) {
            if (!e.settledNow() && (e.outstanding() != 0 || e.staged() != 0)) {
                return;
            }
        }
        clearTouched();
    }

    /** Clear this thread's window marks; only when nothing of it is in flight or waits for a reply. */
    private void clearTouched() {
        if (!anyTouched) {
            return;
        }
        for (int w = 0; w < touchedHere.length; w++) {
            if (touchedHere[w] != 0) {
                touchedHere[w] = 0;
                touched.setRelease(w, 0);
            }
        }
        anyTouched = false;
    }

    /** The first error status of the endpoint that reaches {@code rank} ({@link Endpoint#firstErrorStatus()}). */
    public int firstErrorStatus(int rank) {
        int s = to(rank).firstErrorStatus();
        return s != 0 || emulation == null ? s : emulation.error(index);
    }

    /**
     * Take the next notification that arrived on this thread's endpoints ({@link #putNotify} of a
     * peer) into {@code out}, and give its receive back to the device; false when none is waiting.
     * Completions of this thread's own {@link Endpoint} sends and writes met on the way are
     * dropped (their errors remembered): a thread that waits for notifications this way leaves
     * completion tracking to {@link #flush}. Does not allocate.
     */
    public boolean pollNotification(Notification out) {
        SlotGuard g = guard;
        if (g == null) {
            return pollNotificationEntered(out);
        }
        g.enter();
        try {
            return pollNotificationEntered(out);
        } finally {
            g.exit();
        }
    }

    private boolean pollNotificationEntered(Notification out) {
        for (int i = 0; i < distinct.length; i++) {
            Endpoint e = distinct[next];
            next = next + 1 == distinct.length ? 0 : next + 1;
            e.checkOwnerFor("pollNotification");
            if (e.pollReceive(out)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Give this thread's endpoints back to the world (call it from the thread that acquired them);
     * {@code try (RankEndpoint ep = world.acquire()) {...}} does it. Operations still in flight
     * (a thread that ends without flushing, or leaves its loop by an exception) are waited for
     * first, as {@link #flush()} does, for at most {@value #CLOSE_WAIT_SECONDS} s; an operation
     * that failed does not stop the release (its status stays in {@link #firstErrorStatus(int)}
     * for the next holder's flush). When operations are still outstanding after that wait (a peer
     * that does not answer), the slot is not given back and this throws
     * {@link IllegalStateException} naming them: a window they name then refuses to close rather
     * than free memory the device may still read or write. Idempotent once it succeeded.
     */
    @Override
    public void close() {
        SlotGuard g = guard;
        if (g == null) {
            closeEntered();
            return;
        }
        g.enter(); // the progress thread stops attending the slot inside: it never progresses a released one
        try {
            closeEntered();
        } finally {
            g.exit();
        }
    }

    private void closeEntered() {
        if (released) {
            return;
        }
        if (inFlight() != 0) {
            flush(CLOSE_WAIT_SECONDS * 1_000_000_000L);
            long left = inFlight();
            if (left != 0) {
                throw new IllegalStateException("release of thread slot " + index + " of rank " + me + " (thread '"
                        + thread.getName() + "'): " + left + " operations still in flight after " + CLOSE_WAIT_SECONDS
                        + " s (first error status " + WcStatus.name(firstError()) + "); the slot stays acquired, "
                        + "and the windows they name stay registered until they complete");
            }
        }
        owner.release(this);
        released = true;
        clearTouchedIfQuiet();
    }

    /** How long {@link #close()} waits for operations still in flight. */
    static final int CLOSE_WAIT_SECONDS = 30;

    /** Requests staged or outstanding on this thread's endpoints, and emulated atomics not answered yet. */
    private long inFlight() {
        long n = emulatedPending();
        for (Endpoint e : distinct) {
            n += e.outstanding() + e.staged();
        }
        return n;
    }

    private int firstError() {
        for (Endpoint e : distinct) {
            if (e.firstErrorStatus() != 0) {
                return e.firstErrorStatus();
            }
        }
        return emulation == null ? 0 : emulation.error(index);
    }
}
