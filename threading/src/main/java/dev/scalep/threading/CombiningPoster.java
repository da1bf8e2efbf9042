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
 * a thread takes credits for its requests (one CAS on the free depth), copies them into a pooled
 * record ({@link SendBatch}, from a JCTools {@link SpmcArrayQueue}) and offers it to a JCTools
 * {@link MpscArrayQueue}, then tries to become the combiner (CAS on a padded flag). The combiner
 * drains what is queued ({@link MessagePassingQueue#drain}) into postlists, one doorbell
 * ({@link QueuePair#postSend}) per list, and gives the records back to the pool; a thread that
 * loses the flag returns at once, because the holder looks at the queue again after releasing
 * the flag and so cannot miss its requests. Records hold up to {@value #RECORD_CAPACITY}
 * requests (a larger batch takes several, in order); the pool has one per credit, so a thread
 * holding credits always finds one, and the data path allocates nothing.
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

    private final MpscArrayQueue<SendBatch> queue;
    private final SpmcArrayQueue<SendBatch> pool;
    private final int drainLimit;
    private final PaddedAtomicLong combining = new PaddedAtomicLong();
    private final PaddedAtomicLong doorbells = new PaddedAtomicLong();
    private final PaddedAtomicLong combined = new PaddedAtomicLong();
    private final PaddedAtomicLong yields = new PaddedAtomicLong();
    private final MessagePassingQueue.Consumer<SendBatch> drainer = this::onRecord;
    // Combiner-only state (the flag's CAS orders it between holders).
    private int drainRc;

    /**
     * @param maxBatch most requests per doorbell (capped at the queue depth)
     * @param owners   owner indexes that appear in ids ({@link WrIds#owner})
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
        this.drainLimit = depth;
    }

    @Override
    protected int postAdmitted(SendBatch b, int n) {
        int mine = WrIds.owner(b.wrId(0));
        long refusedBefore = mine < owners ? credits.rejected(mine) : 0;
        if (tryAcquire()) {
            // Uncontended (or the holder just left): post directly, behind whatever was queued.
            long mark = 0;
            if (Counters.ENABLED) {
                counters.acquired(false);
                mark = counters.passStart();
            }
            try {
                drainRc = 0;
                drain(drainLimit, n);
                if (queue.isEmpty()) {
                    appendAll(b, n);
                } else {
                    // A record ahead is still being offered (perhaps one of ours): queue behind it,
                    // so each thread's requests keep their order.
                    enqueue(b, n);
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
            enqueue(b, n);
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
     * Combiner only: move up to {@code limit} queued records into postlists, ringing the doorbell
     * each time the list is full, and leave room for {@code reserve} more requests in the list (not
     * yet posted). Provider errors go to {@link #drainRc}. Returns the records drained.
     */
    private int drain(int limit, int reserve) {
        int got = limit > 0 ? queue.drain(drainer, limit) : 0;
        if (pending() + reserve > maxBatch) {
            drainRc = firstError(drainRc, doorbell());
        }
        return got;
    }

    private void onRecord(SendBatch r) {
        int n = r.count();
        for (int i = 0; i < n; i++) {
            if (pending() == maxBatch) {
                drainRc = firstError(drainRc, doorbell());
            }
            append(r, i);
        }
        r.clear();
        pool.offer(r); // single producer: the combiner role is handed over by CAS
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
                drainRc = 0;
                got = drain(left, 0);
                left -= got;
                rc = firstError(rc, firstError(drainRc, doorbell()));
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
}
