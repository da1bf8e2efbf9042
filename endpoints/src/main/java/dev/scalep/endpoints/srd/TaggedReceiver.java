package dev.scalep.endpoints.srd;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The receiving side of length-then-payload messaging ({@link MessageTag}) with software tag
 * matching over a ring of bounce receives on an SRD, UD or RC QP.
 *
 * <p><b>Matching.</b> Arrivals are matched against posted match entries {@code (tag, mask)} in post
 * order; an arrival that matches none waits, in its bounce buffer, in the unexpected queue (its
 * receive is not reposted meanwhile), and a newly posted entry is matched against that queue first,
 * oldest arrival first. The receiver keeps {@code lengthReceives} entries for
 * {@code (LENGTH, WILDCARD_ID)} posted; when a length message for id {@code i} matches, it posts the
 * entry {@code (PAYLOAD | i, EXACT)}, so only that id's payload matches it, and reposts a length
 * entry. A payload whose length did not arrive yet is therefore held and matched later. A matched
 * payload whose size differs from its length message counts in {@link #mismatches()}.
 *
 * <p><b>Exactly once.</b> Every arrival is recorded by (kind, id) in a table of {@code 1024} ids
 * per kind; a second arrival of the same (kind, id) (a retransmission) is dropped and counted in
 * {@link #duplicates()}. Ids must therefore be used once among any {@code 1024} consecutive ones.
 *
 * <p>Nothing is allocated per message. The {@link Listener} sees the payload in its bounce buffer,
 * valid during the call. Not thread-safe: one thread calls {@link #progress()}. Owns its QP, bounce
 * memory and refiller; {@link #close()} frees them.
 */
public final class TaggedReceiver implements AutoCloseable {
    /** Receives a matched message. */
    @FunctionalInterface
    public interface Listener {
        /** Message {@code id}: {@code length} bytes at {@code offset} of {@code buf} (valid during the call). */
        void message(int id, MemorySegment buf, long offset, int length);
    }

    private static final int SEEN = 1024;
    private static final int GRH = 40;

    private final QpType type;
    private final int slots;
    private final int slotBytes;
    private final int grh;
    private final int lengthReceives;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion bounce;
    private final WorkCompletions wcs = new WorkCompletions(32);
    private final Listener listener;
    private RecvRefiller refiller;
    // posted match entries, in post order
    private final long[] eTag;
    private final long[] eMask;
    private int entries;
    // unexpected arrivals, in arrival order
    private final long[] uTag;
    private final int[] uSlot;
    private int unexpected;
    // matched arrivals waiting to be consumed (iterative matching)
    private final long[] rTag;
    private final int[] rSlot;
    private int ready;
    private final long[] seenLength = new long[SEEN];
    private final long[] seenPayload = new long[SEEN];
    private final int[] lengthOf = new int[SEEN];
    private long delivered;
    private long duplicates;
    private long mismatches;
    private long errors;
    private long heldPayloads;

    /**
     * @param slots          bounce receives (the receive queue depth)
     * @param maxMessage     largest payload
     * @param lengthReceives wildcard length entries kept posted
     */
    public TaggedReceiver(ProtectionDomain pd, CompletionQueue cq, QpType type, int slots, int maxMessage,
                          int lengthReceives, Listener listener) {
        if (slots < 2 || lengthReceives < 1 || maxMessage < 0) {
            throw new IllegalArgumentException("need slots >= 2, lengthReceives >= 1, maxMessage >= 0");
        }
        this.type = type;
        this.slots = slots;
        this.lengthReceives = lengthReceives;
        this.grh = type == QpType.UD ? GRH : 0;
        this.slotBytes = grh + MessageTag.HEADER_BYTES + maxMessage;
        this.cq = cq;
        this.listener = listener;
        this.qp = pd.createQp(QpInitAttr.of(type, cq, slots).withDepths(1, slots));
        this.bounce = pd.register(arena.allocate((long) slots * slotBytes, 64), Access.LOCAL_WRITE);
        int cap = slots + lengthReceives + 1;
        eTag = new long[cap];
        eMask = new long[cap];
        uTag = new long[slots];
        uSlot = new int[slots];
        rTag = new long[slots];
        rSlot = new int[slots];
        Arrays.fill(seenLength, -1);
        Arrays.fill(seenPayload, -1);
    }

    public QueuePair qp() {
        return qp;
    }

    /** Bring the QP to RTS ({@code peer}: the sender's address, used by RC only). */
    public void connect(QpAddress peer) {
        qp.connect(type == QpType.RC ? peer : null, Access.ALL_RDMA, 7);
    }

    /** Post the bounce receives and the wildcard length entries. Until then senders meet no receive. */
    public void start() {
        if (refiller != null) {
            return;
        }
        refiller = RecvRefiller.forQp(qp, slots, bounce.address(), slotBytes, bounce.lkey(), Math.max(1, slots / 4));
        for (int i = 0; i < lengthReceives; i++) {
            postEntry(MessageTag.LENGTH, MessageTag.WILDCARD_ID);
        }
        consumeReady();
    }

    /** Poll once and match what arrived; returns completions polled. */
    public int progress() {
        int n = cq.poll(wcs);
        for (int i = 0; i < n; i++) {
            if (wcs.status(i) != WcStatus.SUCCESS) {
                errors++;
                continue;
            }
            arrived((int) wcs.wrId(i));
        }
        consumeReady();
        if (refiller != null) {
            refiller.flush();
        }
        return n;
    }

    private long headerOffset(int k) {
        return (long) k * slotBytes + grh;
    }

    private void arrived(int k) {
        MemorySegment b = bounce.segment();
        long tag = MessageTag.tag(b, headerOffset(k));
        long[] seen = MessageTag.kind(tag) == MessageTag.LENGTH ? seenLength : seenPayload;
        long id = tag & MessageTag.ID_MASK;
        int at = (int) (id & (SEEN - 1));
        if (seen[at] == id) {
            duplicates++;
            refiller.release(k);
            return;
        }
        seen[at] = id;
        for (int e = 0; e < entries; e++) {
            if (MessageTag.matches(tag, eTag[e], eMask[e])) {
                removeEntry(e);
                rTag[ready] = tag;
                rSlot[ready++] = k;
                return;
            }
        }
        if (MessageTag.kind(tag) == MessageTag.PAYLOAD) {
            heldPayloads++;
        }
        uTag[unexpected] = tag;
        uSlot[unexpected++] = k;
    }

    /** Post a match entry; an unexpected arrival that matches it is taken at once. */
    private void postEntry(long tag, long mask) {
        for (int u = 0; u < unexpected; u++) {
            if (MessageTag.matches(uTag[u], tag, mask)) {
                rTag[ready] = uTag[u];
                rSlot[ready++] = uSlot[u];
                System.arraycopy(uTag, u + 1, uTag, u, unexpected - u - 1);
                System.arraycopy(uSlot, u + 1, uSlot, u, unexpected - u - 1);
                unexpected--;
                return;
            }
        }
        if (entries == eTag.length) {
            throw new IllegalStateException("more than " + eTag.length
                    + " match entries posted: senders have more messages in flight than the receiver has slots");
        }
        eTag[entries] = tag;
        eMask[entries++] = mask;
    }

    private void removeEntry(int e) {
        System.arraycopy(eTag, e + 1, eTag, e, entries - e - 1);
        System.arraycopy(eMask, e + 1, eMask, e, entries - e - 1);
        entries--;
    }

    private void consumeReady() {
        while (ready > 0) {
            long tag = rTag[--ready];
            int k = rSlot[ready];
            int id = MessageTag.id(tag);
            MemorySegment b = bounce.segment();
            long h = headerOffset(k);
            int len = MessageTag.headerLength(b, h);
            if (MessageTag.kind(tag) == MessageTag.LENGTH) {
                lengthOf[id & (SEEN - 1)] = len;
                refiller.release(k);
                postEntry(MessageTag.payload(id), MessageTag.EXACT);
                postEntry(MessageTag.LENGTH, MessageTag.WILDCARD_ID);
            } else {
                if (len != lengthOf[id & (SEEN - 1)]) {
                    mismatches++;
                } else {
                    delivered++;
                    if (listener != null) {
                        listener.message(id, b, h + MessageTag.HEADER_BYTES, len);
                    }
                }
                refiller.release(k);
            }
        }
    }

    /** Payloads delivered to the listener. */
    public long delivered() {
        return delivered;
    }

    /** Retransmitted copies dropped. */
    public long duplicates() {
        return duplicates;
    }

    /** Payloads whose size differed from their length message. */
    public long mismatches() {
        return mismatches;
    }

    /** Payloads that arrived before their length and waited in the unexpected queue. */
    public long heldPayloads() {
        return heldPayloads;
    }

    /** Arrivals waiting unmatched now. */
    public int unexpected() {
        return unexpected;
    }

    /** Error completions of receives (flushes included). */
    public long errors() {
        return errors;
    }

    @Override
    public void close() {
        qp.close();
        if (refiller != null) {
            refiller.close();
        }
        bounce.close();
        wcs.close();
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
