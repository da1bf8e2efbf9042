package dev.scalep.endpoints.srd;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The sending side of length-then-payload messaging ({@link MessageTag}) over plain sends on an
 * SRD, UD or RC QP. {@link #send} posts two pooled records as one chain (one doorbell): a
 * {@code LENGTH} message (header only) and a {@code PAYLOAD} message (header + the caller's chunk as
 * a second SGE). At most {@code window} messages are unacknowledged.
 *
 * <p><b>Retransmission.</b> Every record stays unacknowledged until its successful completion. A
 * completion with an error other than {@code WR_FLUSH_ERR} marks the record for retransmission (and
 * counts in {@link #errors()}); a flushed record is marked too, since it never executed. At the next
 * {@link #progress()} the sender recovers the QP if it went to ERR (once every outstanding WQE has
 * completed: RESET, then RTS again) and reposts each marked record <em>from the pool</em>, unchanged
 * except for its header, which gets the {@link MessageTag#RETRANSMIT} flag and the attempt number;
 * the payload is still gathered from the caller's buffer. {@link #retransmitUnacked} does the same
 * for records whose completion is overdue. The receiver drops duplicates by (kind, id), so every
 * message is delivered once.
 *
 * <p>Not thread-safe: one thread sends and calls {@link #progress()}. Owns its QP, AH, pool and
 * header memory; {@link #close()} frees them (the CQ and PD stay the caller's). The caller's payload
 * buffer must stay unchanged until {@link #acked} reports the message.
 */
public final class TaggedSender implements AutoCloseable {
    private final QpType type;
    private final int window;
    private final int mask;
    private final int rnrRetry;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final ProtectionDomain pd;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion headers;
    private final SendWorkRequests pool;
    private final WorkCompletions wcs = new WorkCompletions(32);
    private final boolean[] acked;
    private final boolean[] repost;
    private final int[] attempts;
    private final long[] postNanos;
    private final int[] ids;
    private AddressHandle ah;
    private QpAddress peer;
    private long next;
    private long front;
    private long retransmits;
    private long errors;
    private long recoveries;
    private int lastError;
    private int pendingReposts;

    /**
     * @param type     SRD, UD or RC
     * @param window   messages in flight, a power of two
     * @param rnrRetry rnr_retry for the QP (7: wait for receives forever; less: an RNR error and a retransmission)
     */
    public TaggedSender(ProtectionDomain pd, CompletionQueue cq, QpType type, int window, int rnrRetry) {
        OrderedSender.checkWindow(window);
        this.pd = pd;
        this.type = type;
        this.window = window;
        this.mask = window - 1;
        this.rnrRetry = rnrRetry;
        this.cq = cq;
        int records = 2 * window;
        this.qp = pd.createQp(QpInitAttr.of(type, cq, records).withDepths(records, 1).withSges(2, 1));
        this.headers = pd.register(arena.allocate((long) records * MessageTag.HEADER_BYTES, 64), Access.LOCAL_WRITE);
        this.pool = new SendWorkRequests(records, 2).fill(records);
        for (int r = 0; r < records; r++) {
            pool.opcode(r, Opcode.SEND).flags(r, SendFlags.SIGNALED).numSge(r, 1)
                    .sgeAt(r, 0, headers.address() + (long) r * MessageTag.HEADER_BYTES, MessageTag.HEADER_BYTES,
                            headers.lkey());
        }
        acked = new boolean[records];
        repost = new boolean[records];
        attempts = new int[records];
        postNanos = new long[records];
        ids = new int[window];
    }

    public QueuePair qp() {
        return qp;
    }

    /** Bring the QP to RTS towards {@code peer} (the receiver's QP address). */
    public void connect(QpAddress peer) {
        this.peer = peer;
        qp.connect(type == QpType.RC ? peer : null, Access.ALL_RDMA, rnrRetry);
        if (type != QpType.RC && ah == null) {
            ah = pd.createAh(peer);
            for (int r = 0; r < 2 * window; r++) {
                pool.ud(r, ah, peer.qpn(), QueuePair.QKEY);
            }
        }
    }

    /** Whether another message fits the window. */
    public boolean canSend() {
        return next - front < window;
    }

    /**
     * Send message {@code id}: {@code length} bytes at {@code offset} of {@code src}. Returns false
     * when the window is full (call {@link #progress()}). With {@code payloadFirst} the payload is
     * chained before its length (receivers must cope: they hold it until the length arrived).
     */
    public boolean send(int id, MemoryRegion src, long offset, int length, boolean payloadFirst) {
        if (!canSend()) {
            return false;
        }
        long m = next;
        int s = (int) (m & mask);
        int lr = 2 * s + (payloadFirst ? 1 : 0);
        int pr = 2 * s + (payloadFirst ? 0 : 1);
        MemorySegment h = headers.segment();
        MessageTag.writeHeader(h, (long) lr * MessageTag.HEADER_BYTES, MessageTag.length(id), length, 0);
        MessageTag.writeHeader(h, (long) pr * MessageTag.HEADER_BYTES, MessageTag.payload(id), length, 0);
        pool.wrId(lr, 2 * m + (lr & 1)).numSge(lr, 1);
        pool.wrId(pr, 2 * m + (pr & 1)).numSge(pr, 2).sgeAt(pr, 1, src.address() + offset, length, src.lkey());
        ids[s] = id;
        acked[2 * s] = acked[2 * s + 1] = false;
        repost[2 * s] = repost[2 * s + 1] = false;
        attempts[2 * s] = attempts[2 * s + 1] = 0;
        next++;
        int rc = qp.postSend(pool, 2 * s, 2);
        long now = System.nanoTime();
        postNanos[2 * s] = postNanos[2 * s + 1] = now;
        if (rc != 0) {
            lastError = rc;
            int posted = Math.max(0, pool.badIndex() - 2 * s);
            for (int r = 2 * s + posted; r < 2 * s + 2; r++) {
                repost[r] = true; // refused by the QP (full or in ERR): posted again by progress()
                pendingReposts++;
            }
        }
        return true;
    }

    /** Poll once, handle completions, recover and retransmit what failed; returns completions polled. */
    public int progress() {
        int n = cq.poll(wcs);
        for (int i = 0; i < n; i++) {
            long w = wcs.wrId(i);
            long m = w >>> 1;
            if (m < front || m >= next) {
                continue; // a completion of a message already acknowledged (a retransmission's twin)
            }
            int r = (int) ((m & mask) * 2 + (w & 1));
            int st = wcs.status(i);
            if (acked[r]) {
                continue;
            }
            if (st == WcStatus.SUCCESS) {
                acked[r] = true;
                if (repost[r]) {
                    repost[r] = false;
                    pendingReposts--;
                }
            } else {
                if (st != WcStatus.WR_FLUSH_ERR) {
                    errors++;
                    lastError = st;
                }
                if (!repost[r]) {
                    repost[r] = true;
                    pendingReposts++;
                }
            }
        }
        while (front < next && acked[(int) ((front & mask) * 2)] && acked[(int) ((front & mask) * 2 + 1)]) {
            front++;
        }
        if (pendingReposts > 0) {
            repostMarked();
        }
        return n;
    }

    private void repostMarked() {
        if (qp.state() == QpState.ERR) {
            if (qp.outstandingSends() > 0) {
                return; // wait for every flush before resetting
            }
            qp.reset();
            qp.connect(type == QpType.RC ? peer : null, Access.ALL_RDMA, rnrRetry);
            recoveries++;
        }
        for (long m = front; m < next; m++) {
            int s = (int) (m & mask);
            for (int r = 2 * s; r < 2 * s + 2; r++) {
                if (repost[r] && !acked[r]) {
                    if (!retransmitRecord(r)) {
                        return;
                    }
                    repost[r] = false;
                    pendingReposts--;
                }
            }
        }
    }

    private boolean retransmitRecord(int r) {
        long off = (long) r * MessageTag.HEADER_BYTES;
        int a = ++attempts[r];
        MemorySegment h = headers.segment();
        MessageTag.writeHeader(h, off, MessageTag.tag(h, off), MessageTag.headerLength(h, off),
                MessageTag.RETRANSMIT | (a << 16));
        int rc = qp.postSend(pool, r, 1);
        if (rc != 0) {
            lastError = rc;
            return false;
        }
        postNanos[r] = System.nanoTime();
        retransmits++;
        return true;
    }

    /** Repost every record unacknowledged {@code olderThanNanos} after its last post; returns how many. */
    public int retransmitUnacked(long olderThanNanos) {
        long now = System.nanoTime();
        int k = 0;
        for (long m = front; m < next; m++) {
            int s = (int) (m & mask);
            for (int r = 2 * s; r < 2 * s + 2; r++) {
                if (!acked[r] && now - postNanos[r] >= olderThanNanos && retransmitRecord(r)) {
                    k++;
                }
            }
        }
        return k;
    }

    /** Whether message number {@code m} (0 for the first {@link #send}) was acknowledged. */
    public boolean acked(long m) {
        return m < front;
    }

    /** Messages sent and not yet acknowledged. */
    public int inFlight() {
        return (int) (next - front);
    }

    /** The pool; message {@code m}'s records are {@code 2 (m mod window)} and the next one. */
    public SendWorkRequests pool() {
        return pool;
    }

    public long retransmits() {
        return retransmits;
    }

    /** Error completions other than flushes. */
    public long errors() {
        return errors;
    }

    /** Times the QP was brought back from ERR. */
    public long recoveries() {
        return recoveries;
    }

    /** The last error status or refused post's errno (0 if none). */
    public int lastError() {
        return lastError;
    }

    @Override
    public void close() {
        qp.close();
        if (ah != null) {
            ah.close();
        }
        headers.close();
        pool.close();
        wcs.close();
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
