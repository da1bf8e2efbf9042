package dev.scalep.endpoints.srd;

import dev.scalep.policies.Ordering;
import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The receiving side of an ordered channel over one SRD QP. Every arrival is a write-with-immediate
 * (or, for {@link ImmCodec#ATOMIC_EXT}, a send-with-immediate whose 16-byte operands land in the
 * consumed receive's buffer) and consumes a receive. The receiver widens the 16-bit sequence,
 * drops duplicates (retransmissions), records the arrival in a ring of {@code window} slots (the
 * bitmap window: slot {@code seq mod window} holds {@code seq} while it waits) and applies:
 * <ul>
 *   <li>{@link Ordering#RECEIVER_REORDER}: from the front of the ring, in sequence order, so an
 *       emulated atomic is applied only after every operation before it arrived;</li>
 *   <li>{@link Ordering#NONE} and {@link Ordering#SENDER_WAIT}: on arrival (under sender-wait the
 *       sender already held the atomic back until the writes before it completed).</li>
 * </ul>
 * Emulated atomics are {@code getAndAddRelease} on a 64-bit counter in native host memory;
 * {@link #counter(int)} reads with acquire semantics, so a thread that sees the added value sees
 * every byte the writes before it placed.
 *
 * <p>Not thread-safe: one thread calls {@link #progress()} (or a {@link CqDemux} delivers to
 * {@link #completion}); {@link #counter(int)} may be called from any thread. Owns its QP, MRs and
 * native memory; {@link #close()} releases them (the CQ and PD stay the caller's).
 */
public final class OrderedReceiver implements CqDemux.Handler, AutoCloseable {
    private static final VarHandle COUNTER = JAVA_LONG.varHandle();
    static final int OPERAND_BYTES = 16;

    private final Ordering ordering;
    private final int window;
    private final int mask;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final MemoryRegion dataMr;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment counters;
    private final int counterCount;
    private final MemoryRegion recvMr;
    private final RecvRefiller refiller;
    private final WorkCompletions wcs;
    private final DeliveryListener listener;
    private final long[] slotSeq;
    private final int[] slotKind;
    private final int[] slotA;
    private final long[] slotB;
    private long head;
    private long duplicates;
    private long applied;
    private long errors;

    /**
     * @param pd        protection domain for the QP and MRs
     * @param cq        completion queue of the QP (polled by {@link #progress()} unless a demux owns it)
     * @param ordering  when to apply arrivals
     * @param window    in-flight limit, a power of two up to {@link ImmCodec#MAX_WINDOW}; must equal the sender's
     * @param data      the memory remote writes land in (registered here for remote write)
     * @param counters  number of 64-bit counters
     * @param listener  told of each applied operation (may be {@code null})
     */
    public OrderedReceiver(ProtectionDomain pd, CompletionQueue cq, Ordering ordering, int window, MemorySegment data,
                           int counters, DeliveryListener listener) {
        OrderedSender.checkWindow(window);
        this.ordering = ordering;
        this.window = window;
        this.mask = window - 1;
        this.cq = cq;
        this.listener = listener;
        this.counterCount = counters;
        this.counters = arena.allocate(8L * Math.max(1, counters), 64);
        int threshold = Math.max(1, window / 4);
        int receives = window * 2 + threshold;
        this.qp = pd.createQp(QpInitAttr.of(QpType.SRD, cq, window).withDepths(1, receives));
        this.dataMr = pd.register(data, Access.ALL_RDMA);
        MemorySegment rbuf = arena.allocate((long) receives * OPERAND_BYTES, 64);
        this.recvMr = pd.register(rbuf, Access.LOCAL_WRITE);
        qp.connect(null, Access.ALL_RDMA, 7);
        this.refiller = RecvRefiller.forQp(qp, receives, recvMr.address(), OPERAND_BYTES, recvMr.lkey(), threshold);
        this.wcs = new WorkCompletions(32);
        slotSeq = new long[window];
        Arrays.fill(slotSeq, -1);
        slotKind = new int[window];
        slotA = new int[window];
        slotB = new long[window];
    }

    public QueuePair qp() {
        return qp;
    }

    /** What a sender needs to reach this receiver. */
    public OrderedSender.Remote remote() {
        return new OrderedSender.Remote(qp.address(), dataMr.address(), dataMr.rkey());
    }

    public RecvRefiller refiller() {
        return refiller;
    }

    /** Counter {@code i}, read with acquire semantics. Any thread. */
    public long counter(int i) {
        Objects.checkIndex(i, counterCount);
        return (long) COUNTER.getAcquire(counters, 8L * i);
    }

    /** Lowest sequence number not yet arrived (everything below arrived). */
    public long head() {
        return head;
    }

    public long duplicates() {
        return duplicates;
    }

    public long applied() {
        return applied;
    }

    public long errors() {
        return errors;
    }

    /** Poll this receiver's CQ once; returns completions handled (or a negative errno). */
    public int progress() {
        int n = cq.poll(wcs);
        for (int i = 0; i < n; i++) {
            completion(wcs, i);
        }
        return n;
    }

    @Override
    public void completion(WorkCompletions w, int i) {
        int rid = (int) w.wrId(i);
        if (w.status(i) != WcStatus.SUCCESS || !w.hasImm(i)) {
            errors++;
            if (w.status(i) == WcStatus.SUCCESS) {
                refiller.release(rid);
            }
            return;
        }
        int imm = w.imm(i);
        long seq = ImmCodec.widen(ImmCodec.seq16(imm), head);
        int s = (int) (seq & mask);
        if (seq < head || slotSeq[s] == seq) {
            duplicates++;
            refiller.release(rid);
            return;
        }
        int kind = ImmCodec.kind(imm);
        int a;
        long b;
        if (kind == ImmCodec.ATOMIC) {
            int p = ImmCodec.payload(imm);
            a = ImmCodec.atomicCounter(p);
            b = ImmCodec.atomicAddend(p);
        } else if (kind == ImmCodec.ATOMIC_EXT) {
            long buf = refiller.buffer(rid) - recvMr.address();
            a = recvMr.segment().get(JAVA_INT, buf);
            b = recvMr.segment().get(JAVA_LONG, buf + 8);
        } else {
            a = w.byteLen(i);
            b = 0;
        }
        refiller.release(rid);
        slotSeq[s] = seq;
        slotKind[s] = kind;
        slotA[s] = a;
        slotB[s] = b;
        if (ordering != Ordering.RECEIVER_REORDER) {
            apply(seq, kind, a, b);
        }
        while (slotSeq[(int) (head & mask)] == head) {
            int h = (int) (head & mask);
            if (ordering == Ordering.RECEIVER_REORDER) {
                apply(head, slotKind[h], slotA[h], slotB[h]);
            }
            slotSeq[h] = -1;
            head++;
        }
    }

    private void apply(long seq, int kind, int a, long b) {
        long before = 0;
        if (kind != ImmCodec.DATA) {
            if (a < 0 || a >= counterCount) {
                errors++;
                return;
            }
            before = (long) COUNTER.getAndAddRelease(counters, 8L * a, b);
        }
        applied++;
        if (listener != null) {
            listener.delivered(seq, kind, a, b, before);
        }
    }

    /** Destroy the QP and deregister the MRs. Idempotent. */
    @Override
    public void close() {
        qp.close();
        refiller.close();
        dataMr.close();
        recvMr.close();
        wcs.close();
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
