package dev.scalep.threading;

import dev.scalep.verbs.QpCounters;
import dev.scalep.verbs.counters.CounterGroup;
import dev.scalep.verbs.counters.Counters;
import dev.scalep.verbs.counters.LocalCounter;

/**
 * The counters of one QP's send path ({@link Counters}): work requests handed to the provider and
 * refused by it, doorbells (one per {@code postSend}), postlist lengths in power-of-two buckets,
 * and for shared QPs the acquisitions of the right to post (the lock, or the combiner role),
 * contended ones (the lock was taken: tryLock failed, then lock; the combiner role was held: the
 * requests were handed to its holder), hand-offs (the right passed to another thread than its last
 * holder), combiner passes that posted something and the requests they posted, and the provider's
 * BlueFlame writes (mlx5: a doorbell that carried the WQE itself).
 *
 * <p>Written by the holder of the right to post (single writer at a time, each passing the right
 * on to the next; plain stores), except the combining path's contended count, which threads
 * without the role add atomically: they already share the role's flag and queue. The counters
 * are a local group ({@link Counters#localGroup}): a few to a cache line, copied to the counters
 * file by the publisher thread.
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

    /**
     * The cache line of each counter in the group's block: what the holder of the right to post
     * writes at every doorbell and acquisition in line 0, with its last holder's id; the postlist
     * buckets and the combined count in line 1; the contended count, which threads without the
     * combiner role add to atomically, alone in line 2. A hand-off then moves two lines of
     * counters with the lock, not one per counter.
     */
    private static final int[] LINES = {0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 2, 0, 0, 1, 0};
    /** The slot of line 0 that holds the last holder's thread id. */
    private static final int LAST_HOLDER_SLOT = 7;

    private final CounterGroup group;
    private final LocalCounter wrs;
    private final LocalCounter doorbells;
    private final LocalCounter failed;
    private final LocalCounter[] postlist = new LocalCounter[BUCKETS];
    private final LocalCounter acquired;
    private final LocalCounter contended;
    private final LocalCounter handoffs;
    private final LocalCounter passes;
    private final LocalCounter combined;
    private final LocalCounter blueFlame;
    /** The provider's own count of BlueFlame writes (mlx5; 0 where there are none), copied at each doorbell. */
    private final QpCounters provider;
    /** Thread id of the last holder of the right to post (written by the holder; not a counter). */
    private final LocalCounter lastHolder;

    PathCounters(String object, QpCounters provider) {
        this.provider = provider;
        this.group = Counters.localGroup(Counters.TYPE_QP, object, NAMES, LINES);
        this.wrs = group.local(WRS);
        this.doorbells = group.local(DOORBELLS);
        this.failed = group.local(FAILED_WRS);
        for (int i = 0; i < BUCKETS; i++) {
            postlist[i] = group.local(POSTLIST_FIRST + i);
        }
        this.acquired = group.local(LOCK_ACQUIRED);
        this.contended = group.local(LOCK_CONTENDED);
        this.handoffs = group.local(HANDOFFS);
        this.passes = group.local(PASSES);
        this.combined = group.local(COMBINED);
        this.blueFlame = group.local(BLUEFLAME);
        this.lastHolder = group.scratch(0, LAST_HOLDER_SLOT);
    }

    /** The postlist bucket of a list of {@code n >= 1} requests: 1, 2-3, 4-7, ..., 64 and more. */
    static int bucket(int n) {
        return Math.min(BUCKETS - 1, 31 - Integer.numberOfLeadingZeros(n));
    }

    /** One doorbell for a list of {@code n >= 1} requests. */
    void doorbell(int n) {
        wrs.add(n);
        doorbells.add(1);
        postlist[bucket(n)].add(1);
        long bf = provider.blueFlameWrites();
        if (bf != blueFlame.getWeak()) {
            blueFlame.set(bf);
        }
    }

    /** {@code n} requests of the last list refused by the provider. */
    void failed(int n) {
        failed.add(n);
    }

    /** The right to post was acquired by the calling thread (after waiting, when {@code waited}). */
    void acquired(boolean waited) {
        acquired.add(1);
        if (waited) {
            contended.add(1);
        }
        long me = Thread.currentThread().threadId();
        long last = lastHolder.getWeak();
        if (me != last) {
            if (last != 0) {
                handoffs.add(1);
            }
            lastHolder.set(me);
        }
    }

    /** A thread without the combiner role handed its requests to the holder (several writers: atomic). */
    void handedOver() {
        contended.addAtomic(1);
    }

    /** Mark the start of a combiner pass: the requests posted so far. */
    long passStart() {
        return wrs.getWeak();
    }

    /** End a combiner pass that started at {@code mark}; a pass that posted nothing is not counted. */
    void passEnd(long mark) {
        long k = wrs.getWeak() - mark;
        if (k > 0) {
            passes.add(1);
            combined.add(k);
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
