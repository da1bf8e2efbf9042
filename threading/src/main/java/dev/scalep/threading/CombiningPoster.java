package dev.scalep.threading;

import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.counters.Counters;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.jctools.queues.MessagePassingQueue;
import org.jctools.queues.MpmcArrayQueue;
import org.jctools.queues.MpscArrayQueue;
import org.jctools.util.PaddedAtomicLong;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A lock-free send path for a QP shared by several threads, where contention becomes batching:
 * a thread takes credits for its requests (one CAS on the free depth), copies them into a pooled
 * record ({@link Record}: a {@link SendBatch}, from a JCTools {@link MpmcArrayQueue}) and offers it
 * to a JCTools {@link MpscArrayQueue}, then tries to become the combiner (CAS on a padded flag). The
 * combiner drains what is queued ({@link MessagePassingQueue#drain}) into postlists, one doorbell
 * ({@link QueuePair#postSend}) per list, and gives the records back to the pool; a thread that
 * loses the flag returns at once, because the holder looks at the queue again after releasing
 * the flag and so cannot miss its requests. Records hold up to {@value #RECORD_CAPACITY}
 * requests (a larger batch takes several, in order); the pool has one per credit and one per
 * owner (below), so a thread holding credits always finds one, and the data path allocates nothing.
 *
 * <p>A queued record stays open to its owner (the owner index of its requests' ids) until a
 * combiner drains it: the owner's next requests are appended to it (one compare-and-swap on the
 * record's count, which the combiner's drain seals with an atomic OR) instead of taking a record,
 * offering it and reading the flag. A record is in the queue from its offer until its drain, and
 * its offer was followed by its producer's check of the flag, so an open record is always one a
 * combiner still has to drain: an append needs no check of its own. While one thread holds the
 * role, another thread's requests so reach it in runs, a record's lines and one count per run,
 * where each of them used to move the queue's, the pool's and the flag's lines between the cores.
 * A record goes back to the pool when both its owner has left it (an append found it sealed or
 * full) and the combiner has drained it, whichever comes last, so an owner's write into a record
 * that a combiner sealed meanwhile never lands in a record another thread took from the pool.
 *
 * <p>Progress guarantee: lock-free, and no caller waits for another. A {@code post} call posts its
 * own requests (or queues them behind a record another thread is still offering) and, as
 * combiner, at most {@link #drainLimit()} records of other threads in all, then returns. Records it
 * leaves queued are posted by the next {@code post}, {@link #postQueued()} or credit-starved call
 * on this path from any thread; the endpoint layer calls {@link #postQueued()} whenever it polls.
 * A thread descheduled while holding the flag delays the queued requests (never another thread's
 * call): the others keep queueing until the credits run out and then get {@link #EAGAIN}.
 *
 * <p>Thread-safe. Requests enter the send queue in queue order and each thread's in its own order.
 * {@link #post} returns 0 when the requests were accepted, even if another thread posts them; the
 * provider refusing one later is reported to the {@link PostFailureHandler} and counted to its
 * owner ({@link #rejected(int)}); {@code post} returns an errno only for its caller's own.
 */
public final class CombiningPoster extends AbstractSendPath {
    /** Requests per pooled record. */
    static final int RECORD_CAPACITY = 16;
    private static final IdleStrategy YIELD = YieldingIdleStrategy.INSTANCE;

    /** Slots of {@link #open} per owner: one cache line of compressed references apart. */
    private static final int OPEN_STRIDE = 16;

    private final MpscArrayQueue<Record> queue;
    private final MpmcArrayQueue<Record> pool;
    /** Each owner's open record ({@link Record}), taken out with an exchange while it is appended to. */
    private final AtomicReferenceArray<Record> open;
    private final int drainLimit;
    private final PaddedAtomicLong combining = new PaddedAtomicLong();
    private final PaddedAtomicLong doorbells = new PaddedAtomicLong();
    private final PaddedAtomicLong combined = new PaddedAtomicLong();
    private final PaddedAtomicLong yields = new PaddedAtomicLong();
    private final MessagePassingQueue.Consumer<Record> drainer = this::onRecord;
    // Combiner-only state (the flag's CAS orders it between holders), padded: beside the fields
    // every posting thread reads, a write per pass took their line away from the others.
    private final PaddedAtomicLong drainRc = new PaddedAtomicLong();

    /**
     * @param maxBatch most requests per doorbell (capped at the queue depth)
     * @param owners   owner indexes that appear in ids ({@link WrIds#owner})
     * @param peers    address-handle table size for connectionless QPs (0 for RC)
     */
    public CombiningPoster(QueuePair qp, int maxBatch, int owners, int peers, PostFailureHandler onFailure) {
        super(qp, maxBatch, owners, peers, onFailure);
        this.queue = new MpscArrayQueue<>(depth);
        // One record per credit, and one per owner for a drained record its owner has not left yet.
        int records = depth + owners;
        this.pool = new MpmcArrayQueue<>(Math.max(2, records));
        int perRecord = Math.min(RECORD_CAPACITY, this.maxBatch);
        for (int i = 0; i < records; i++) {
            pool.offer(new Record(perRecord));
        }
        this.open = new AtomicReferenceArray<>(owners * OPEN_STRIDE);
        this.drainLimit = depth;
    }

    @Override
    protected int postAdmitted(SendBatch b, int n) {
        int mine = WrIds.owner(b.wrId(0));
        if (mine < owners && appendOpen(mine, b, n)) {
            if (Counters.ENABLED) {
                counters.handedOver();
            }
            return 0; // not posted yet, so not refused yet: a later refusal goes to the owner's count
        }
        long refusedBefore = mine < owners ? credits.rejected(mine) : 0;
        if (tryAcquire()) {
            // Uncontended (or the holder just left): post directly, behind whatever was queued.
            long mark = 0;
            if (Counters.ENABLED) {
                counters.acquired(false);
                mark = counters.passStart();
            }
            try {
                drainRc.spVal(0);
                drain(drainLimit, n);
                if (queue.isEmpty()) {
                    appendAll(b, n);
                } else {
                    // A record ahead is still being offered (perhaps one of ours): queue behind it,
                    // so each thread's requests keep their order.
                    enqueue(b, n, mine);
                    drain(drainLimit, 0);
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
            enqueue(b, n, mine);
            // Publish before the flag is read again: the Dekker pairing with a combiner that releases
            // the flag and then re-reads the queue (see combine()).
            VarHandle.fullFence();
        }
        combine();
        // Only a refusal of this caller's own requests is its error; others' go to their owners.
        return mine < owners && credits.rejected(mine) != refusedBefore ? credits.lastRejectErrno(mine) : 0;
    }

    private static int firstError(int a, int b) {
        return a != 0 ? a : b;
    }

    /**
     * Append the {@code n} requests to the owner's open record when it is still queued (not yet
     * sealed by a drain) and has room for all of them; otherwise leave it. Whether appended.
     */
    private boolean appendOpen(int owner, SendBatch b, int n) {
        int slot = owner * OPEN_STRIDE;
        Record r = open.get(slot);
        if (r == null) {
            return false;
        }
        r = open.getAndSet(slot, null); // another thread posting for the same owner must not append alongside
        if (r == null) {
            return false;
        }
        int s = r.state();
        if ((s & Record.SEALED) == 0 && r.add(b, n) && r.publish(s, s + n)) { // fields first, then the count
            keepOpen(slot, r);
            return true;
        }
        leave(r); // sealed (a combiner has it) or full: the owner's part is over
        return false;
    }

    /** Make {@code r} the owner's open record again, unless another thread of the owner made its own open meanwhile. */
    private void keepOpen(int slot, Record r) {
        if (!open.compareAndSet(slot, null, r)) {
            leave(r);
        }
    }

    /** Drop one holder of {@code r}; the last one gives it back to the pool. */
    private void leave(Record r) {
        if (r.drop()) {
            r.reset();
            if (!pool.offer(r)) {
                throw new IllegalStateException("combining record pool full (sizing bug)");
            }
        }
    }

    /**
     * Copy the requests into pooled records and queue them, in order (the caller holds n credits).
     * The last record stays open to {@code owner} (when it is one whose ids are counted).
     */
    private void enqueue(SendBatch b, int n, int owner) {
        for (int i = 0; i < n; ) {
            Record r = record();
            int first = i;
            for (int k = r.batch.capacity(); k > 0 && i < n; k--, i++) {
                r.slot(b, i);
            }
            boolean last = i == n && owner < owners;
            r.start(i - first, last ? 2 : 1);
            offer(r);
            if (last) {
                int slot = owner * OPEN_STRIDE;
                Record was = open.getAndSet(slot, null);
                if (was != null) {
                    leave(was);
                }
                keepOpen(slot, r);
            }
        }
    }

    /** A free record: there is one per credit and the caller holds a credit for each record it fills. */
    private Record record() {
        Record r = pool.poll();
        if (r == null) {
            throw new IllegalStateException("combining record pool empty with credits held (sizing bug)");
        }
        return r;
    }

    private void offer(Record r) {
        if (!queue.offer(r)) {
            throw new IllegalStateException("combining queue full with credits held (sizing bug)");
        }
    }

    /**
     * Combiner only: move up to {@code limit} queued records into postlists, ringing the doorbell
     * each time the list is full, and leave room for {@code reserve} more requests in the list (not
     * yet posted). Provider errors go to {@link #drainRc}. Returns the records drained.
     */
    private int drain(int limit, int reserve) {
        int got = limit > 0 ? queue.drain(drainer, limit) : 0;
        if (pending() + reserve > maxBatch) {
            drainRc.spVal(firstError((int) drainRc.lpVal(), doorbell()));
        }
        return got;
    }

    private void onRecord(Record r) {
        // No append after the seal: the requests it counted are what the record holds. A run's
        // length may have grown past them (an append the seal beat), so the count bounds it.
        int left = r.seal();
        SendBatch from = r.batch;
        int[] runs = r.runs;
        for (int i = 0; left > 0; i++) {
            int run = Math.min(runs[i], left);
            left -= run;
            if (run == 1) {
                if (pending() == maxBatch) {
                    drainRc.spVal(firstError((int) drainRc.lpVal(), doorbell()));
                }
                append(from, i);
            } else {
                long sl = r.localStride[i];
                long sr = r.remoteStride[i];
                for (int k = 0; k < run; k++) {
                    if (pending() == maxBatch) {
                        drainRc.spVal(firstError((int) drainRc.lpVal(), doorbell()));
                    }
                    appendShifted(from, i, k, k * sl, k * sr);
                }
            }
        }
        leave(r);
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
        // Volatile store, then the volatile re-read of the queue by the caller (combine()).
        combining.set(0);
    }

    /**
     * No credits. Queued requests nobody is posting (a combiner that stopped at its drain limit)
     * are posted now; when a combiner is at work (or was preempted holding the flag), yield once so
     * it can finish: the credits come back only after it posts. Then report back-pressure.
     */
    @Override
    protected int noCredits() {
        if (!queue.isEmpty()) {
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
        return queue.isEmpty() ? 0 : combine();
    }

    /**
     * Drain and post until the queue is empty, another thread holds the flag, a pass drains
     * nothing (the head record is still being offered: its producer combines after it publishes),
     * or {@link #drainLimit()} records are drained; never waits. Returns the first provider error, or 0.
     */
    private int combine() {
        int rc = 0;
        int left = drainLimit;
        while (left > 0 && !queue.isEmpty()) {
            if (!tryAcquire()) {
                return rc; // the holder re-checks the queue after releasing (see class comment)
            }
            int got;
            long mark = 0;
            if (Counters.ENABLED) {
                counters.acquired(false);
                mark = counters.passStart();
            }
            try {
                drainRc.spVal(0);
                got = drain(left, 0);
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
            // producer has not stored it yet, and will find the flag free.
            if (got == 0 && queue.relaxedPeek() == null) {
                return rc;
            }
        }
        return rc;
    }

    /** Records (of up to {@value #RECORD_CAPACITY} requests) one combiner posts for other threads before it returns. */
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

    /** Records of accepted requests not yet posted (a snapshot). */
    public long queued() {
        return queue.size();
    }

    /**
     * A pooled record: up to {@value #RECORD_CAPACITY} slots, the count of requests published (with
     * the {@link #SEALED} bit a drain sets) and how many of its owner and the queue still hold it.
     * A slot holds one request or a run of them: requests alike but for ids that count up by one
     * and local and remote addresses that move by a constant stride each (a thread streaming
     * writes), so an append of the next request of a run writes one length, not a request.
     */
    static final class Record {
        static final int SEALED = 1 << 30;
        /** Longest run in one slot (a run never outgrows the credits that admitted it anyway). */
        static final int MAX_RUN = 1 << 16;
        private static final VarHandle STATE;
        private static final VarHandle HOLDERS;

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                STATE = l.findVarHandle(Record.class, "state", int.class);
                HOLDERS = l.findVarHandle(Record.class, "holders", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final SendBatch batch;
        /** Requests in each slot (1, or the length of a run). */
        final int[] runs;
        final long[] localStride;
        final long[] remoteStride;
        private int state;
        private int holders;

        Record(int capacity) {
            batch = new SendBatch(capacity);
            runs = new int[capacity];
            localStride = new long[capacity];
            remoteStride = new long[capacity];
        }

        /** Request {@code i} of {@code b} into a slot of its own (the caller checked room). */
        void slot(SendBatch b, int i) {
            runs[batch.count()] = 1;
            batch.copy(b, i);
        }

        /**
         * Owner only, before publishing: add the {@code n} requests of {@code b}, each extending the
         * last slot's run or in a slot of its own; false when the slots run out (then the record is
         * left, and what was written here was never published).
         */
        boolean add(SendBatch b, int n) {
            SendBatch a = batch;
            for (int i = 0; i < n; i++) {
                int k = a.count() - 1;
                if (k >= 0 && extend(k, b, i)) {
                    continue;
                }
                if (a.isFull()) {
                    return false;
                }
                slot(b, i);
            }
            return true;
        }

        /** Whether request {@code i} of {@code b} is the next of slot {@code k}'s run (and if so, count it). */
        private boolean extend(int k, SendBatch b, int i) {
            SendBatch a = batch;
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

        /** Before the offer (which publishes both): {@code count} requests, held by {@code holders}. */
        void start(int count, int holders) {
            this.state = count;
            this.holders = holders;
        }

        int state() {
            return (int) STATE.getAcquire(this);
        }

        /** Publish appended requests: from {@code was} to {@code now} requests, unless sealed meanwhile. */
        boolean publish(int was, int now) {
            return STATE.compareAndSet(this, was, now);
        }

        /** Close the record to appends; returns the requests it holds. */
        int seal() {
            return (int) STATE.getAndBitwiseOr(this, SEALED) & ~SEALED;
        }

        /** Drop a holder; whether it was the last. */
        boolean drop() {
            return (int) HOLDERS.getAndAdd(this, -1) == 1;
        }

        void reset() {
            batch.clear();
            state = 0;
        }
    }
}
