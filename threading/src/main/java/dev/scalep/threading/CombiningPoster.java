package dev.scalep.threading;

import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QueuePair;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A lock-free send path for a QP shared by several threads, where contention becomes batching:
 * a thread takes credits for its requests (one CAS on the free depth), appends them to an MPSC ring
 * of primitive slots and then tries to become the combiner (CAS on a flag). The combiner drains
 * everything queued into one postlist and rings one doorbell (one {@link QueuePair#postSend}), and
 * repeats until the ring is empty; a thread that loses the flag returns at once, because the
 * holder looks at the ring again after releasing the flag and so cannot miss its requests.
 *
 * <p>Thread-safe. The ring holds at least {@link #depth()} slots and a request needs a credit
 * before it enters it, so the ring never overflows; requests enter the send queue in ring order.
 * {@link #post} returns 0 when the requests were accepted, even if another thread posts them;
 * the provider refusing one later is reported to the {@link PostFailureHandler}.
 */
public final class CombiningPoster extends AbstractSendPath {
    private static final VarHandle FLAG;

    static {
        try {
            FLAG = MethodHandles.lookup().findVarHandle(CombiningPoster.class, "combining", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SendSlotRing ring;
    private final PaddedAtomicLong doorbells = new PaddedAtomicLong();
    private final PaddedAtomicLong combined = new PaddedAtomicLong();
    private final PaddedAtomicLong yields = new PaddedAtomicLong();
    @SuppressWarnings("unused") // padding: keep the flag off the ring's and the counters' lines
    private long q00, q01, q02, q03, q04, q05, q06, q07;
    private volatile int combining;
    @SuppressWarnings("unused")
    private long q10, q11, q12, q13, q14, q15, q16, q17;

    /**
     * @param maxBatch most requests per doorbell (capped at the queue depth)
     * @param owners   owner indexes that appear in ids ({@link WrIds#owner})
     * @param peers    address-handle table size for connectionless QPs (0 for RC)
     */
    public CombiningPoster(QueuePair qp, int maxBatch, int owners, int peers, PostFailureHandler onFailure) {
        super(qp, maxBatch, owners, peers, onFailure);
        this.ring = new SendSlotRing(depth);
    }

    @Override
    public int post(SendBatch b) {
        int n = b.count();
        int check = batchCheck(n);
        if (check != ADMIT) {
            return check;
        }
        if (!credits.tryTake(n)) {
            return full();
        }
        if (FLAG.compareAndSet(this, 0, 1)) {
            // Uncontended (or the holder just left): post directly, behind whatever was queued.
            int rc;
            try {
                rc = drainRing(n);
                if (ring.drained()) {
                    appendAll(b, n);
                } else {
                    // A slot ahead is still being written (perhaps behind requests of ours): queue
                    // behind it, so each thread's requests keep their order.
                    enqueue(b, n);
                    int r = drainRing(0);
                    if (r != 0 && rc == 0) {
                        rc = r;
                    }
                }
                int r = doorbell();
                if (r != 0) {
                    rc = r;
                }
            } finally {
                release();
            }
            int late = combine();
            return rc != 0 ? rc : late;
        }
        enqueue(b, n);
        VarHandle.fullFence(); // publishes before the flag is read again (see SendSlotRing.put)
        return combine();
    }

    /** Copy the batch into the ring: one atomic claim for all of it (the caller holds n credits). */
    private void enqueue(SendBatch b, int n) {
        long p = ring.claim(n);
        for (int i = 0; i < n; i++) {
            ring.put(p + i, b.wrId[i], b.opcode[i], b.flags[i], b.localAddr[i], b.length[i], b.lkey[i],
                    b.remoteAddr[i], b.rkey[i], b.imm[i], b.peer[i]);
        }
    }

    @Override
    public int post(long wrId, Opcode op, int flags, long localAddr, int length, int lkey,
                    long remoteAddr, int rkey, int imm, int peer) {
        if (!credits.tryTake(1)) {
            return full();
        }
        if (FLAG.compareAndSet(this, 0, 1)) {
            int rc;
            try {
                rc = drainRing(1);
                if (ring.drained()) {
                    append(wrId, op.code, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
                } else {
                    ring.put(ring.claim(1), wrId, op.code, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
                    int r = drainRing(0);
                    if (r != 0 && rc == 0) {
                        rc = r;
                    }
                }
                int r = doorbell();
                if (r != 0) {
                    rc = r;
                }
            } finally {
                release();
            }
            int late = combine();
            return rc != 0 ? rc : late;
        }
        ring.put(ring.claim(1), wrId, op.code, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
        VarHandle.fullFence();
        return combine();
    }

    /**
     * Combiner only: move every published request into postlists, ringing the doorbell each time
     * the list is full, and leave room for {@code reserve} more in the list (not yet posted).
     * Returns the first provider error met, or 0.
     */
    private int drainRing(int reserve) {
        int rc = 0;
        int b;
        while ((b = ring.readyBase()) >= 0) {
            if (list.count() == maxBatch) {
                int r = doorbell();
                if (r != 0 && rc == 0) {
                    rc = r;
                }
            }
            append(ring.wrId(b), ring.opcode(b), ring.flags(b), ring.localAddr(b), ring.length(b),
                    ring.lkey(b), ring.remoteAddr(b), ring.rkey(b), ring.imm(b), ring.peer(b));
            ring.consume(b);
        }
        if (list.count() + reserve > maxBatch) {
            int r = doorbell();
            if (r != 0 && rc == 0) {
                rc = r;
            }
        }
        return rc;
    }

    /** Combiner only: post the list with one doorbell and count it (single writer: plain increments). */
    private int doorbell() {
        int n = list.count();
        if (n == 0) {
            return 0;
        }
        int r = postList();
        doorbells.setRelease(doorbells.getPlain() + 1);
        combined.setRelease(combined.getPlain() + n);
        return r;
    }

    private void release() {
        ring.publishHead();
        // Volatile store, then the volatile re-read of the ring by the caller (combine()).
        FLAG.setVolatile(this, 0);
    }

    /**
     * No credits. When requests are queued and their combiner is still at work (or was preempted
     * holding the role), yield the processor once so it can finish: the credits come back only
     * after it posts. Then report back-pressure; never waits for the role.
     */
    private int full() {
        if ((int) FLAG.getVolatile(this) != 0 && ring.hasReady()) {
            yields.setRelease(yields.getPlain() + 1); // racy count; statistics only
            Thread.yield();
        }
        return EAGAIN;
    }

    /** Drain and post until the ring is empty or another thread holds the combiner role; never waits. */
    private int combine() {
        int rc = 0;
        while (ring.hasReady()) {
            if (!FLAG.compareAndSet(this, 0, 1)) {
                return rc; // the holder re-checks the ring after releasing (see class comment)
            }
            try {
                int r = drainRing(0);
                int r2 = doorbell();
                if (r != 0) {
                    rc = r;
                } else if (r2 != 0) {
                    rc = r2;
                }
            } finally {
                release();
            }
        }
        return rc;
    }

    /** Postlists this poster rang (one doorbell each). */
    public long doorbells() {
        return doorbells.get();
    }

    /** Requests posted through those doorbells. */
    public long combined() {
        return combined.get();
    }

    /** Requests accepted and not yet posted (an estimate). */
    public long queued() {
        return ring.size();
    }
}
