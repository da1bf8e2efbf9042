package dev.scalep.threading;

import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;

/**
 * The send path of a QP used by one thread: fills the postlist and rings the doorbell directly,
 * without a lock (with a thread domain and parent domain the provider takes none either).
 * {@link #post} must be called by one thread at a time; the caller serialises it (the endpoint
 * layer binds it to its owner thread). {@link #retire} may run on the CQ poller's thread.
 *
 * <p>Besides {@link #post(SendBatch)} its one thread may stage requests straight into the native
 * records the path posts from ({@link #stage}, then {@link #postStaged}): no {@link SendBatch} in
 * between, each record written only where the request differs from what it held last, the wr_id
 * (the request's send-queue sequence) when the list is posted. The endpoint layer does this on a
 * per-thread QP. A thread uses one way or the other: {@link #post(SendBatch)} refuses to run while
 * staged requests wait.
 */
public final class ExclusivePoster extends AbstractSendPath {
    /** The longest signal interval {@link #moveSignals} steps by (so that no index overflows). */
    private static final int MAX_EVERY = 1 << 30;
    /** The caller's ids of the staged requests, by record. */
    private final long[] stagedIds;
    /** Staged requests that carry a header (refused at post when records hold one SGE). */
    private int stagedHeaders;
    /**
     * The template: the fields but id and flags of the last request {@link #stage} wrote or found
     * (connected QP, no header, not an atomic; {@code tOp} null when there is none), its generation,
     * and per record the generation of the template it holds.
     */
    private Opcode tOp;
    private long tLaddr;
    private int tLength;
    private int tLkey;
    private long tRaddr;
    private int tRkey;
    private int tImm;
    private long gen = 1;
    private final long[] recGen;
    /**
     * What the last run written from record 0 left there, while nothing else has written a record
     * since: records {@code [0, heldN)} hold the template of generation {@code heldGen} with flags
     * {@code heldFlags}, and {@link SendFlags#SIGNALED} added on record {@code heldFirst} and every
     * {@code heldEvery}-th after it ({@code heldN} 0: nothing known). A run that repeats it needs
     * only its signals moved ({@link #writeRun}).
     */
    private int heldN;
    private long heldGen;
    private int heldFlags;
    private int heldFirst;
    private int heldEvery;
    /**
     * Slot lists (null when the QP has none, {@link #slotLists}): native lists of their own whose
     * records carry their wr_ids for good ({@link SendCredits#slotWrId}), taken in turn by {@link
     * #postRun}, so that a run writes no id: the credits remember the run's first sequence and id
     * per slot instead. The slot template is the last run written into a slot (its operation,
     * addresses, keys, flags and length) with its generation; per slot, the generation of the
     * template its records {@code [0, sN)} hold (older: written whole before use), and the record
     * that carries {@link SendFlags#SIGNALED} first and the step to the next ones. A run that
     * repeats what its slot holds writes nothing at all.
     */
    private final SendWorkRequests[] slots;
    private int nextSlot;
    private Opcode sOp;
    private long sLaddr;
    private int sLength;
    private int sLkey;
    private long sRaddr;
    private int sRkey;
    private int sFlags;
    private int sN;
    private long sGen = 1;
    private final long[] slotGen;
    private final int[] slotSigFirst;
    private final int[] slotSigEvery;

    public ExclusivePoster(QueuePair qp, int maxBatch, int owners, int peers, PostFailureHandler onFailure) {
        super(qp, maxBatch, 0, owners, peers, onFailure, slotLists(qp, maxBatch, owners));
        this.stagedIds = new long[maxBatch()];
        this.recGen = new long[maxBatch()];
        int k = slotLists(qp, maxBatch, owners);
        this.slots = k == 0 ? null : new SendWorkRequests[k];
        for (int j = 0; j < k; j++) {
            SendWorkRequests w = new SendWorkRequests(maxBatch(), maxSge());
            w.fill(maxBatch());
            for (int r = 0; r < maxBatch(); r++) {
                w.wrId(r, SendCredits.slotWrId(j, r));
            }
            slots[j] = w;
        }
        this.slotGen = new long[k];
        this.slotSigFirst = new int[k];
        this.slotSigEvery = new int[k];
    }

    /**
     * How many slot lists a path of this QP gets: enough that a slot's last run has retired when its
     * turn comes again on a full queue ({@code depth / maxBatch + 1}), made even so that with a
     * signal every second postlist (the default) each slot keeps its signals where they are, when
     * ids are rewritten (an in-order device), the QP is connected, one owner's requests go through
     * it and runs can be longer than one; at most {@link #MAX_SLOT_LISTS}, else none.
     */
    static int slotLists(QueuePair qp, int maxBatch, int owners) {
        int depth = qp.attributes().maxSendWr();
        int b = Math.min(maxBatch, depth);
        if (owners != 1 || b < 2 || qp.type().connectionless() || !qp.pd().context().capabilities().inOrder()) {
            return 0;
        }
        int k = (depth / b + 2) & ~1;
        return k <= MAX_SLOT_LISTS ? k : 0;
    }

    /** How many slot lists this path has (0: none; {@link #slotLists}). */
    int slotListCount() {
        return slots == null ? 0 : slots.length;
    }

    /** Slot list {@code j}'s records (tests read what a run wrote). */
    SendWorkRequests slotList(int j) {
        return slots[j];
    }

    /** The most slot lists a path keeps (each holds {@link #maxBatch()} native records). */
    static final int MAX_SLOT_LISTS = 16;

    @Override
    protected int postAdmitted(SendBatch b, int n) {
        if (pending() != 0) {
            credits.give(n);
            throw new IllegalStateException("qp " + qp.qpNum() + ": post(SendBatch) while " + pending()
                    + " requests are staged in the path's records (post them with postStaged() first)");
        }
        gen++; // appendAll may rewrite records: none holds the template any more
        heldN = 0;
        appendAll(b, n);
        return postList();
    }

    /** Requests staged and not yet posted. */
    public int staged() {
        return pending();
    }

    /** Whether {@link #maxBatch()} requests are staged: {@link #stage} has no room until {@link #postStaged}. */
    public boolean stagedFull() {
        return pending() == maxBatch;
    }

    /**
     * Stage one request into the next record (the caller checked {@link #stagedFull()} is false):
     * {@code wrId} the caller's id, {@code flags} {@link SendFlags} bits, the other fields as in
     * {@link SendBatch}'s setters (zero where they do not apply). Nothing is taken or checked
     * here; {@link #postStaged} admits the staged requests as {@link #post(SendBatch)} admits a
     * batch. Does not allocate.
     *
     * <p>The common case is small enough for the JIT to inline into the caller: a request equal to
     * the last one staged (the template) in every field but its id and flags, going into a record
     * that was written with that template, needs only its flags compared, and when they differ
     * (the signal moves from one record to another) only the flags written; anything else goes to
     * {@link #stageChanged}, which writes what differs.
     */
    public void stage(long wrId, Opcode op, int flags, long headerAddr, int headerLength, long laddr, int length,
                      int lkey, long raddr, int rkey, int imm, long compareAdd, long swap, int peer) {
        int rec = pending();
        stagedIds[rec] = wrId;
        heldN = 0;
        if (op != tOp || laddr != tLaddr || length != tLength || lkey != tLkey || raddr != tRaddr || rkey != tRkey
                || imm != tImm || headerLength != 0 || recGen[rec] != gen) {
            stageChanged(rec, op, flags, headerAddr, headerLength, laddr, length, lkey, raddr, rkey, imm, compareAdd,
                    swap, peer);
        } else if (flagsOf(rec) != flags) {
            setFlags(rec, flags);
        }
        pending(rec + 1);
    }

    /**
     * {@link #stage} of a request with one SGE and no header or atomic operands (a write, read or
     * send): the same compares without the fields that are zero here, so the caller's fast path
     * stays small. Does not allocate.
     */
    public void stage(long wrId, Opcode op, int flags, long laddr, int length, int lkey, long raddr, int rkey, int imm,
                      int peer) {
        int rec = pending();
        stagedIds[rec] = wrId;
        heldN = 0;
        if (op != tOp || laddr != tLaddr || length != tLength || lkey != tLkey || raddr != tRaddr || rkey != tRkey
                || imm != tImm || recGen[rec] != gen) {
            stageChanged(rec, op, flags, 0, 0, laddr, length, lkey, raddr, rkey, imm, 0, 0, peer);
        } else if (flagsOf(rec) != flags) {
            setFlags(rec, flags); // the template with other flags (with q = 2p, the signaled record of every second list)
        }
        pending(rec + 1);
    }

    /**
     * Stage {@code n} requests (room for them is the caller's check) that differ only in their ids,
     * {@code firstId} and the ones after it, and in their flags: {@code flags} on each, with
     * {@link SendFlags#SIGNALED} added on the one at index {@code firstSignal} of the run and every
     * {@code every}-th after it (none when {@code firstSignal >= n}). The same records as {@code n}
     * calls of {@link #stage(long, Opcode, int, long, int, int, long, int, int, int)}, with the
     * template compared once. One SGE, no header, no immediate. Does not allocate.
     */
    public void stageRun(long firstId, int n, Opcode op, int flags, int firstSignal, int every, long laddr, int length,
                         int lkey, long raddr, int rkey, int peer) {
        int rec = pending();
        long[] ids = stagedIds;
        for (int i = 0; i < n; i++) {
            ids[rec + i] = firstId + i;
        }
        writeRun(rec, n, op, flags, firstSignal, every, laddr, length, lkey, raddr, rkey, peer);
        pending(rec + n);
    }

    /**
     * {@link #stageRun} and {@link #postStaged} in one pass, for a run that fills the records from
     * the first (nothing else staged; the caller checked): the credits are taken first, then the
     * records are written as {@link #stageRun} writes them, then the wr_ids in one loop of their own,
     * and the list is posted. Without credits for the run nothing is written or taken and {@link
     * #EAGAIN} returned (the caller keeps the run, to post it again or to {@link #stageRun} it).
     * Otherwise returns what {@link #postStaged} returns. Does not allocate.
     */
    public int postRun(long firstId, int n, Opcode op, int flags, int firstSignal, int every, long laddr, int length,
                       int lkey, long raddr, int rkey, int peer) {
        if (!credits.tryTake(n)) {
            return EAGAIN;
        }
        SendWorkRequests[] sl = slots;
        if (sl != null && firstSignal >= 0 && every > 0 && every <= MAX_EVERY) {
            int j = nextSlot;
            if (credits.slotFree(j)) {
                nextSlot = j + 1 == sl.length ? 0 : j + 1;
                credits.sequenceSlot(j, firstId, n);
                writeSlot(j, n, op, flags, firstSignal, every, laddr, length, lkey, raddr, rkey);
                return postSlot(sl[j], n, firstId);
            }
        }
        long seq = credits.sequenceRun(firstId, n);
        writeRun(0, n, op, flags, firstSignal, every, laddr, length, lkey, raddr, rkey, peer);
        list.wrIds(0, n, seq >= 0 ? seq : firstId); // each record's sequence, or the caller's id
        pending(n);
        return postList();
    }

    /**
     * Write records {@code [rec0, rec0 + n)} for a run (all but the ids). A run from record 0 that
     * repeats the last one written there ({@link #heldN}) only moves its signals: the records that
     * were signaled and are not lose the flag, the ones to be signaled gain it, and nothing else is
     * read or written. Otherwise, when each record already holds the template and the run is the
     * template, only the flags that differ, in a loop without a call, which the JIT keeps in
     * registers (a loop that may call {@link #stageChanged} spills its values at every record); else
     * record by record, writing what differs.
     */
    private void writeRun(int rec0, int n, Opcode op, int flags, int firstSignal, int every, long laddr, int length,
                          int lkey, long raddr, int rkey, int peer) {
        long g = gen;
        boolean template = op == tOp && laddr == tLaddr && length == tLength && lkey == tLkey && raddr == tRaddr
                && rkey == tRkey && tImm == 0;
        boolean signals = firstSignal >= 0 && every > 0 && every <= MAX_EVERY; // the patterns a repeated run tracks
        if (rec0 == 0 && n == heldN && template && heldGen == g && flags == heldFlags && signals) {
            if (firstSignal != heldFirst || every != heldEvery) {
                moveSignals(n, flags, firstSignal, every);
            }
            return;
        }
        heldN = 0;
        writeRecords(rec0, n, op, flags, firstSignal, every, laddr, length, lkey, raddr, rkey, peer, template);
        if (rec0 == 0 && signals && tOp != null) { // records [0, n) hold this run's template and flags now
            heldN = n;
            heldGen = gen;
            heldFlags = flags;
            heldFirst = firstSignal;
            heldEvery = every;
        }
    }

    /**
     * Write a run into slot list {@code j}'s records {@code [0, n)}, all but their ids: nothing when
     * they hold it already (the common case, small enough to inline into {@link #postRun}), only the
     * flags that move when only its signals differ, else every field.
     */
    private void writeSlot(int j, int n, Opcode op, int flags, int firstSignal, int every, long laddr, int length,
                           int lkey, long raddr, int rkey) {
        if (op != sOp || laddr != sLaddr || length != sLength || lkey != sLkey || raddr != sRaddr || rkey != sRkey
                || flags != sFlags || n != sN) {
            newSlotTemplate(n, op, flags, laddr, length, lkey, raddr, rkey);
        }
        if (slotGen[j] != sGen) {
            writeSlotWhole(j, n, op, flags, firstSignal, every, laddr, length, lkey, raddr, rkey);
        } else if (slotSigFirst[j] != firstSignal || slotSigEvery[j] != every) {
            moveSlotSignals(j, n, flags, firstSignal, every);
        }
    }

    /** The slot template becomes this run, of a new generation that no slot holds yet. */
    private void newSlotTemplate(int n, Opcode op, int flags, long laddr, int length, int lkey, long raddr, int rkey) {
        sOp = op;
        sLaddr = laddr;
        sLength = length;
        sLkey = lkey;
        sRaddr = raddr;
        sRkey = rkey;
        sFlags = flags;
        sN = n;
        sGen++;
    }

    /** Every field but the id of slot {@code j}'s records {@code [0, n)}, which then hold the template. */
    private void writeSlotWhole(int j, int n, Opcode op, int flags, int firstSignal, int every, long laddr, int length,
                                int lkey, long raddr, int rkey) {
        SendWorkRequests w = slots[j];
        int signal = firstSignal;
        for (int rec = 0; rec < n; rec++) {
            int f = flags;
            if (rec == signal) {
                f |= SendFlags.SIGNALED;
                signal += every;
            }
            w.opcode(rec, op).flags(rec, f);
            w.sges(rec, 0, 0, laddr, length, lkey);
            w.rdma(rec, raddr, rkey);
            w.imm(rec, 0);
        }
        slotGen[j] = sGen;
        slotSigFirst[j] = firstSignal;
        slotSigEvery[j] = every;
    }

    /** Move slot {@code j}'s signals (its records hold the template) to {@code firstSignal} and every {@code every}-th after it. */
    private void moveSlotSignals(int j, int n, int flags, int firstSignal, int every) {
        SendWorkRequests w = slots[j];
        for (int rec = slotSigFirst[j]; rec < n; rec += slotSigEvery[j]) {
            w.flags(rec, flags);
        }
        for (int rec = firstSignal; rec < n; rec += every) {
            w.flags(rec, flags | SendFlags.SIGNALED);
        }
        slotSigFirst[j] = firstSignal;
        slotSigEvery[j] = every;
    }

    /** Move the signals of the held run of {@code n} records to {@code firstSignal} and every {@code every}-th after it. */
    private void moveSignals(int n, int flags, int firstSignal, int every) {
        for (int rec = heldFirst; rec < n; rec += heldEvery) {
            setFlags(rec, flags);
        }
        for (int rec = firstSignal; rec < n; rec += every) {
            setFlags(rec, flags | SendFlags.SIGNALED);
        }
        heldFirst = firstSignal;
        heldEvery = every;
    }

    /** {@link #writeRun} record by record: {@code template} whether the run is the template. */
    private void writeRecords(int rec0, int n, Opcode op, int flags, int firstSignal, int every, long laddr,
                              int length, int lkey, long raddr, int rkey, int peer, boolean template) {
        int end = rec0 + n;
        long g = gen;
        long[] gens = recGen;
        boolean held = template; // every record holds the template already
        if (held) {
            for (int rec = rec0; rec < end; rec++) {
                held &= gens[rec] == g;
            }
        }
        int signal = rec0 + firstSignal;
        if (held) {
            for (int rec = rec0; rec < end; rec++) {
                int f = flags;
                if (rec == signal) {
                    f |= SendFlags.SIGNALED;
                    signal += every;
                }
                if (flagsOf(rec) != f) {
                    setFlags(rec, f);
                }
            }
            return;
        }
        boolean same = template;
        for (int rec = rec0; rec < end; rec++) {
            int f = flags;
            if (rec == signal) {
                f |= SendFlags.SIGNALED;
                signal += every;
            }
            if (same && gens[rec] == g) {
                if (flagsOf(rec) != f) {
                    setFlags(rec, f);
                }
            } else {
                stageChanged(rec, op, f, 0, 0, laddr, length, lkey, raddr, rkey, 0, 0, 0, peer);
                same = tOp != null; // the template is this request now, unless records here are written whole
                g = gen;
            }
        }
    }

    /** {@link #stage} of a request the record may not hold: write what differs, then update the template. */
    private void stageChanged(int rec, Opcode op, int flags, long headerAddr, int headerLength, long laddr, int length,
                              int lkey, long raddr, int rkey, int imm, long compareAdd, long swap, int peer) {
        write(rec, op, flags, headerAddr, headerLength, laddr, length, lkey, raddr, rkey, imm, compareAdd, swap, peer);
        if (headerLength > 0) {
            stagedHeaders++;
        }
        if (connectionless() || op.isAtomic() || headerLength > 0) {
            tOp = null; // written whole, or counted at each stage: never the template
            return;
        }
        if (op != tOp || laddr != tLaddr || length != tLength || lkey != tLkey || raddr != tRaddr || rkey != tRkey
                || imm != tImm) {
            tOp = op;
            tLaddr = laddr;
            tLength = length;
            tLkey = lkey;
            tRaddr = raddr;
            tRkey = rkey;
            tImm = imm;
            gen++; // no record holds the new template yet
        }
        recGen[rec] = gen;
    }

    /** Whether the last staged request is signaled (false when none is staged). */
    public boolean lastSignaled() {
        int n = pending();
        return n > 0 && (flagsOf(n - 1) & SendFlags.SIGNALED) != 0;
    }

    /** Signal the last staged request (a flush: its completion retires every request before it). */
    public void signalLast() {
        int n = pending();
        heldN = 0;
        if (n > 0) {
            setFlags(n - 1, flagsOf(n - 1) | SendFlags.SIGNALED);
        }
    }

    /** Drop every staged request (nothing was taken for them). */
    public void discardStaged() {
        pending(0);
        stagedHeaders = 0;
    }

    /**
     * Post the staged requests with one doorbell, admitted as {@link #post(SendBatch)} admits a
     * batch: 0 when nothing was staged or all were taken, {@link #EAGAIN} without a credit per
     * request (nothing taken, they stay staged), EINVAL for a header the records have no room for
     * (they are dropped), or the provider's errno (the refused ones settled as for any post).
     */
    public int postStaged() {
        int n = pending();
        if (n == 0) {
            return 0;
        }
        if (maxSge() < 2 && stagedHeaders > 0) {
            discardStaged();
            return Errno.EINVAL;
        }
        if (!credits.tryTake(n)) {
            return EAGAIN;
        }
        long first = credits.sequence(stagedIds, n);
        SendWorkRequests w = list;
        if (first >= 0) {
            for (int i = 0; i < n; i++) {
                w.wrId(i, first + i);
            }
        } else {
            long[] ids = stagedIds;
            for (int i = 0; i < n; i++) {
                w.wrId(i, ids[i]);
            }
        }
        stagedHeaders = 0;
        return postList();
    }

    @Override
    public void close() {
        super.close();
        if (slots != null) {
            for (SendWorkRequests w : slots) {
                w.close();
            }
        }
    }
}
