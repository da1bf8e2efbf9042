package dev.scalep.threading;

import dev.scalep.verbs.Errno;
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
        if (n > maxBatch) {
            return Errno.EINVAL;
        }
        if (n == 0) {
            return 0;
        }
        if (!credits.tryTake(n)) {
            return EAGAIN;
        }
        for (int i = 0; i < n; i++) {
            enqueue(b.wrId[i], b.opcode[i], b.flags[i], b.localAddr[i], b.length[i], b.lkey[i],
                    b.remoteAddr[i], b.rkey[i], b.imm[i], b.peer[i]);
        }
        return combine();
    }

    @Override
    public int post(long wrId, Opcode op, int flags, long localAddr, int length, int lkey,
                    long remoteAddr, int rkey, int imm, int peer) {
        if (!credits.tryTake(1)) {
            return EAGAIN;
        }
        enqueue(wrId, op.code, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
        return combine();
    }

    private void enqueue(long wrId, int opcode, int flags, long localAddr, int length, int lkey,
                         long remoteAddr, int rkey, int imm, int peer) {
        if (!ring.offer(wrId, opcode, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer)) {
            // Unreachable while credits <= depth <= ring capacity; a broken invariant, not back-pressure.
            credits.getAndAdd(1);
            throw new IllegalStateException("combining ring overflow on QP " + qp.qpNum());
        }
    }

    /** Drain and post until the ring is empty or another thread holds the combiner role. */
    private int combine() {
        int rc = 0;
        while (ring.hasReady()) {
            if (!FLAG.compareAndSet(this, 0, 1)) {
                return rc; // the holder re-checks the ring after releasing (see class comment)
            }
            try {
                int b;
                while ((b = ring.readyBase()) >= 0) {
                    int n = 0;
                    do {
                        append(ring.wrId(b), ring.opcode(b), ring.flags(b), ring.localAddr(b), ring.length(b),
                                ring.lkey(b), ring.remoteAddr(b), ring.rkey(b), ring.imm(b), ring.peer(b));
                        ring.consume(b);
                        n++;
                    } while (n < maxBatch && (b = ring.readyBase()) >= 0);
                    int r = postList();
                    doorbells.getAndAdd(1);
                    combined.getAndAdd(n);
                    if (r != 0) {
                        rc = r;
                    }
                }
            } finally {
                ring.publishHead();
                // Volatile store, then the volatile re-read of the ring in the loop condition.
                FLAG.setVolatile(this, 0);
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
