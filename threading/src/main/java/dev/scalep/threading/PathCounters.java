package dev.scalep.threading;

import dev.scalep.verbs.QpCounters;
import dev.scalep.verbs.counters.CounterGroup;
import dev.scalep.verbs.counters.Counters;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The counters of one QP's send path ({@link Counters}): work requests handed to the provider and
 * refused by it, doorbells (one per {@code postSend}), postlist lengths in power-of-two buckets,
 * and for shared QPs the acquisitions of the right to post (the lock, or the combiner role),
 * contended ones (the lock was taken: tryLock failed, then lock; the combiner role was held: the
 * requests were handed to its holder), hand-offs (the right passed to another thread than its last
 * holder), combiner passes that posted something and the requests they posted, and the provider's
 * BlueFlame writes (mlx5: a doorbell that carried the WQE itself).
 *
 * <p>Written by the holder of the right to post (single writer at a time, each passing the right on to the next: {@link Counters#add}), except
 * the combining path's contended count, which threads without the role add atomically: they
 * already share the role's flag and queue.
 */
public final class PathCounters implements AutoCloseable {
    /** Counter names, in {@link CounterGroup} order. */
    static final String[] NAMES = {"wrs", "doorbells", "failed-wrs", "postlist-1", "postlist-2-3", "postlist-4-7",
        "postlist-8-15", "postlist-16-31", "postlist-32-63", "postlist-64+", "lock-acquired", "lock-contended",
        "handoffs", "combiner-passes", "combined-wrs", "blueflame-writes"};
    public static final int WRS = 0;
    public static final int DOORBELLS = 1;
    public static final int FAILED_WRS = 2;
    public static final int POSTLIST_FIRST = 3;
    public static final int BUCKETS = 7;
    public static final int LOCK_ACQUIRED = 10;
    public static final int LOCK_CONTENDED = 11;
    public static final int HANDOFFS = 12;
    public static final int PASSES = 13;
    public static final int COMBINED = 14;
    public static final int BLUEFLAME = 15;

    private final CounterGroup group;
    private final AtomicCounter wrs;
    private final AtomicCounter doorbells;
    private final AtomicCounter failed;
    private final AtomicCounter[] postlist = new AtomicCounter[BUCKETS];
    private final AtomicCounter acquired;
    private final AtomicCounter contended;
    private final AtomicCounter handoffs;
    private final AtomicCounter passes;
    private final AtomicCounter combined;
    private final AtomicCounter blueFlame;
    /** The provider's own count of BlueFlame writes (mlx5; 0 where there are none), copied at each doorbell. */
    private final QpCounters provider;
    /** Thread id of the last holder of the right to post (written by the holder). */
    private long lastHolder;

    PathCounters(String object, QpCounters provider) {
        this.provider = provider;
        this.group = Counters.group(Counters.TYPE_QP, object, NAMES);
        this.wrs = group.counter(WRS);
        this.doorbells = group.counter(DOORBELLS);
        this.failed = group.counter(FAILED_WRS);
        for (int i = 0; i < BUCKETS; i++) {
            postlist[i] = group.counter(POSTLIST_FIRST + i);
        }
        this.acquired = group.counter(LOCK_ACQUIRED);
        this.contended = group.counter(LOCK_CONTENDED);
        this.handoffs = group.counter(HANDOFFS);
        this.passes = group.counter(PASSES);
        this.combined = group.counter(COMBINED);
        this.blueFlame = group.counter(BLUEFLAME);
    }

    /** The postlist bucket of a list of {@code n >= 1} requests: 1, 2-3, 4-7, ..., 64 and more. */
    static int bucket(int n) {
        return Math.min(BUCKETS - 1, 31 - Integer.numberOfLeadingZeros(n));
    }

    /** One doorbell for a list of {@code n >= 1} requests. */
    void doorbell(int n) {
        Counters.add(wrs, n);
        Counters.add(doorbells, 1);
        Counters.add(postlist[bucket(n)], 1);
        blueFlame.setWeak(provider.blueFlameWrites());
    }

    /** {@code n} requests of the last list refused by the provider. */
    void failed(int n) {
        Counters.add(failed, n);
    }

    /** The right to post was acquired by the calling thread (after waiting, when {@code waited}). */
    void acquired(boolean waited) {
        Counters.add(acquired, 1);
        if (waited) {
            Counters.add(contended, 1);
        }
        long me = Thread.currentThread().threadId();
        if (me != lastHolder) {
            if (lastHolder != 0) {
                Counters.add(handoffs, 1);
            }
            lastHolder = me;
        }
    }

    /** A thread without the combiner role handed its requests to the holder (several writers: atomic). */
    void handedOver() {
        contended.increment();
    }

    /** Mark the start of a combiner pass: the requests posted so far. */
    long passStart() {
        return wrs.getWeak();
    }

    /** End a combiner pass that started at {@code mark}; a pass that posted nothing is not counted. */
    void passEnd(long mark) {
        long k = wrs.getWeak() - mark;
        if (k > 0) {
            Counters.add(passes, 1);
            Counters.add(combined, k);
        }
    }

    /** The counters (values by the index constants above). */
    public CounterGroup group() {
        return group;
    }

    @Override
    public void close() {
        group.close();
    }
}
