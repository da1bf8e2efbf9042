package dev.scalep.threading;

import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.counters.Counters;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.jctools.queues.MessagePassingQueue;
import org.jctools.queues.MpscArrayQueue;
import org.jctools.queues.SpmcArrayQueue;
import org.jctools.util.PaddedAtomicLong;

import java.lang.invoke.VarHandle;

/**
 * A lock-free send path for a QP shared by several threads, where contention becomes batching:
 * a thread takes credits for its requests (one CAS on the free depth) and tries to become the
 * combiner (CAS on a padded flag). The combiner posts what the other threads handed it, then its
 * own requests, as postlists: one doorbell ({@link QueuePair#postSend}) per list. A thread that
 * loses the flag hands its requests over and returns at once, because the holder looks for
 * handed-over requests again after releasing the flag and so cannot miss them.
 *
 * <p>How requests are handed over. Each owner (the owner index of the ids, {@link WrIds#owner})
 * has a {@link Lane}: a single-producer ring of slots that only its owner writes and only the
 * combiner reads. A slot holds one request or a run of them (requests alike but for ids that count
 * up by one and addresses that move by a constant stride each: a thread streaming writes), so the
 * next request of a run is one length written and one word published, and a run the combiner has
 * partly posted goes on growing in place. The combiner reads a lane's published word and the
 * slots behind it; while one thread holds the role, another thread's requests so reach it as a
 * few cache lines per pass instead of lines per request. Requests whose owner index is outside
 * the path's owners go through a JCTools {@link MpscArrayQueue} of pooled records ({@link
 * SendBatch}, from a {@link SpmcArrayQueue}, one per credit: a thread holding credits always
 * finds one). The data path allocates nothing.
 *
 * <p>Progress guarantee: lock-free, and no caller waits for another thread's post. A {@code post}
 * call posts its own requests (or hands them over) and, as combiner, at most {@link
 * #drainLimit()} records or lane passes of other threads in all, then returns. What it leaves is
 * posted by the next {@code post}, {@link #postQueued()} or credit-starved call on this path from
 * any thread; the endpoint layer calls {@link #postQueued()} whenever it polls. A thread
 * descheduled while holding the flag delays the handed-over requests (never another thread's
 * call): the others keep handing over until the credits or their lane's slots run out and then
 * get {@link #EAGAIN}. Two threads posting with the same owner index (the endpoint layer gives
 * each thread its own) take turns at that owner's lane.
 *
 * <p>Thread-safe. Requests enter the send queue in the order of each thread's posts. {@link
 * #post} returns 0 when the requests were accepted, even if another thread posts them; the
 * provider refusing one later is reported to the {@link PostFailureHandler} and counted to its
 * owner ({@link #rejected(int)}); {@code post} returns an errno only for its caller's own.
 */
public final class CombiningPoster extends AbstractSendPath {
    /** Requests per pooled record. */
    static final int RECORD_CAPACITY = 16;
    /** Slots per lane at most (a lane never needs more than one per credit). */
    static final int LANE_SLOTS = 64;
    private static final IdleStrategy YIELD = YieldingIdleStrategy.INSTANCE;

    private final MpscArrayQueue<SendBatch> queue;
    private final SpmcArrayQueue<SendBatch> pool;
    private final Lane[] lanes;
    private final int drainLimit;
    private final PaddedAtomicLong combining = new PaddedAtomicLong();
    private final PaddedAtomicLong doorbells = new PaddedAtomicLong();
    private final PaddedAtomicLong combined = new PaddedAtomicLong();
    private final PaddedAtomicLong yields = new PaddedAtomicLong();
    private final MessagePassingQueue.Consumer<SendBatch> drainer = this::onRecord;
    // Combiner-only state (the flag's CAS orders it between holders), padded: beside the fields
    // every posting thread reads, a write per pass took their line away from the others.
    private final PaddedAtomicLong drainRc = new PaddedAtomicLong();

    /**
     * @param maxBatch most requests per doorbell (capped at the queue depth)
     * @param owners   owner indexes that appear in ids ({@link WrIds#owner}); each gets a lane
     * @param peers    address-handle table size for connectionless QPs (0 for RC)
     */
    public CombiningPoster(QueuePair qp, int maxBatch, int owners, int peers, PostFailureHandler onFailure) {
        super(qp, maxBatch, owners, peers, onFailure);
        this.queue = new MpscArrayQueue<>(depth);
        this.pool = new SpmcArrayQueue<>(depth);
        int perRecord = Math.min(RECORD_CAPACITY, this.maxBatch);
        for (int i = 0; i < depth; i++) {
            pool.offer(new SendBatch(perRecord));
        }
        int slots = Math.min(LANE_SLOTS, Integer.highestOneBit(Math.max(2, depth - 1)) << 1);
        this.lanes = new Lane[owners];
        for (int i = 0; i < owners; i++) {
            lanes[i] = new Lane(slots);
        }
        this.drainLimit = depth;
    }

    @Override
    protected int postAdmitted(SendBatch b, int n) {
        int mine = WrIds.owner(b.wrId(0));
        long refusedBefore = mine < owners ? credits.rejected(mine) : 0;
        if (tryAcquire()) {
            // Uncontended (or the holder just left): post directly, behind whatever was handed over.
            long mark = 0;
            if (Counters.ENABLED) {
                counters.acquired(false);
                mark = counters.passStart();
            }
            try {
                drainRc.spVal(0);
                drain(drainLimit, n, mine);
                if (queue.isEmpty() || mine < owners) {
                    // This thread's earlier requests, in its lane, were drained just now.
                    appendAll(b, n);
                } else {
                    // A record ahead is still being offered (perhaps one of ours): queue behind it,
                    // so each thread's requests keep their order.
                    enqueue(b, n);
                    drain(drainLimit, 0, owners);
                }
                doorbell();
            } finally {
                if (Counters.ENABLED) {
                    counters.passEnd(mark);
                }
                release();
            }
        } else {
            if (Counters.ENABLED) {
                counters.handedOver();
            }
            if (mine < owners) {
                if (!lanes[mine].offer(b, n)) {
                    // The lane is full of requests the holder has not taken yet: refuse this post
                    // whole (credits back), after helping as a thread without credits does.
                    credits.give(n);
                    return noCredits();
                }
            } else {
                enqueue(b, n);
            }
            // Publish before the flag is read again: the Dekker pairing with a combiner that releases
            // the flag and then looks for work again (see combine()).
            VarHandle.fullFence();
        }
        combine();
        // Only a refusal of this caller's own requests is its error; others' go to their owners.
        return mine < owners && credits.rejected(mine) != refusedBefore ? credits.lastRejectErrno(mine) : 0;
    }

    private static int firstError(int a, int b) {
        return a != 0 ? a : b;
    }

    /** Copy the requests into pooled records and queue them, in order (the caller holds n credits). */
    private void enqueue(SendBatch b, int n) {
        for (int i = 0; i < n; ) {
            SendBatch r = record();
            for (int k = r.capacity(); k > 0 && i < n; k--, i++) {
                r.copy(b, i);
            }
            offer(r);
        }
    }

    /** A free record: there is one per credit and the caller holds a credit for each record it fills. */
    private SendBatch record() {
        SendBatch r = pool.poll();
        if (r == null) {
            throw new IllegalStateException("combining record pool empty with credits held (sizing bug)");
        }
        return r;
    }

    private void offer(SendBatch r) {
        if (!queue.offer(r)) {
            throw new IllegalStateException("combining queue full with credits held (sizing bug)");
        }
    }

    /**
     * Combiner only: move up to {@code limit} queued records and lane passes into postlists, ringing
     * the doorbell each time the list is full, and leave room for {@code reserve} more requests in
     * the list (not yet posted). Lane {@code own} (the caller's; {@link #owners} for none) is
     * taken whatever the limit, so that the caller's own requests that follow come after it.
     * Provider errors go to {@link #drainRc}. Returns the records and lanes that gave requests.
     */
    private int drain(int limit, int reserve, int own) {
        int got = limit > 0 ? queue.drain(drainer, limit) : 0;
        Lane[] ls = lanes;
        for (int i = 0; i < ls.length && got < limit; i++) {
            if (ls[i].hasWork() && take(ls[i])) {
                got++;
            }
        }
        if (own < ls.length && ls[own].hasWork() && take(ls[own])) {
            got++;
        }
        if (pending() + reserve > maxBatch) {
            drainRc.spVal(firstError((int) drainRc.lpVal(), doorbell()));
        }
        return got;
    }

    private void onRecord(SendBatch r) {
        int n = r.count();
        for (int i = 0; i < n; i++) {
            if (pending() == maxBatch) {
                drainRc.spVal(firstError((int) drainRc.lpVal(), doorbell()));
            }
            append(r, i);
        }
        r.clear();
        pool.offer(r); // single producer: the combiner role is handed over by CAS
    }

    /**
     * Combiner only: append the requests the lane has published and the combiner has not taken,
     * in order; a slot is finished when all its run is taken and its owner has started another
     * (the last slot's run may still grow). Whether any request was taken.
     */
    private boolean take(Lane lane) {
        long p = lane.published.lvVal();
        int written = (int) (p >>> 32);
        int total = (int) p;
        long c = lane.consumed.lpVal();
        int slot = (int) (c >>> 32);
        int taken = (int) c;
        if (taken == total) {
            return false;
        }
        int offset = (int) lane.offset.lpVal();
        SendBatch from = lane.slots;
        int mask = lane.mask;
        int[] runs = lane.runs;
        while (true) {
            int k = slot & mask;
            int run = runs[k]; // read after the published word: at least what it counts
            int n = Math.min(run - offset, total - taken);
            if (n > 0) {
                long sl = lane.localStride[k];
                long sr = lane.remoteStride[k];
                for (int j = offset, end = offset + n; j < end; j++) {
                    if (pending() == maxBatch) {
                        drainRc.spVal(firstError((int) drainRc.lpVal(), doorbell()));
                    }
                    appendShifted(from, k, j, j * sl, j * sr);
                }
                offset += n;
                taken += n;
            }
            if (offset == run && slot != written - 1) {
                slot++; // finished: its owner writes only its last slot
                offset = 0;
            } else if (taken == total || n <= 0) {
                break;
            }
        }
        lane.offset.spVal(offset);
        // Release: the owner may reuse the finished slots once it reads this.
        lane.consumed.soVal(((long) slot << 32) | (taken & 0xffff_ffffL));
        return true;
    }

    /** Combiner only: post the list with one doorbell and count it (single writer: plain increments). */
    private int doorbell() {
        int n = pending();
        if (n == 0) {
            return 0;
        }
        int r = postList();
        doorbells.soVal(doorbells.lpVal() + 1);
        combined.soVal(combined.lpVal() + n);
        return r;
    }

    /**
     * Take the combiner flag if it is free: read first, so that a thread finding it held leaves
     * the holder's cache line shared instead of taking it away with a failing compare-and-swap.
     */
    private boolean tryAcquire() {
        return combining.lvVal() == 0 && combining.compareAndSet(0, 1);
    }

    private void release() {
        // Volatile store, then the volatile re-reads of the queue and lanes by the caller (combine()).
        combining.set(0);
    }

    /** Whether handed-over requests wait: queued records or lanes with requests not taken. */
    private boolean work() {
        if (!queue.isEmpty()) {
            return true;
        }
        for (Lane l : lanes) {
            if (l.hasWork()) {
                return true;
            }
        }
        return false;
    }

    /**
     * No credits. Handed-over requests nobody is posting (a combiner that stopped at its drain
     * limit) are posted now; when a combiner is at work (or was preempted holding the flag), yield
     * once so it can finish: the credits come back only after it posts. Then report back-pressure.
     */
    @Override
    protected int noCredits() {
        if (work()) {
            if (combining.lvVal() == 0) {
                combine();
            } else {
                yields.soVal(yields.lpVal() + 1); // racy count; statistics only
                YIELD.idle();
            }
        }
        return EAGAIN;
    }

    @Override
    public int postQueued() {
        return work() ? combine() : 0;
    }

    /**
     * Drain and post until nothing is handed over, another thread holds the flag, a pass drains
     * nothing (the head record is still being offered: its producer combines after it publishes),
     * or {@link #drainLimit()} records and lane passes are drained; never waits. Returns the first
     * provider error, or 0.
     */
    private int combine() {
        int rc = 0;
        int left = drainLimit;
        while (left > 0 && work()) {
            if (!tryAcquire()) {
                return rc; // the holder looks again after releasing (see class comment)
            }
            int got;
            long mark = 0;
            if (Counters.ENABLED) {
                counters.acquired(false);
                mark = counters.passStart();
            }
            try {
                drainRc.spVal(0);
                got = drain(left, 0, owners);
                left -= got;
                rc = firstError(rc, firstError((int) drainRc.lpVal(), doorbell()));
            } finally {
                if (Counters.ENABLED) {
                    counters.passEnd(mark);
                }
                release();
            }
            // A pass that drained nothing found the head record claimed but not yet stored: its
            // producer combines after it stores it. But that producer's CAS may have failed while this
            // thread still held the flag, and it then returned: so after releasing, look once more,
            // and go on if the head is there now (the producer's store and fence, then its CAS; this
            // thread's release, then its read: one of the two sees the other). Still absent: its
            // producer has not stored it yet, and will find the flag free. (A lane publishes in
            // one store, so a lane with work always gives some.)
            if (got == 0 && queue.relaxedPeek() == null) {
                return rc;
            }
        }
        return rc;
    }

    /** Records (of up to {@value #RECORD_CAPACITY} requests) or lane passes one combiner posts for other threads before it returns. */
    public int drainLimit() {
        return drainLimit;
    }

    /** Postlists this poster rang (one doorbell each). */
    public long doorbells() {
        return doorbells.get();
    }

    /** Requests posted through those doorbells. */
    public long combined() {
        return combined.get();
    }

    /** Records and lanes of accepted requests not yet posted (a snapshot). */
    public long queued() {
        long n = queue.size();
        for (Lane l : lanes) {
            if (l.hasWork()) {
                n++;
            }
        }
        return n;
    }

    /**
     * One owner's hand-over to the combiner: a ring of slots its owner writes and the combiner
     * reads. The owner publishes (slots written, requests written) as one word after writing them;
     * the combiner publishes (slots finished, requests taken) after taking them. Each word is
     * padded, written by one side and read by the other, so a pass moves a few lines between the
     * cores however many requests it takes. Slot counts and request counts are 32-bit and wrap.
     */
    static final class Lane {
        /** Longest run in one slot (a run never outgrows the credits that admitted it anyway). */
        static final int MAX_RUN = 1 << 16;

        final SendBatch slots;
        final int mask;
        /** Requests in each slot (1, or the length of its run). */
        final int[] runs;
        final long[] localStride;
        final long[] remoteStride;
        /** Owner: slots written (high 32 bits) and requests written (low), published with a release store. */
        final PaddedAtomicLong published = new PaddedAtomicLong();
        /** Combiner: slots finished (high) and requests taken (low), published with a release store. */
        final PaddedAtomicLong consumed = new PaddedAtomicLong();
        /** Combiner only: requests of the first unfinished slot already taken. */
        final PaddedAtomicLong offset = new PaddedAtomicLong();
        /** Held by the thread writing the lane (one per owner in the endpoint layer: never contended there). */
        final PaddedAtomicLong writer = new PaddedAtomicLong();

        Lane(int slots) {
            this.slots = new SendBatch(slots);
            this.mask = slots - 1;
            this.runs = new int[slots];
            this.localStride = new long[slots];
            this.remoteStride = new long[slots];
        }

        /** Whether the lane holds requests the combiner has not taken (any thread). */
        boolean hasWork() {
            return (int) published.lvVal() != (int) consumed.lvVal();
        }

        /**
         * Owner side: publish the {@code n} requests of {@code b}, each extending the last slot's
         * run or in a slot of its own. False, with nothing written, when the free slots might not
         * be enough (the combiner has not taken what is there yet).
         */
        boolean offer(SendBatch b, int n) {
            PaddedAtomicLong w = writer;
            while (w.lvVal() != 0 || !w.compareAndSet(0, 1)) {
                Thread.onSpinWait(); // another thread of the same owner, inside this method
            }
            try {
                long p = published.lpVal();
                int written = (int) (p >>> 32);
                int total = (int) p;
                int finished = (int) (consumed.lvVal() >>> 32);
                // room for n new slots, the worst case, so that nothing is written when it fails
                if (written - finished + n > mask + 1) {
                    return false;
                }
                SendBatch a = slots;
                for (int i = 0; i < n; i++) {
                    if (written != finished && extend((written - 1) & mask, b, i)) {
                        total++;
                        continue;
                    }
                    int k = written & mask;
                    a.set(k, b, i);
                    runs[k] = 1;
                    written++;
                    total++;
                }
                published.soVal(((long) written << 32) | (total & 0xffff_ffffL)); // fields, then the word
                return true;
            } finally {
                w.soVal(0);
            }
        }

        /**
         * Whether request {@code i} of {@code b} is the next of slot {@code k}'s run, and if so count
         * it. The combiner may be reading the slot's run: a run only grows, and the combiner takes
         * no more than the published word counts.
         */
        private boolean extend(int k, SendBatch b, int i) {
            SendBatch a = slots;
            int run = runs[k];
            if (run >= MAX_RUN || b.wrId(i) != a.wrId(k) + run || !a.sameButIdAndAddresses(k, b, i)) {
                return false;
            }
            long dl = b.localAddr(i) - a.localAddr(k);
            long dr = b.remoteAddr(i) - a.remoteAddr(k);
            if (run == 1) {
                localStride[k] = dl;
                remoteStride[k] = dr;
            } else if (dl != run * localStride[k] || dr != run * remoteStride[k]) {
                return false;
            }
            runs[k] = run + 1;
            return true;
        }
    }
}
