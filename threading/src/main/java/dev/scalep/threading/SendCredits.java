package dev.scalep.threading;

import org.jctools.util.PaddedAtomicLong;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Send-queue credits and exact retirement accounting for one QP. On an in-order device
 * ({@code rewrite}) each posted request gets the next send-queue sequence number as its provider
 * {@code wr_id} and the caller's id is kept in a table indexed by that sequence, so one signaled
 * completion retires every earlier request, unsignaled ones of other owners included. Out of order
 * (SRD) every request is signaled, retires only itself, and ids pass through unchanged. With slot
 * lists (one owner, in order) a run may instead go out from records whose wr_ids name a slot and a
 * record for good ({@link #slotWrId}); the slot then stands for the run's table entries.
 *
 * <p>Thread-safety: {@link #sequence}, {@link #unsequence}, {@link #nextSequence}, {@link
 * #slotFree} and {@link #sequenceSlot} are for the one thread that holds the right to post (plain
 * sequence counter; table entries and slots are written with release). {@link #retire} and {@link
 * #stable} are for the poll-role holder, one thread at a time (the hand-off of that role orders
 * successive holders); it reads the table and the slots with acquire, publishes the retired
 * sequence (which frees a slot) with release after them, and gives credits back only after reading
 * the entries they free. {@link #tryTake}, {@link #give}, {@link #reject}, {@link #free},
 * {@link #retired}, {@link #rejected} and {@link #userId} are safe from any thread. No allocation
 * after construction.
 */
public final class SendCredits {
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    /**
     * Marks a provider wr_id that names a record of a slot list ({@link #slotWrId}) rather than a
     * sequence: bit 62, which no sequence reaches and no receive id carries alone.
     */
    public static final long SLOT_TAG = 1L << 62;
    /** The most slot lists one QP may have (the slot's index takes the wr_id's bits 32..61). */
    public static final int MAX_SLOTS = 1 << 16;

    private final boolean rewrite;
    private final PaddedAtomicLong credits;
    /** Per-owner retirement counts, each on its own cache lines; single writer (the poll-role holder). */
    private final PaddedAtomicLong[] retiredBy;
    private final PaddedAtomicLong rejected = new PaddedAtomicLong();
    /** Per-owner refusals (any poster thread; atomic) and the errno of each owner's first and latest. */
    private final PaddedAtomicLong[] rejectedBy;
    private final int[] firstErrno;
    private final int[] lastErrno;
    private final long[] userIds;
    private final int mask;
    /**
     * Next send-queue sequence; written only by the thread that holds the right to post, at every
     * request, so padded: beside the fields above, which every posting thread reads, each write
     * took their line away from the other threads of a shared QP.
     */
    private final PaddedAtomicLong sqSeq = new PaddedAtomicLong();
    /** First sequence not yet retired; written only by the poll-role holder (padded likewise). */
    private final PaddedAtomicLong retiredSeq = new PaddedAtomicLong();
    /**
     * Slot lists ({@link #sequenceSlot}): per slot, the first sequence and the caller's first id of
     * the run its records carried last (written by the poster with release, read by the poll-role
     * holder with acquire), and the sequence after that run (the poster's own).
     */
    private final long[] slotBase;
    private final long[] slotFirst;
    private final long[] slotEnd;

    /**
     * {@code depth} credits; retirements counted for owners {@code 0..owners-1} ({@link WrIds#owner});
     * {@code rewrite} when the device completes in order.
     */
    public SendCredits(int depth, int owners, boolean rewrite) {
        this(depth, owners, rewrite, 0);
    }

    /**
     * As above, with {@code slots} slot lists ({@link #sequenceSlot}; 0 for none), which need ids
     * rewritten and one owner.
     */
    public SendCredits(int depth, int owners, boolean rewrite, int slots) {
        if (slots < 0 || slots > MAX_SLOTS || (slots > 0 && (!rewrite || owners != 1))) {
            throw new IllegalArgumentException("slot lists need in-order ids and one owner, at most " + MAX_SLOTS
                    + ": " + slots + " slots, " + owners + " owners, rewrite " + rewrite);
        }
        this.slotBase = new long[slots];
        this.slotFirst = new long[slots];
        this.slotEnd = new long[slots];
        this.rewrite = rewrite;
        this.credits = new PaddedAtomicLong(depth);
        this.retiredBy = new PaddedAtomicLong[owners];
        this.rejectedBy = new PaddedAtomicLong[owners];
        for (int i = 0; i < owners; i++) {
            retiredBy[i] = new PaddedAtomicLong();
            rejectedBy[i] = new PaddedAtomicLong();
        }
        this.firstErrno = new int[owners];
        this.lastErrno = new int[owners];
        int cap = Integer.highestOneBit(Math.max(1, depth - 1)) << 1;
        this.userIds = new long[rewrite ? cap : 1];
        this.mask = cap - 1;
    }

    /** Whether ids are rewritten to send-queue sequences (in-order device). */
    public boolean rewrite() {
        return rewrite;
    }

    /** Credits left (volatile read). */
    public long free() {
        return credits.get();
    }

    /** Take {@code n} credits, all or nothing. */
    public boolean tryTake(long n) {
        for (;;) {
            long c = credits.get();
            if (c < n) {
                return false;
            }
            if (credits.compareAndSet(c, c - n)) {
                return true;
            }
        }
    }

    /** Give back {@code n} credits taken for requests that were never accepted by the provider. */
    public void give(long n) {
        credits.getAndAdd(n);
    }

    /**
     * Count one request the provider refused ({@code errno}) to the owner in its caller's id
     * {@code wrId}: the request is settled (never completes), so {@link #rejected(int)} tells its
     * owner, whichever thread posted it. Called by the thread that holds the right to post.
     */
    public void reject(long wrId, int errno) {
        rejected.getAndAdd(1);
        int owner = WrIds.owner(wrId);
        if (owner < rejectedBy.length) {
            if (firstErrno[owner] == 0) {
                firstErrno[owner] = errno;
            }
            lastErrno[owner] = errno;
            rejectedBy[owner].getAndAdd(1); // publishes the errno fields to an acquiring reader
        }
    }

    /** Requests of {@code owner} the provider refused so far (volatile read; any thread). */
    public long rejected(int owner) {
        return rejectedBy[owner].get();
    }

    /** The errno of {@code owner}'s first refused request, 0 if none (read after {@link #rejected(int)}). */
    public int firstRejectErrno(int owner) {
        return firstErrno[owner];
    }

    /** The errno of {@code owner}'s latest refused request, 0 if none (read after {@link #rejected(int)}). */
    public int lastRejectErrno(int owner) {
        return lastErrno[owner];
    }

    /** Requests refused by the provider so far. */
    public long rejected() {
        return rejected.get();
    }

    /**
     * The {@code wr_id} to give the provider for a request the caller staged as {@code wrId}: the
     * next sequence (recorded against {@code wrId}) when rewriting, else {@code wrId}. Poster only.
     */
    public long sequence(long wrId) {
        if (!rewrite) {
            return wrId;
        }
        long seq = sqSeq.lpVal();
        sqSeq.spVal(seq + 1);
        // Release: pairs with the acquire in retire(); the provider's completion also orders it.
        LONGS.setRelease(userIds, (int) (seq & mask), wrId);
        return seq;
    }

    /**
     * {@link #sequence} for the first {@code n} ids of {@code wrIds} at once: returns the first
     * sequence (ids {@code i} gets {@code first + i}), or {@code -1} when ids are not rewritten (the
     * provider sees the caller's ids). The table entries are plain stores followed by one release
     * fence, which orders them before the post that follows as the per-entry release does. Poster only.
     */
    public long sequence(long[] wrIds, int n) {
        if (!rewrite) {
            return -1;
        }
        long first = sqSeq.lpVal();
        long[] table = userIds;
        int m = mask;
        for (int i = 0; i < n; i++) {
            table[(int) ((first + i) & m)] = wrIds[i];
        }
        sqSeq.spVal(first + n);
        VarHandle.releaseFence();
        return first;
    }

    /**
     * {@link #sequence} for {@code n} requests whose ids are {@code firstId} and the ones after it:
     * the first sequence, or -1 when ids are not rewritten. Poster only.
     */
    public long sequenceRun(long firstId, int n) {
        if (!rewrite) {
            return -1;
        }
        long first = sqSeq.lpVal();
        long[] table = userIds;
        // two plain loops, up to the table's end and on from its start, which the JIT compiles
        // without a range check per store (a masked index is checked at every one)
        int start = (int) (first & mask);
        int head = Math.min(n, table.length - start);
        for (int i = 0; i < head; i++) {
            table[start + i] = firstId + i;
        }
        for (int i = head; i < n; i++) {
            table[i - head] = firstId + i;
        }
        sqSeq.spVal(first + n);
        VarHandle.releaseFence();
        return first;
    }

    /** The provider wr_id record {@code rec} of slot list {@code slot} carries for good. */
    public static long slotWrId(int slot, int rec) {
        return SLOT_TAG | ((long) slot << 32) | rec;
    }

    /**
     * Whether slot list {@code slot} may carry a new run: every request of the run it carried last
     * has been retired (acquire read of the retired sequence). Poster only.
     */
    public boolean slotFree(int slot) {
        return retiredSeq.lvVal() >= slotEnd[slot];
    }

    /**
     * {@link #sequenceRun} for a run of {@code n} requests posted from the records of slot list
     * {@code slot} (free: {@link #slotFree}), whose wr_ids are {@link #slotWrId} for good: instead of
     * a table entry per request the slot remembers the run's first sequence and first id, and a
     * completion's wr_id finds them ({@link #idOf}, {@link #retire}, {@link #stable}). Returns the
     * first sequence. Poster only.
     */
    public long sequenceSlot(int slot, long firstId, int n) {
        long first = sqSeq.lpVal();
        slotBase[slot] = first;
        slotFirst[slot] = firstId;
        slotEnd[slot] = first + n;
        sqSeq.spVal(first + n);
        VarHandle.releaseFence(); // pairs with the acquire reads in idOf, stable and retire
        return first;
    }

    /**
     * The completed request's sequence for a provider wr_id that may name a slot record: read it
     * before the completion is retired (a retired slot carries the next run). Other ids unchanged.
     */
    public long stable(long completedWrId) {
        if (rewrite && (completedWrId & SLOT_TAG) != 0) {
            return (long) LONGS.getAcquire(slotBase, slotOf(completedWrId)) + (int) completedWrId;
        }
        return completedWrId;
    }

    private static int slotOf(long slotWrId) {
        return (int) ((slotWrId & ~SLOT_TAG) >>> 32);
    }

    /** Take back the last {@code n} sequences handed out (their requests were not posted). Poster only. */
    public void unsequence(long n) {
        if (rewrite) {
            sqSeq.spVal(sqSeq.lpVal() - n);
        }
    }

    /** The next sequence {@link #sequence} would hand out. Poster only. */
    public long nextSequence() {
        return sqSeq.lpVal();
    }

    /** The caller's id recorded for sequence {@code seq} (acquire read; meaningful only when rewriting). */
    public long userId(long seq) {
        return (long) LONGS.getAcquire(userIds, (int) (seq & mask));
    }

    /**
     * The caller's id for the provider's {@code completedWrId} (when ids are rewritten a sequence, or
     * a slot record's wr_id while its slot still carries that run).
     */
    public long idOf(long completedWrId) {
        if (!rewrite) {
            return completedWrId;
        }
        if ((completedWrId & SLOT_TAG) != 0) {
            return (long) LONGS.getAcquire(slotFirst, slotOf(completedWrId)) + (int) completedWrId;
        }
        return userId(completedWrId);
    }

    /**
     * Account a send completion: returns the caller's id for the provider's {@code completedWrId},
     * counts every request it retires to its owner and gives their credits back. Poll-role holder only.
     */
    public long retire(long completedWrId) {
        if (!rewrite) {
            int owner = WrIds.owner(completedWrId);
            countRetired(owner, 1);
            credits.getAndAdd(1);
            return completedWrId;
        }
        long s;
        long mine;
        if ((completedWrId & SLOT_TAG) != 0) {
            int slot = slotOf(completedWrId);
            s = (long) LONGS.getAcquire(slotBase, slot) + (int) completedWrId;
            mine = (long) LONGS.getAcquire(slotFirst, slot) + (int) completedWrId;
        } else {
            s = completedWrId;
            mine = (long) LONGS.getAcquire(userIds, (int) (s & mask));
        }
        long r = retiredSeq.lpVal();
        if (s < r) {
            return mine; // already retired by a later completion; no credit twice
        }
        if (retiredBy.length == 1) {
            // One owner (a QP whose CQ serves one thread): the whole run is owner 0's, counted
            // with one store and no table scan per request.
            countRetired(0, s + 1 - r);
            retiredSeq.soVal(s + 1); // ordered after the slot reads above (slotFree)
            credits.getAndAdd(s + 1 - r);
            return mine;
        }
        // One ordered store per run of one owner's requests (a postlist of one thread is one run): a
        // store per request made each iteration wait for the previous one's (64 per completion at q = 64).
        long k = r;
        while (k <= s) {
            int owner = WrIds.owner((long) LONGS.getAcquire(userIds, (int) (k & mask)));
            long run = 1;
            for (k++; k <= s && WrIds.owner((long) LONGS.getAcquire(userIds, (int) (k & mask))) == owner; k++) {
                run++;
            }
            countRetired(owner, run);
        }
        retiredSeq.soVal(s + 1);
        // Release the slots last: a credit lets a poster overwrite the table entries read above.
        credits.getAndAdd(s + 1 - r);
        return mine;
    }

    /** Requests of {@code owner} retired so far (acquire read; any thread). */
    public long retired(int owner) {
        return retiredBy[owner].lvVal();
    }

    /** Single writer (poll-role holder): plain read, ordered store. */
    private void countRetired(int owner, long n) {
        if (owner < retiredBy.length) {
            PaddedAtomicLong r = retiredBy[owner];
            r.soVal(r.lpVal() + n);
        }
    }
}
