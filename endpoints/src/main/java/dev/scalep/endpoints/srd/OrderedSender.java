package dev.scalep.endpoints.srd;

import dev.scalep.policies.Ordering;
import dev.scalep.verbs.Access;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WorkCompletions;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The sending side of an ordered channel over one SRD QP and an address handle (no connection).
 * Each operation gets the next 64-bit sequence number; at most {@code window} operations are
 * between the oldest whose callback has not run and the newest (the in-flight limit, which is also
 * the receiver's ring size). Operations:
 * <ul>
 *   <li>{@link #write}: RDMA write-with-immediate, kind {@link ImmCodec#DATA};</li>
 *   <li>{@link #atomicAdd}: an emulated fetch-add, a zero-length write-with-immediate
 *       ({@link ImmCodec#ATOMIC}) or, when the operands do not fit the immediate, a
 *       send-with-immediate of 16 bytes ({@link ImmCodec#ATOMIC_EXT}).</li>
 * </ul>
 * Under {@link Ordering#SENDER_WAIT} an atomic (and everything after it) is held until every earlier
 * operation's send completion arrived; under the other modes everything is posted at once.
 *
 * <p><b>WR pool, chained posts.</b> The pool is one {@link SendWorkRequests} of {@code window}
 * records, filled and linked once ({@link SendWorkRequests#fill}); record {@code seq mod window}
 * belongs to operation {@code seq}. Flags, the SRD destination (AH, remote QPN/QKEY) and lkeys are
 * written at construction; an operation writes only its opcode, wr_id, immediate, remote address and
 * SGE. Operations accumulate until {@code maxChain} are unposted (or {@link #flush()} /
 * {@link #progress()}) and go out as one chain of consecutive records with
 * {@link QueuePair#postSend(SendWorkRequests, int, int)}: one doorbell, the records not rewritten
 * (a chain stops at the ring's wrap and at a held atomic). Nothing is allocated per operation. A
 * record stays untouched until its operation's callback ran, so {@link #retransmit} reposts the
 * original record. Completions are marked in a ring and callbacks run from its front, in post order.
 *
 * <p>Not thread-safe: one thread posts and calls {@link #progress()} (or feeds {@link #completion}
 * from a {@link CqDemux}). Owns its QP, AH, WR pool and staging memory; {@link #close()} frees them.
 */
public final class OrderedSender implements CqDemux.Handler, AutoCloseable {
    /** What a sender needs to know about its receiver (exchanged out of band). */
    public record Remote(QpAddress address, long dataAddr, int dataRkey) {
    }


    private final Ordering ordering;
    private final int window;
    private final int mask;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final AddressHandle ah;
    private final Remote remote;
    private final SendCallback callback;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion stagingMr;
    private final SendWorkRequests pool;
    private final int maxChain;
    private final WorkCompletions wcs;
    private final int[] kind;
    private final boolean[] done;
    private final int[] status;
    private final long[] postNanos;
    private long nextSeq;
    private long nextPost;
    private long front;
    private long posts;
    private long chains;
    private long retransmits;
    private long errors;
    private int lastErrno;

    /**
     * @param pd       protection domain for the QP, AH and staging MR
     * @param cq       completion queue of the QP (polled by {@link #progress()} unless a demux owns it)
     * @param ordering how atomics are ordered after the writes before them
     * @param window   in-flight limit: a power of two up to {@link ImmCodec#MAX_WINDOW}, equal to the receiver's
     * @param remote   the receiver
     * @param callback run in post order for each completed operation (may be {@code null})
     */
    public OrderedSender(ProtectionDomain pd, CompletionQueue cq, Ordering ordering, int window, Remote remote,
                         SendCallback callback) {
        this(pd, cq, ordering, window, remote, callback, 1);
    }

    /**
     * As above, posting chains of up to {@code maxChain} operations (1: every operation is posted
     * when issued; more: operations are posted once {@code maxChain} are waiting, or at
     * {@link #flush()} / {@link #progress()}).
     */
    public OrderedSender(ProtectionDomain pd, CompletionQueue cq, Ordering ordering, int window, Remote remote,
                         SendCallback callback, int maxChain) {
        checkWindow(window);
        if (maxChain < 1 || maxChain > window) {
            throw new IllegalArgumentException("maxChain must be in 1.." + window + ": " + maxChain);
        }
        this.maxChain = maxChain;
        this.ordering = ordering;
        this.window = window;
        this.mask = window - 1;
        this.cq = cq;
        this.remote = remote;
        this.callback = callback;
        this.qp = pd.createQp(QpInitAttr.of(QpType.SRD, cq, 2 * window).withDepths(2 * window, 1).withSges(2, 1));
        qp.connect(null, Access.ALL_RDMA, 7);
        this.ah = pd.createAh(remote.address());
        this.stagingMr = pd.register(arena.allocate((long) window * OrderedReceiver.OPERAND_BYTES, 64),
                Access.LOCAL_WRITE);
        int rq = remote.address().qpn();
        pool = new SendWorkRequests(window, 1).fill(window);
        for (int r = 0; r < window; r++) {
            pool.flags(r, SendFlags.SIGNALED);
            pool.srdRdma(r, ah, rq, QueuePair.QKEY, remote.dataAddr(), remote.dataRkey());
            pool.numSge(r, 1).sgeAt(r, 0, stagingMr.address() + (long) r * OrderedReceiver.OPERAND_BYTES,
                    OrderedReceiver.OPERAND_BYTES, stagingMr.lkey());
        }
        wcs = new WorkCompletions(32);
        kind = new int[window];
        done = new boolean[window];
        status = new int[window];
        postNanos = new long[window];
    }

    static void checkWindow(int window) {
        if (window < 1 || window > ImmCodec.MAX_WINDOW || Integer.bitCount(window) != 1) {
            throw new IllegalArgumentException("window must be a power of two in 1.." + ImmCodec.MAX_WINDOW + ": "
                    + window);
        }
    }

    public QueuePair qp() {
        return qp;
    }

    public int window() {
        return window;
    }

    public Ordering ordering() {
        return ordering;
    }

    /** Whether another operation fits the window now. */
    public boolean canPost() {
        return nextSeq - front < window;
    }

    /**
     * Write {@code length} bytes at {@code src + srcOffset} to the receiver's data region at
     * {@code dstOffset}. Returns the sequence number, or -1 when the window is full (call
     * {@link #progress()} and retry). The source must stay unchanged until the callback ran.
     */
    public long write(MemoryRegion src, long srcOffset, int length, long dstOffset) {
        if (!canPost()) {
            return -1;
        }
        long seq = nextSeq++;
        int s = (int) (seq & mask);
        SendWorkRequests w = pool;
        w.opcode(s, Opcode.RDMA_WRITE_WITH_IMM).wrId(s, seq).imm(s, ImmCodec.encode(ImmCodec.DATA, seq, 0));
        w.rdma(s, remote.dataAddr() + dstOffset, remote.dataRkey());
        w.numSge(s, 1).sgeAt(s, 0, src.address() + srcOffset, length, src.lkey());
        kind[s] = ImmCodec.DATA;
        issued();
        return seq;
    }

    /**
     * Emulated fetch-add of {@code addend} to the receiver's counter {@code counter}, applied after
     * every operation posted before it. Returns the sequence number, or -1 when the window is full.
     */
    public long atomicAdd(int counter, long addend) {
        if (!canPost()) {
            return -1;
        }
        long seq = nextSeq++;
        int s = (int) (seq & mask);
        SendWorkRequests w = pool;
        if (ImmCodec.fitsInline(counter, addend)) {
            w.opcode(s, Opcode.RDMA_WRITE_WITH_IMM).wrId(s, seq)
                    .imm(s, ImmCodec.encode(ImmCodec.ATOMIC, seq, ImmCodec.atomicPayload(counter, addend)));
            w.rdma(s, remote.dataAddr(), remote.dataRkey()).numSge(s, 0);
            kind[s] = ImmCodec.ATOMIC;
        } else {
            MemorySegment st = stagingMr.segment();
            long off = (long) s * OrderedReceiver.OPERAND_BYTES;
            st.set(JAVA_INT, off, counter);
            st.set(JAVA_INT, off + 4, 0);
            st.set(JAVA_LONG, off + 8, addend);
            w.opcode(s, Opcode.SEND_WITH_IMM).wrId(s, seq).imm(s, ImmCodec.encode(ImmCodec.ATOMIC_EXT, seq, 0));
            w.ud(s, ah, remote.address().qpn(), QueuePair.QKEY);
            w.numSge(s, 1).sgeAt(s, 0, stagingMr.address() + off, OrderedReceiver.OPERAND_BYTES, stagingMr.lkey());
            kind[s] = ImmCodec.ATOMIC_EXT;
        }
        issued();
        return seq;
    }

    private void issued() {
        if (nextSeq - nextPost >= maxChain) {
            pump();
        }
    }

    /** The WR pool: operation {@code seq} uses record {@link #pooledIndex pooledIndex(seq)} (tests check reuse). */
    public SendWorkRequests pool() {
        return pool;
    }

    /** The pool record of operation {@code seq}. */
    public int pooledIndex(long seq) {
        return (int) (seq & mask);
    }

    /** Post every operation that may be posted now, in chains. */
    public void flush() {
        pump();
    }

    /** Post what may be posted now, as chains of consecutive pool records of up to {@code maxChain}. */
    private void pump() {
        while (nextPost < nextSeq) {
            int s = (int) (nextPost & mask);
            int k = 0;
            long limit = Math.min(nextSeq - nextPost, Math.min(maxChain, window - s));
            while (k < limit) {
                int r = s + k;
                if (ordering == Ordering.SENDER_WAIT && kind[r] != ImmCodec.DATA && front < nextPost + k) {
                    break; // held until every earlier operation completed
                }
                k++;
            }
            if (k == 0) {
                return;
            }
            int rc = qp.postSend(pool, s, k);
            int posted = rc == 0 ? k : Math.max(0, pool.badIndex() - s);
            long now = System.nanoTime();
            for (int i = 0; i < posted; i++) {
                postNanos[s + i] = now;
            }
            posts += posted;
            nextPost += posted;
            if (rc != 0) {
                lastErrno = rc;
                return; // SQ full: retried at the next progress
            }
            chains++;
            if (k < limit) {
                return; // a held atomic
            }
        }
    }

    /** Poll this sender's CQ once, run callbacks due, post held operations; returns completions polled. */
    public int progress() {
        int n = cq.poll(wcs);
        for (int i = 0; i < n; i++) {
            completion(wcs, i);
        }
        drain();
        return n;
    }

    @Override
    public void completion(WorkCompletions w, int i) {
        long seq = w.wrId(i);
        if (seq < front || seq >= nextPost) {
            return; // a retransmission's second completion
        }
        int s = (int) (seq & mask);
        if (done[s]) {
            return;
        }
        done[s] = true;
        status[s] = w.status(i);
        if (status[s] != 0) {
            errors++;
        }
    }

    /** Run the callbacks now due (post order) and post held operations. {@link #progress()} calls it. */
    public void drain() {
        while (front < nextPost && done[(int) (front & mask)]) {
            int s = (int) (front & mask);
            done[s] = false;
            long seq = front++;
            if (callback != null) {
                callback.completed(seq, kind[s], status[s]);
            }
        }
        pump();
    }

    /**
     * Repost, with its original pooled WR, every posted operation whose completion has not arrived
     * {@code olderThanNanos} after it was posted. Returns how many were reposted.
     */
    public int retransmitUnacked(long olderThanNanos) {
        long now = System.nanoTime();
        int r = 0;
        for (long q = front; q < nextPost; q++) {
            int s = (int) (q & mask);
            if (!done[s] && now - postNanos[s] >= olderThanNanos && retransmit(q)) {
                r++;
            }
        }
        return r;
    }

    /** Repost operation {@code seq} (posted, callback not yet run) with its original WR. */
    public boolean retransmit(long seq) {
        if (seq < front || seq >= nextPost) {
            return false;
        }
        int s = (int) (seq & mask);
        int rc = qp.postSend(pool, s, 1);
        if (rc != 0) {
            lastErrno = rc;
            return false;
        }
        postNanos[s] = System.nanoTime();
        retransmits++;
        return true;
    }

    /** Operations whose callback has not run. */
    public int inFlight() {
        return (int) (nextSeq - front);
    }

    public long nextSeq() {
        return nextSeq;
    }

    /** First sequence whose callback has not run. */
    public long front() {
        return front;
    }

    public long posts() {
        return posts;
    }

    /** Chains posted (doorbells rung for new operations, retransmissions not counted). */
    public long chains() {
        return chains;
    }

    public long retransmits() {
        return retransmits;
    }

    public long errors() {
        return errors;
    }

    /** The errno of the last refused post (0 if none). */
    public int lastErrno() {
        return lastErrno;
    }

    /** Destroy the QP and AH, free the pool. Idempotent. */
    @Override
    public void close() {
        qp.close();
        ah.close();
        stagingMr.close();
        pool.close();
        wcs.close();
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
