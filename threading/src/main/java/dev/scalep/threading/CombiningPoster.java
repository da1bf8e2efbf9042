package dev.scalep.threading;

import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QueuePair;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.ControlledMessageHandler;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.jctools.util.PaddedAtomicLong;
import org.jctools.util.Pow2;

import java.lang.foreign.Arena;
import java.lang.invoke.VarHandle;

/**
 * A lock-free send path for a QP shared by several threads, where contention becomes batching:
 * a thread takes credits for its requests (one CAS on the free depth), appends them as one binary
 * message to an Agrona {@link ManyToOneRingBuffer} (one claim per batch, records laid out by
 * {@link SendRecordDescriptor}) and then tries to become the combiner (CAS on a padded flag). The
 * combiner drains what is queued into postlists and rings one doorbell per list (one
 * {@link QueuePair#postSend}); a thread that loses the flag returns at once, because the holder
 * looks at the ring again after releasing the flag and so cannot miss its requests.
 *
 * <p>Progress guarantee: lock-free, and no caller waits for another. A {@code post} call posts its
 * own requests (or queues them behind a slot another thread is still writing) and, as combiner, at
 * most {@link #drainLimit()} requests of other threads in all, then returns. Requests it leaves
 * queued are posted by the next {@code post}, {@link #postQueued()} or credit-starved call on this
 * path from any thread; the endpoint layer calls {@link #postQueued()} whenever it polls. A thread
 * descheduled while holding the flag delays the queued requests (never another thread's call):
 * everyone else keeps queueing until the credits run out and then gets {@link #EAGAIN}.
 *
 * <p>Thread-safe. The ring holds every request that holds a credit (its capacity is sized from
 * {@link #depth()}), so a claim never fails; requests enter the send queue in ring order and each
 * thread's requests in its own order. {@link #post} returns 0 when the requests were accepted, even
 * if another thread posts them; the provider refusing one later is reported to the
 * {@link PostFailureHandler} and counted to its owner.
 */
public final class CombiningPoster extends AbstractSendPath {
    private static final int MSG_BATCH = 1;
    private static final IdleStrategy YIELD = YieldingIdleStrategy.INSTANCE;

    private final ManyToOneRingBuffer ring;
    /** Owns the ring's memory (freed by {@link #close()}, not by the GC). */
    private final Arena memory;
    private final UnsafeBuffer buffer;
    private final int drainLimit;
    private final PaddedAtomicLong combining = new PaddedAtomicLong();
    private final PaddedAtomicLong doorbells = new PaddedAtomicLong();
    private final PaddedAtomicLong combined = new PaddedAtomicLong();
    private final PaddedAtomicLong yields = new PaddedAtomicLong();
    private final ControlledMessageHandler drainer = this::onBatch;
    // Combiner-only state (the flag's CAS orders it between holders).
    private int budget;
    private int drainRc;

    /**
     * @param maxBatch most requests per doorbell (capped at the queue depth)
     * @param owners   owner indexes that appear in ids ({@link WrIds#owner})
     * @param peers    address-handle table size for connectionless QPs (0 for RC)
     */
    public CombiningPoster(QueuePair qp, int maxBatch, int owners, int peers, PostFailureHandler onFailure) {
        super(qp, maxBatch, owners, peers, onFailure);
        this.memory = Arena.ofShared();
        long bytes = ringBytes(depth, this.maxBatch) + RingBufferDescriptor.TRAILER_LENGTH;
        this.buffer = new UnsafeBuffer(memory.allocate(bytes, 64).address(), (int) bytes);
        this.ring = new ManyToOneRingBuffer(buffer);
        this.drainLimit = depth;
    }

    /**
     * Ring capacity: a record per credited request (each its own message at worst), twice (records a
     * combiner has read stay in the ring until its read returns, and their credits may come back
     * before), plus one wrap padding; at least 8 largest messages (Agrona's message size limit).
     */
    static int ringBytes(int depth, int maxBatch) {
        int largest = RecordDescriptor.HEADER_LENGTH + maxBatch * SendRecordDescriptor.RECORD;
        int perRequest = RecordDescriptor.HEADER_LENGTH + SendRecordDescriptor.RECORD;
        long need = Math.max(2L * depth * perRequest + largest, 8L * largest);
        return Pow2.roundToPowerOfTwo((int) Math.max(need, ManyToOneRingBuffer.MIN_CAPACITY));
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
        return postOwn(b, n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    @Override
    public int post(long wrId, Opcode op, int flags, long localAddr, int length, int lkey,
                    long remoteAddr, int rkey, int imm, int peer) {
        if (!credits.tryTake(1)) {
            return full();
        }
        return postOwn(null, 1, wrId, op.code, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
    }

    /**
     * The caller holds credits for its {@code n} requests: those of {@code b}, or the one given in
     * the fields when {@code b} is null. Post them, as combiner if the flag is free, else queue them.
     */
    private int postOwn(SendBatch b, int n, long wrId, int opcode, int flags, long localAddr, int length, int lkey,
                        long remoteAddr, int rkey, int imm, int peer) {
        int mine = WrIds.owner(b != null ? b.wrId[0] : wrId);
        long refusedBefore = mine < owners ? credits.rejected(mine) : 0;
        if (combining.compareAndSet(0, 1)) {
            // Uncontended (or the holder just left): post directly, behind whatever was queued.
            try {
                budget = drainLimit;
                drainRc = 0;
                drain(n);
                if (ringEmpty()) {
                    if (b != null) {
                        appendAll(b, n);
                    } else {
                        append(wrId, opcode, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
                    }
                } else {
                    // A message ahead is still being written (perhaps one of ours): queue behind it,
                    // so each thread's requests keep their order.
                    enqueue(b, n, wrId, opcode, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
                    drain(0);
                }
                doorbell();
            } finally {
                release();
            }
        } else {
            enqueue(b, n, wrId, opcode, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
            // Publish before the flag is read again: the Dekker pairing with a combiner that releases
            // the flag and then re-reads the ring (see combine()).
            VarHandle.fullFence();
        }
        combine();
        // Only a refusal of this caller's own requests is its error; others' go to their owners.
        return mine < owners && credits.rejected(mine) != refusedBefore ? credits.lastRejectErrno(mine) : 0;
    }

    private static int firstError(int a, int b) {
        return a != 0 ? a : b;
    }

    private boolean ringEmpty() {
        return ring.producerPosition() == ring.consumerPosition();
    }

    /** Copy the requests into the ring as one message: one claim for all of them (the caller holds n credits). */
    private void enqueue(SendBatch b, int n, long wrId, int opcode, int flags, long localAddr, int length, int lkey,
                         long remoteAddr, int rkey, int imm, int peer) {
        int at = ring.tryClaim(MSG_BATCH, n * SendRecordDescriptor.RECORD);
        if (at < 0) {
            throw new IllegalStateException("combining ring full with credits held (sizing bug): " + n + " requests");
        }
        if (b == null) {
            SendRecordDescriptor.write(buffer, at, wrId, opcode, flags, localAddr, length, lkey, remoteAddr, rkey, imm,
                    peer);
        } else {
            for (int i = 0; i < n; i++) {
                SendRecordDescriptor.write(buffer, at + i * SendRecordDescriptor.RECORD, b.wrId[i], b.opcode[i],
                        b.flags[i], b.localAddr[i], b.length[i], b.lkey[i], b.remoteAddr[i], b.rkey[i], b.imm[i],
                        b.peer[i]);
            }
        }
        ring.commit(at);
    }

    /**
     * Combiner only: move published requests into postlists, ringing the doorbell each time the
     * list is full, until the ring is empty or the budget is spent, and leave room for
     * {@code reserve} more in the list (not yet posted). Provider errors go to {@link #drainRc}.
     */
    private void drain(int reserve) {
        long head = ring.consumerPosition();
        while (budget > 0) {
            ring.controlledRead(drainer, Integer.MAX_VALUE); // up to the wrap point or the budget
            long now = ring.consumerPosition();
            if (now == head) {
                break; // empty, or the head message is still being written
            }
            head = now;
        }
        if (list.count() + reserve > maxBatch) {
            drainRc = firstError(drainRc, doorbell());
        }
    }

    private ControlledMessageHandler.Action onBatch(int type, MutableDirectBuffer buf, int index, int length) {
        for (int at = index, end = index + length; at < end; at += SendRecordDescriptor.RECORD) {
            if (list.count() == maxBatch) {
                drainRc = firstError(drainRc, doorbell());
            }
            append(buf.getLong(at + SendRecordDescriptor.WR_ID), buf.getInt(at + SendRecordDescriptor.OPCODE),
                    buf.getInt(at + SendRecordDescriptor.FLAGS), buf.getLong(at + SendRecordDescriptor.LOCAL_ADDR),
                    buf.getInt(at + SendRecordDescriptor.LENGTH), buf.getInt(at + SendRecordDescriptor.LKEY),
                    buf.getLong(at + SendRecordDescriptor.REMOTE_ADDR), buf.getInt(at + SendRecordDescriptor.RKEY),
                    buf.getInt(at + SendRecordDescriptor.IMM), buf.getInt(at + SendRecordDescriptor.PEER));
        }
        budget -= length / SendRecordDescriptor.RECORD;
        return budget > 0 ? ControlledMessageHandler.Action.CONTINUE : ControlledMessageHandler.Action.BREAK;
    }

    /** Combiner only: post the list with one doorbell and count it (single writer: plain increments). */
    private int doorbell() {
        int n = list.count();
        if (n == 0) {
            return 0;
        }
        int r = postList();
        doorbells.soVal(doorbells.lpVal() + 1);
        combined.soVal(combined.lpVal() + n);
        return r;
    }

    private void release() {
        // Volatile store, then the volatile re-read of the ring by the caller (combine()).
        combining.set(0);
    }

    /**
     * No credits. Queued requests nobody is posting (a combiner that stopped at its budget) are
     * posted now; when a combiner is at work (or was preempted holding the flag), yield once so
     * it can finish: the credits come back only after it posts. Then report back-pressure.
     */
    private int full() {
        if (!ringEmpty()) {
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
        return ringEmpty() ? 0 : combine();
    }

    /**
     * Drain and post until the ring is empty, another thread holds the flag, a pass makes no
     * progress (the head message is still being written: its writer combines after it commits),
     * or the budget is spent; never waits. Returns the first provider error, or 0.
     */
    private int combine() {
        int rc = 0;
        int left = drainLimit;
        while (left > 0 && !ringEmpty()) {
            if (!combining.compareAndSet(0, 1)) {
                return rc; // the holder re-checks the ring after releasing (see class comment)
            }
            long before = ring.consumerPosition();
            try {
                budget = left;
                drainRc = 0;
                drain(0);
                left = budget;
                rc = firstError(rc, firstError(drainRc, doorbell()));
            } finally {
                release();
            }
            if (ring.consumerPosition() == before) {
                return rc;
            }
        }
        return rc;
    }

    /** Frees the postlist and the ring's memory (no thread may use the path any more). */
    @Override
    public void close() {
        super.close();
        memory.close();
    }

    /** Requests one combiner posts for other threads before it returns. */
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

    /** Requests accepted and not yet posted (an estimate: ring bytes over the record size). */
    public long queued() {
        return ring.size() / SendRecordDescriptor.RECORD;
    }
}
