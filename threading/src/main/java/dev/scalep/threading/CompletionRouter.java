package dev.scalep.threading;

import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WorkCompletions;
import dev.scalep.verbs.counters.Counters;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.jctools.queues.SpscArrayQueue;
import org.jctools.util.PaddedAtomicLong;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Demultiplexes one CQ, possibly shared by several threads' QPs, into one single-producer ring per
 * owner. Whoever calls {@link #progress()} and wins the poll role (a CAS, never a wait) polls the
 * CQ and routes each completion by QP number: to the QP's fixed owner, or, for a QP several owners
 * share, to the owner named in the id ({@link WrIds#owner}). Send completions of a QP registered
 * with a {@link SendPath} are first retired through it, which returns their credits (unsignaled
 * requests included) and restores the staged id. Every completion of a routed QP reaches exactly one
 * owner ring, once. The only completions not delivered are those no owner can take, a wiring error:
 * a QP with no route, or an id naming an owner beyond the router's rings; they are counted in
 * {@link #unrouted()} (a send among them is still retired, so its credits return), and tests assert
 * that count is zero. A completion whose owner's ring is full is held for that owner (in its
 * order) and routing goes on for everyone else, so one owner that stops polling does not stop the
 * others; the held records are a pool of one ring's capacity shared by all owners, and only when
 * it is exhausted does routing wait for the slow owners (size owner rings for the signaled send and
 * receive completions one owner can have outstanding, and neither happens). Rings and holding
 * queues are JCTools SPSC queues of pooled records.
 *
 * <p>Thread-safety: {@link #progress()} and {@link #route} any thread; {@link #poll(int, Completion)}
 * only the owner's thread (one consumer per ring). The data path does not allocate or box.
 */
public final class CompletionRouter implements AutoCloseable {
    /** Where the completions of one QP go. */
    private static final class Route {
        final int owner;
        final SendPath path;

        Route(int owner, SendPath path) {
            this.owner = owner;
            this.path = path;
        }
    }

    private static final AtomicInteger SERIAL = new AtomicInteger();

    private final CompletionQueue cq;
    private final SpscCompletionRing[] rings;
    /** Counters of this CQ ({@link Counters}); written by the poll-role holder. */
    private final CqCounters counters = new CqCounters("cq" + SERIAL.incrementAndGet());
    private final Int2ObjectHashMap<Route> routes = new Int2ObjectHashMap<>();
    private final WorkCompletions batch;
    private final PaddedAtomicLong routed = new PaddedAtomicLong();
    private final PaddedAtomicLong unrouted = new PaddedAtomicLong();
    /** The poll role: 1 while a thread polls the CQ or changes the routing table. */
    private final PaddedAtomicLong role = new PaddedAtomicLong();
    // Poll-role state (the CAS on role orders it between holders).
    private int batchNext;
    private int batchCount;
    /** Completions held for owners whose ring was full, in each owner's order; records come from {@link #spare}. */
    private final SpscArrayQueue<Held>[] backlog;
    private final SpscArrayQueue<Held> spare;
    private int held;
    /**
     * Per owner, its held send completions (each retires through its path once delivered). A
     * completion retires every earlier request of its QP, other owners' included, so on a shared QP
     * a later completion of another owner can retire this owner's requests while this owner's own
     * completion still waits here: {@link #heldSends} tells the owner its work is not all in its
     * ring yet. One padded counter per owner; written by the poll-role holder (ordered stores, so an
     * owner that reads a later retirement also reads the count that was raised before it).
     */
    private final PaddedAtomicLong[] heldSendsOf;
    private int lastError;

    /** A completion routed to an owner whose ring was full, with what its delivery must retire. */
    private static final class Held {
        final RoutedCompletion c = new RoutedCompletion();
        /** The send path it retires through once delivered (null for receives), and its provider id. */
        SendPath path;
        long providerWrId;
    }

    /**
     * @param owners       number of owner rings
     * @param ringCapacity records per owner ring (rounded up to a power of two)
     * @param pollBatch    completions taken from the CQ per poll
     */
    public CompletionRouter(CompletionQueue cq, int owners, int ringCapacity, int pollBatch) {
        if (owners < 1 || owners > WrIds.MAX_OWNERS) {
            throw new IllegalArgumentException("owners must be in 1.." + WrIds.MAX_OWNERS + ": " + owners);
        }
        this.cq = cq;
        this.rings = new SpscCompletionRing[owners];
        for (int i = 0; i < owners; i++) {
            rings[i] = new SpscCompletionRing(ringCapacity);
        }
        this.batch = new WorkCompletions(Math.max(1, pollBatch));
        int spares = rings[0].capacity();
        this.spare = new SpscArrayQueue<>(spares);
        for (int i = 0; i < spares; i++) {
            spare.offer(new Held());
        }
        @SuppressWarnings("unchecked")
        SpscArrayQueue<Held>[] b = new SpscArrayQueue[owners];
        for (int i = 0; i < owners; i++) {
            b[i] = new SpscArrayQueue<>(spares);
        }
        this.backlog = b;
        this.heldSendsOf = new PaddedAtomicLong[owners];
        for (int i = 0; i < owners; i++) {
            heldSendsOf[i] = new PaddedAtomicLong();
        }
    }

    public CompletionQueue cq() {
        return cq;
    }

    public int owners() {
        return rings.length;
    }

    /**
     * Route completions of QP {@code qpNum}: to {@code owner}, or when {@code owner} is -1 to the
     * owner in each id; send completions are retired through {@code path} when it is not null.
     * Control path; takes the poll role to change the table.
     */
    public void route(int qpNum, int owner, SendPath path) {
        if (owner < -1 || owner >= rings.length) {
            throw new IllegalArgumentException("owner " + owner + " out of range 0.." + (rings.length - 1));
        }
        acquireRole();
        try {
            routes.put(qpNum, new Route(owner, path));
        } finally {
            role.set(0);
        }
    }

    /** Stop routing QP {@code qpNum} (after its completions are drained). Control path. */
    public void unroute(int qpNum) {
        acquireRole();
        try {
            routes.remove(qpNum);
        } finally {
            role.set(0);
        }
    }

    /** Control path: wait for the poll role (a poller holds it for one CQ batch at most). */
    private void acquireRole() {
        IdleStrategy idle = new BackoffIdleStrategy();
        while (!role.compareAndSet(0, 1)) {
            idle.idle();
        }
    }

    /**
     * Poll the CQ once if no other thread is doing so, and route what it returned. Returns the
     * number of completions routed, 0 when the role was busy or the CQ empty, or the CQ's negative
     * errno (overrun). Never blocks.
     */
    public int progress() {
        return progress(-1);
    }

    /**
     * {@link #progress()} by owner {@code poller}'s thread (-1: a thread that is no owner, or not
     * known): completions it routes to other owners are counted as routed away.
     */
    public int progress(int poller) {
        if (!role.compareAndSet(0, 1)) {
            return 0;
        }
        try {
            return progressHeld(poller);
        } finally {
            role.set(0);
        }
    }

    /** This CQ's counters. */
    public CqCounters counters() {
        return counters;
    }

    private int progressHeld(int poller) {
        int n = held > 0 ? deliverHeld() : 0;
        if (batchNext == batchCount) {
            int got = cq.poll(batch, batch.capacity());
            if (got < 0) {
                lastError = -got;
                return n > 0 ? n : got;
            }
            batchNext = 0;
            batchCount = got;
            if (Counters.ENABLED && got > 0) {
                counters.polls.add(1);
                counters.completions.add(got);
            }
        }
        while (batchNext < batchCount) {
            int i = batchNext;
            int qpn = batch.qpNum(i);
            Route r = routes.get(qpn);
            if (r == null) {
                batchNext++;
                unrouted.getAndAdd(1);
                if (Counters.ENABLED) {
                    counters.unrouted.add(1);
                }
                continue;
            }
            long providerWrId = batch.wrId(i);
            boolean recv = WrIds.isRecv(providerWrId);
            SendPath retireVia = recv ? null : r.path;
            // Deliver first, retire after: an owner that sees its requests retired (retired(owner)) then
            // finds every completion of theirs already in its ring (unless its ring was full: held).
            long wrId = retireVia != null ? retireVia.idOf(providerWrId) : providerWrId;
            int owner = r.owner >= 0 ? r.owner : WrIds.owner(wrId);
            if (owner >= rings.length) {
                batchNext++;
                if (retireVia != null) {
                    retireVia.retire(providerWrId);
                }
                unrouted.getAndAdd(1);
                if (Counters.ENABLED) {
                    counters.unrouted.add(1);
                }
                continue;
            }
            if (Counters.ENABLED && poller >= 0 && owner != poller) {
                counters.routedAway.add(1);
            }
            int status = batch.status(i);
            int opcode = status == 0 ? batch.opcode(i) : (recv ? WcOpcode.RECV : -1);
            int flags = (recv ? RoutedCompletion.RECV : 0) | (status == 0 && batch.hasImm(i) ? RoutedCompletion.WITH_IMM : 0);
            int len = status == 0 ? batch.byteLen(i) : 0;
            int imm = (flags & RoutedCompletion.WITH_IMM) != 0 ? batch.imm(i) : 0;
            long user = WrIds.user(wrId);
            SpscArrayQueue<Held> waiting = backlog[owner];
            boolean behind = !waiting.isEmpty(); // keep the owner's order
            if (!behind && rings[owner].offer(user, status, opcode, len, imm, qpn, flags)) {
                if (retireVia != null) {
                    retireVia.retire(providerWrId);
                }
                n++;
            } else {
                // The owner's ring is full: hold the completion for it and go on routing the others.
                Held h = spare.relaxedPoll();
                if (h == null) {
                    break; // every spare record is held: wait for the slow owners (nothing dropped)
                }
                h.c.set(user, status, opcode, len, imm, qpn, flags);
                h.path = retireVia;
                h.providerWrId = retireVia != null ? retireVia.stable(providerWrId) : providerWrId;
                waiting.offer(h);
                held++;
                if (retireVia != null) {
                    PaddedAtomicLong hs = heldSendsOf[owner];
                    hs.soVal(hs.lpVal() + 1);
                }
            }
            batchNext++;
        }
        if (n > 0) {
            routed.soVal(routed.lpVal() + n);
        }
        return n;
    }

    /** Move held completions into their owners' rings while they fit; returns how many moved. */
    private int deliverHeld() {
        int n = 0;
        for (int o = 0; o < backlog.length && held > 0; o++) {
            SpscArrayQueue<Held> waiting = backlog[o];
            Held h;
            while ((h = waiting.relaxedPeek()) != null) {
                RoutedCompletion c = h.c;
                if (!rings[o].offer(c.wrId, c.status, c.opcode, c.byteLen, c.imm, c.qpNum, c.flags)) {
                    break;
                }
                waiting.relaxedPoll();
                if (h.path != null) {
                    h.path.retire(h.providerWrId);
                    h.path = null;
                    PaddedAtomicLong hs = heldSendsOf[o];
                    hs.soVal(hs.lpVal() - 1); // after its retirement: never a moment with neither counted
                }
                spare.offer(h);
                held--;
                n++;
            }
        }
        return n;
    }

    /**
     * Send completions of {@code owner} held for it because its ring was full (any thread; a
     * snapshot). Its requests may count as retired before these reach its ring, when a later
     * completion of another owner of a shared QP retired them: an owner that waits for its work to
     * settle waits for this to be 0 too (the owner's polls deliver them).
     */
    public long heldSends(int owner) {
        return heldSendsOf[owner].lvVal();
    }

    /** Completions held for owners whose ring was full (poll-role holder's count; a snapshot). */
    public int held() {
        return held;
    }

    /** Owner {@code owner}'s thread: take its next completion into {@code out}; false when none. */
    public boolean poll(int owner, RoutedCompletion out) {
        return rings[owner].poll(out);
    }

    /** Owner's thread: its next completion, polling the CQ on its behalf when its ring is empty. */
    public boolean pollOrProgress(int owner, RoutedCompletion out) {
        SpscCompletionRing ring = rings[owner];
        if (ring.poll(out)) {
            return true;
        }
        progress(owner);
        return ring.poll(out);
    }

    /** The ring of one owner (its size is a snapshot any thread may read). */
    public SpscCompletionRing ring(int owner) {
        return rings[owner];
    }

    /** Completions delivered to owner rings so far. */
    public long routed() {
        return routed.get();
    }

    /** Completions no owner could take (a QP with no route, or an owner beyond the rings): dropped and counted, a wiring error. */
    public long unrouted() {
        return unrouted.get();
    }

    /** The errno of the last failed CQ poll (EIO: overrun), 0 if none. */
    public int lastError() {
        return lastError;
    }

    /** Frees the poll batch memory (not the CQ). */
    @Override
    public void close() {
        batch.close();
        counters.close();
    }
}
