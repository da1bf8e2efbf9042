package dev.scalep.endpoints;

import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Tagged two-sided messages of one thread slot of a {@link WorldEndpoints}
 * ({@link RankEndpoint#messages()}), with MPI's matching: thread-bound like its
 * {@link RankEndpoint}, and every call is made by the thread holding it.
 *
 * <p><b>Addressing.</b> A message sent by thread slot {@code t} to rank {@code r} reaches thread
 * slot {@code t} of rank {@code r} (the endpoint of the same index, as the world connects them),
 * whichever endpoint of that rank's QP takes it from the device; this rank is a rank like any
 * other (through the loopback). In a world opened with {@link SlotAddressing#ANY_SLOT} a send may
 * name any slot of the rank ({@link #send(int, int, int, MemorySegment, long, long)}); the
 * receive's status then names the sending slot ({@link MessageStatus#sourceSlot()}). A receive
 * names a source rank (any of its slots) or {@link #ANY_SOURCE}, a tag and a
 * tag mask: a message matches when {@code (messageTag & mask) == (tag & mask)} (mask 0: any tag,
 * {@link #ALL_BITS}: exactly {@code tag}).
 * Tags {@code 0x7F000000..0x7FFFFFFF} (top byte {@code 0x7F}) are reserved for {@link Collectives}:
 * a send, receive or probe that names one is refused ({@link IllegalArgumentException}, nothing
 * done), and a receive or probe whose mask would match them never takes or reports a collective's
 * message.
 *
 * <p><b>Order.</b> Two messages from one thread slot to one thread slot that match the same
 * receive are received in the order sent (MPI's non-overtaking rule), on EFA too: every message
 * carries a per-pair sequence number and the receiver takes them in that order from a ring
 * indexed by it, whatever order SRD delivered them in. A message matches the earliest posted
 * receive it fits; a receive, the earliest waiting message it fits.
 *
 * <p><b>Requests.</b> {@link #send} and {@link #recv} return a request handle (0 or more),
 * {@link #COMPLETED} for a send that is complete already (an eager one: its bytes were copied),
 * {@link #BACK_PRESSURED} when nothing was taken (no credit left towards that rank, the send
 * queue full, or all {@value MessageHub#REQUESTS} requests of the slot open: progress, receive,
 * then call again), or a negative errno when the device refused the send. {@link #test} and
 * {@link #waitFor} report a request's {@link MessageStatus} once and free the handle. Nothing on
 * the path of an eager message allocates.
 *
 * <p><b>Protocols.</b> A message of at most {@link #eagerLimit()} bytes (the receive slot less a
 * {@value MessageHub#HEADER}-byte header) is eager: copied into a registered staging slot and
 * sent into a runtime-owned receive of the target, which copies it into the destination slot's
 * inbox; a receive copies it out when it matches. Longer messages go by rendezvous and need a
 * {@link Window}: the source is this rank's part of a window ({@link #send(int, int, Window, long, long)}),
 * the message carries the window, offset and length, and the matching receive, which must be
 * posted on a window too, pulls the bytes with RDMA reads and then tells the sender, whose request
 * completes then (the source must not change until it does). A window send of at most
 * {@link #rendezvousThreshold()} bytes goes eager.
 *
 * <p><b>Flow control.</b> Each pair of thread slots has {@link #credits()} credits: a sender may
 * have that many messages to one rank not yet taken out of its inbox (matched, in sequence order)
 * there; beyond that {@link #send} returns {@link #BACK_PRESSURED}. The receiver returns credits
 * with the messages it sends back, or with a control message after consuming half of them. So
 * the device never sees more sends than receives posted (no RNR) and unexpected messages take
 * bounded memory (the inbox ring). A program that needs more unmatched messages in flight than
 * the credits between a pair waits on back-pressure (MPI calls such programs unsafe).
 *
 * <p><b>Progress.</b> A send is staged in the endpoint's postlist and posted when the postlist
 * is full or at the slot's next progress: any call here that waits or finds no room,
 * {@link #progress()}, {@link RankEndpoint#flush()} or {@link RankEndpoint#barrier()}.
 * {@link #test}, {@link #waitFor}, {@link #probe}, {@link #progress} and a call that finds no room
 * progress the slot's endpoints; messages reach the inbox
 * in the progress of whichever thread polls the receive, so at levels where threads share a QP,
 * a thread's messages move only while some sharer progresses ({@link RankEndpoint#progress()},
 * {@link RankEndpoint#barrier()} or any call here).
 *
 * <p><b>Attentiveness.</b> A slot whose thread computes without calling anything here or on its
 * {@link RankEndpoint} is inattentive: messages for it wait in its receive ring, its credits do
 * not come back (a peer past them gets {@link #BACK_PRESSURED}), rendezvous sends to it are not
 * read and its active-message handlers do not run, until it calls again. A world opened with
 * {@link ProgressMode#THREAD} runs a progress thread per rank that progresses such a slot while
 * its thread computes (never at the same time as one of its calls): receives then complete and
 * handlers run in that thread, so a receive into a {@link MemorySegment} confined to a thread is
 * refused there (use a shared or global arena, or a window).
 *
 * <p><b>Active messages</b> ({@link ActiveMessages}, {@link RankEndpoint#activeMessages()}) travel
 * in the same per-pair sequence with the same credits; their handlers run in this slot's progress.
 * Messages a faulty or hostile peer sends are refused and counted ({@link #refused(int)}).
 */
public final class Messages {
    /** A receive's source that matches every rank. */
    public static final int ANY_SOURCE = -1;
    /** A tag mask that compares every bit. */
    public static final int ALL_BITS = -1;
    /** Returned instead of a request: nothing was taken; progress, then call again. */
    public static final int BACK_PRESSURED = -1;
    /** The handle of a send that completed at the call ({@link #test} returns true at once). */
    public static final int COMPLETED = Integer.MAX_VALUE;

    private static final int FREE = 0;
    private static final int RECV_POSTED = 1;
    private static final int RECV_DONE = 2;
    private static final int SEND = 3;
    private static final long WAIT_NANOS = 60_000_000_000L;
    /** How long {@link #waitFor} waits before it probes the ranks the request waits for, and between probes. */
    static final long PROBE_NANOS = 1_000_000_000L;
    /**
     * Looks a wait makes before it idles by the world's strategy ({@link WorldEndpoints#waitIdle}),
     * which yields the processor at every look where the node looks oversubscribed (under
     * {@code mpirun}'s binding a rank sees one processor): a message that is on its way, as in a
     * ping-pong through mapped mailboxes, arrives within them, and a yield costs a system call.
     */
    private static final int TIGHT_LOOKS = 32;
    /** How long one probe may take before the rank is taken to be slow, not gone. */
    private static final long PROBE_TIMEOUT_NANOS = 10_000_000_000L;

    private final MessageHub hub;
    private final int slot;
    private final int ranks;
    /** {@link MessageHub#width}; streams are per pair index {@code rank * w + (w == 1 ? 0 : slot)}, {@link #pairs} of them. */
    private final int w;
    private final int pairs;
    /** This slot's pair index at every other slot it keeps a stream with. */
    private final int mePair;
    private final int n;
    /** {@code n - 1}: credits are a power of two ({@link WorldEndpoints}), so a ring slot is {@code seq & ringMask}, not a division per look. */
    private final int ringMask;
    private final int s;
    private final MemorySegment inbox;
    /** This slot's mailbox in window 0 ({@link MessageHub#boxBytes}): the inbox, then the lines and FIN words. */
    private final MemorySegment box;
    private final long lineAt;
    private final long finAt;
    /**
     * Per pair (a rank, and with {@link SlotAddressing#ANY_SLOT} one of its slots), the mailbox of
     * that slot mapped into this process ({@link WorldEndpoints#mapMessages}): this slot's messages
     * to it are written straight into its inbox, and the rendezvous sends of that slot which this
     * slot served get their FIN word stored there; null where messages go through the endpoints.
     */
    private final MemorySegment[] peerBox;
    /** Per pair, the consumed count last read from its mapped mailbox (the credits of a mapped pair). */
    private final long[] peerHead;
    /** Per source pair and ring slot: whether the message there was consumed out of sequence order. */
    private final boolean[] consumed;
    /** Per source pair: messages consumed in sequence (the credits given), examined, credits last returned. */
    private final long[] head;
    private final long[] arrived;
    private final long[] creditSent;
    /**
     * Per source pair: the consumed count last stored in this mailbox's line, and whether that
     * sender reads it there (it writes through the mapping: the +8 word of its line). Such a sender
     * spins on that line while it has no credits, so each store of the count costs a transfer of
     * the line and holds every later store of this thread behind it: for those pairs the count is
     * stored once a quarter of the ring was consumed, when nothing else waits in the ring, and
     * before this thread waits ({@link #publishConsumed}).
     */
    private final long[] publishedHead;
    private final boolean[] readsLine;
    /** Per destination pair: the next sequence number, and messages the destination consumed (set by the hook). */
    private final long[] nextSeq;
    private final AtomicLongArray creditFrom;
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    /** Where a message's sequence number sits in its header: stored last (release), it marks the ring slot's message ready. */
    private static final long SEQ_AT = 16;
    /** The sequence field of a message being written into a mapped mailbox until it is published: no sequence number. */
    private static final long UNPUBLISHED = -1;
    private static final VarHandle FIN = ValueLayout.JAVA_INT.varHandle();
    private final boolean[] controlBusy = new boolean[MessageHub.CONTROL];
    private final int[] finRank = new int[MessageHub.REQUESTS];
    private final long[] finReq = new long[MessageHub.REQUESTS];
    private final int[] finStatus = new int[MessageHub.REQUESTS];
    private int finHead;
    private int finCount;
    /** Per request: 0 while a rendezvous send waits, else its status + 1 (set by the hook). */
    private final int[] state = new int[MessageHub.REQUESTS];
    private final int[] source = new int[MessageHub.REQUESTS];
    private final int[] tag = new int[MessageHub.REQUESTS];
    private final int[] mask = new int[MessageHub.REQUESTS];
    private final int[] nextPosted = new int[MessageHub.REQUESTS];
    private final int[] prevPosted = new int[MessageHub.REQUESTS];
    private final long[] offset = new long[MessageHub.REQUESTS];
    private final long[] capacity = new long[MessageHub.REQUESTS];
    private final MemorySegment[] buffer = new MemorySegment[MessageHub.REQUESTS];
    private final Window[] window = new Window[MessageHub.REQUESTS];
    private final int[] doneSource = new int[MessageHub.REQUESTS];
    private final int[] doneSlot = new int[MessageHub.REQUESTS];
    private final int[] doneTag = new int[MessageHub.REQUESTS];
    private final long[] doneLength = new long[MessageHub.REQUESTS];
    private final int[] doneError = new int[MessageHub.REQUESTS];
    private final int[] free = new int[MessageHub.REQUESTS];
    private int freeCount;
    private int postedHead = -1;
    private int postedTail = -1;
    private RankEndpoint re;
    private long threshold;
    /** This slot's active messages (made by the first {@link #active()}), and whether a handler is running. */
    private ActiveMessages active;
    private boolean dispatching;
    /** Per source rank: {@link #head} as the receive hook may read it (released after each advance). */

    Messages(MessageHub hub, int slot, MemorySegment box) {
        this.hub = hub;
        this.slot = slot;
        this.ranks = hub.ranks;
        this.w = hub.width;
        this.pairs = ranks * w;
        this.mePair = hub.me * w + (w == 1 ? 0 : slot);
        this.n = hub.credits;
        if (Integer.bitCount(n) != 1) {
            throw new IllegalArgumentException("message credits must be a power of two: " + n);
        }
        this.ringMask = n - 1;
        this.s = hub.slotBytes;
        this.box = box;
        this.inbox = box.asSlice(0, (long) pairs * n * s);
        this.lineAt = MessageHub.lineAt(pairs, n, s);
        this.finAt = MessageHub.finAt(pairs, n, s);
        this.peerBox = new MemorySegment[pairs];
        this.peerHead = new long[pairs];
        this.consumed = new boolean[pairs * n];
        this.head = new long[pairs];
        this.arrived = new long[pairs];
        this.creditSent = new long[pairs];
        this.publishedHead = new long[pairs];
        this.readsLine = new boolean[pairs];
        this.nextSeq = new long[pairs];
        this.creditFrom = new AtomicLongArray(pairs);
        for (int i = 0; i < MessageHub.REQUESTS; i++) {
            free[i] = MessageHub.REQUESTS - 1 - i;
        }
        freeCount = MessageHub.REQUESTS;
        threshold = eagerLimit();
        for (int i = 0; i < pairs * n; i++) {
            inbox.set(ValueLayout.JAVA_LONG, (long) i * s + SEQ_AT, UNPUBLISHED); // no ring slot holds message 0 yet
        }
    }

    Messages bind(RankEndpoint e) {
        this.re = e;
        return this;
    }

    /** The largest eager message: the receive slot less the header. */
    public int eagerLimit() {
        return s - MessageHub.HEADER;
    }

    /** Window sends above this many bytes go by rendezvous (at most, and by default, {@link #eagerLimit()}). */
    public long rendezvousThreshold() {
        return threshold;
    }

    /** Set the rendezvous threshold of this slot's window sends: 0 to {@link #eagerLimit()} bytes. */
    public void rendezvousThreshold(long bytes) {
        if (bytes < 0 || bytes > eagerLimit()) {
            throw new IllegalArgumentException("rendezvousThreshold: " + bytes + " bytes is outside 0.." + eagerLimit()
                    + " (the eager limit of " + s + "-byte receive slots)");
        }
        threshold = bytes;
    }

    /** Messages this slot may have unconsumed at one slot of one rank. */
    public int credits() {
        return n;
    }

    // ---- sends ---------------------------------------------------------------------------------

    /**
     * Send {@code length} bytes at {@code offset} of {@code source} (any memory; it may be reused
     * when this returns) to thread slot {@link RankEndpoint#index()} of rank {@code rank} with
     * {@code tag}: eager, so at most {@link #eagerLimit()} bytes (longer: send from a window).
     * Returns {@link #COMPLETED}, {@link #BACK_PRESSURED} or a negative errno.
     */
    public int send(int rank, int tag, MemorySegment source, long offset, long length) {
        return send(rank, slot, tag, source, offset, length);
    }

    /**
     * {@link #send(int, int, MemorySegment, long, long)} to thread slot {@code toSlot} of rank
     * {@code rank}: any slot where the world was opened with {@link SlotAddressing#ANY_SLOT}, else
     * only this slot's own index ({@link RankEndpoint#index()}; another is refused with
     * {@link IllegalArgumentException}, nothing sent). Messages from one slot to one slot keep their
     * order; messages to different slots, or from different slots, have none between them.
     */
    public int send(int rank, int toSlot, int tag, MemorySegment source, long offset, long length) {
        RankEndpoint r = bound("send");
        checkTag("send", tag);
        checkRank("send", rank);
        checkSlot("send", toSlot);
        if (source == null || offset < 0 || length < 0 || offset + length > source.byteSize()) {
            throw new IllegalArgumentException("send: range [" + offset + ", " + (offset + length) + ") is outside "
                    + (source == null ? "a null segment" : "the source of " + source.byteSize() + " bytes")
                    + " (nothing sent)");
        }
        if (length > eagerLimit()) {
            throw new IllegalArgumentException("send: " + length + " bytes is above the eager limit of " + eagerLimit()
                    + " bytes; a longer message goes by rendezvous and needs its source in a Window "
                    + "(send(rank, tag, window, offset, length); nothing sent)");
        }
        return eager(r, pairOf(rank, toSlot), tag, source, offset, length);
    }

    /**
     * Send {@code length} bytes at {@code offset} of this rank's part of {@code source}: eager up
     * to {@link #rendezvousThreshold()}, else by rendezvous (a request that completes when the
     * receiver has read the bytes; leave them unchanged until then). Returns a request, {@link #COMPLETED},
     * {@link #BACK_PRESSURED} or a negative errno.
     */
    public int send(int rank, int tag, Window source, long offset, long length) {
        checkTag("send", tag);
        return sendAnyTag(rank, slot, tag, source, offset, length);
    }

    /** {@link #send(int, int, Window, long, long)} to thread slot {@code toSlot} of the rank (see {@link #send(int, int, int, MemorySegment, long, long)}). */
    public int send(int rank, int toSlot, int tag, Window source, long offset, long length) {
        checkTag("send", tag);
        return sendAnyTag(rank, toSlot, tag, source, offset, length);
    }

    /** {@link #send(int, int, Window, long, long)} with any tag, the reserved ones included ({@link Collectives}). */
    int sendAnyTag(int rank, int tag, Window source, long offset, long length) {
        return sendAnyTag(rank, slot, tag, source, offset, length);
    }

    private int sendAnyTag(int rank, int to, int tag, Window source, long offset, long length) {
        SlotGuard g = guard();
        if (g == null) {
            return sendAnyTagEntered(rank, to, tag, source, offset, length);
        }
        g.enter();
        try {
            return sendAnyTagEntered(rank, to, tag, source, offset, length);
        } finally {
            g.exit();
        }
    }

    private int sendAnyTagEntered(int rank, int to, int tag, Window source, long offset, long length) {
        RankEndpoint r = bound("send");
        checkRank("send", rank);
        checkSlot("send", to);
        source.checkRange("send", r.rank(), offset, length);
        source.checkOpen("send");
        int pair = pairOf(rank, to);
        if (length <= threshold) {
            return eager(r, pair, tag, source.local(), offset, length);
        }
        return stageRendezvous(r, pair, MessageHub.RTS, tag, source, offset, length, 0, 0);
    }

    /**
     * Stage a rendezvous request of {@code kind} (RTS, or AM_RTS with the two header words in its
     * body) for {@code length} bytes at {@code offset} of this rank's part of {@code source}: a
     * request handle that completes with the receiver's FIN, or {@link #BACK_PRESSURED}, or a
     * negative errno.
     */
    private int stageRendezvous(RankEndpoint r, int pair, byte kind, int tag, Window source, long offset, long length,
                                long word0, long word1) {
        MemorySegment pb = peerBox[pair];
        if (pb != null ? !mappedRoom(pair, pb) : !room(pair)) {
            progress();
            if (pb != null ? !mappedRoom(pair, pb) : !room(pair)) {
                return backPressured();
            }
        }
        int q = allocate();
        if (q < 0) {
            return backPressured();
        }
        long seq = nextSeq[pair];
        long at = pb != null ? mappedAt(seq) : stagingAt(pair, seq);
        MemorySegment st = pb != null ? pb : hub.staging;
        header(st, at, kind, 0, tag, pb != null ? UNPUBLISHED : seq, length, pair);
        st.set(ValueLayout.JAVA_SHORT_UNALIGNED, at + 40, (short) source.id);
        st.set(ValueLayout.JAVA_INT_UNALIGNED, at + 44, q);
        st.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 48, offset);
        int bytes = MessageHub.HEADER;
        if (kind == MessageHub.AM_RTS) {
            st.set(ValueLayout.JAVA_LONG_UNALIGNED, at + bytes, word0);
            st.set(ValueLayout.JAVA_LONG_UNALIGNED, at + bytes + 8, word1);
            bytes += MessageHub.AM_RTS_BODY;
        }
        FIN.setRelease(box, finAt + 4L * q, 0);
        if (pb != null) {
            publish(pair, pb, at, seq);
        } else {
            int rc = stageOn(r, pair, Endpoint.FLUSH_ID, st.address() + at, bytes, hub.stagingLkey, false);
            if (rc != Endpoint.OK) {
                release(q);
                return rc == Endpoint.BACK_PRESSURED ? BACK_PRESSURED : -rc;
            }
            sent(pair);
        }
        state[q] = SEND;
        doneSource[q] = rankOf(pair);
        doneSlot[q] = slotOf(pair);
        doneTag[q] = tag;
        doneLength[q] = length;
        return q;
    }

    private int eager(RankEndpoint r, int pair, int tag, MemorySegment src, long off, long length) {
        return stageEager(r, pair, MessageHub.EAGER, tag, 0, 0, src, off, length);
    }

    /**
     * Stage a message of {@code bytes} at {@code addr} (in memory whose keys, by PD, are
     * {@code lkeys}) to the slot of pair {@code pair}, on the endpoint that reaches its rank: on a
     * connectionless device to the QP of the named slot when that is another QP than this slot's,
     * else to the QP of this slot's index there (on RC, the one it is connected to; the receiving
     * rank's hook hands the message to the slot its header names).
     */
    private int stageOn(RankEndpoint r, int pair, long wrId, long addr, int bytes, int[] lkeys, boolean signaled) {
        int rank = rankOf(pair);
        Endpoint e = r.to(rank);
        int lkey = lkeys[r.keyIndex(rank)];
        int qp = hub.qpOfSlot[slotOf(pair)];
        return hub.connectionless && qp != hub.qpOfSlot[slot] ? e.stageMessageToQp(qp, wrId, addr, bytes, lkey, signaled)
                : e.stageMessage(wrId, addr, bytes, lkey, signaled);
    }

    /** The stream index of slot {@code to} of rank {@code rank} (its own index when sends cannot name one). */
    private int pairOf(int rank, int to) {
        return rank * w + (w == 1 ? 0 : to);
    }

    /** The rank at the other end of stream {@code pair} (no division where streams are per rank). */
    private int rankOf(int pair) {
        return w == 1 ? pair : pair / w;
    }

    /** The slot at the other end of stream {@code pair}. */
    private int slotOf(int pair) {
        return w == 1 ? slot : pair % w;
    }

    /**
     * An active message ({@link ActiveMessages}): eager like {@link #send}, kind AM, the handler id
     * in the tag field and the two header words at +40 and +48. The caller checked the arguments.
     */
    int active(int rank, int toSlot, int id, long header0, long header1, MemorySegment src, long off, long length) {
        checkSlot("send", toSlot);
        return stageEager(re, pairOf(rank, toSlot), MessageHub.AM, id, header0, header1, src, off, length);
    }

    /**
     * Stage one eager message of {@code kind} (EAGER or AM) to {@code rank}: the header (with
     * {@code tag} and the two words at +40 and +48, which an eager message leaves 0) and
     * {@code length} bytes of {@code src} copied into this pair's staging slot, staged on the
     * endpoint that reaches the rank. Returns {@link #COMPLETED}, {@link #BACK_PRESSURED} or a
     * negative errno.
     */
    private int stageEager(RankEndpoint r, int pair, byte kind, int tag, long word0, long word1, MemorySegment src, long off, long length) {
        SlotGuard g = guard();
        if (g == null) {
            return stageEagerEntered(r, pair, kind, tag, word0, word1, src, off, length);
        }
        g.enter();
        try {
            return stageEagerEntered(r, pair, kind, tag, word0, word1, src, off, length);
        } finally {
            g.exit();
        }
    }

    private int stageEagerEntered(RankEndpoint r, int pair, byte kind, int tag, long word0, long word1, MemorySegment src,
            long off, long length) {
        MemorySegment pb = peerBox[pair];
        if (pb != null) {
            if (!mappedRoom(pair, pb)) {
                progress();
                if (!mappedRoom(pair, pb)) {
                    return backPressured();
                }
            }
            long seq = nextSeq[pair];
            long at = mappedAt(seq);
            header(pb, at, kind, 0, tag, UNPUBLISHED, length, pair);
            pb.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 40, word0);
            pb.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 48, word1);
            MemorySegment.copy(src, off, pb, at + MessageHub.HEADER, length);
            publish(pair, pb, at, seq);
            return COMPLETED;
        }
        if (!room(pair)) {
            progress();
            if (!room(pair)) {
                return backPressured();
            }
        }
        long seq = nextSeq[pair];
        long at = stagingAt(pair, seq);
        MemorySegment st = hub.staging;
        header(st, at, kind, 0, tag, seq, length, pair);
        st.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 40, word0);
        st.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 48, word1);
        MemorySegment.copy(src, off, st, at + MessageHub.HEADER, length);
        int rc = stageOn(r, pair, Endpoint.FLUSH_ID, st.address() + at, MessageHub.HEADER + (int) length, hub.stagingLkey,
                false);
        if (rc != Endpoint.OK) {
            return rc == Endpoint.BACK_PRESSURED ? BACK_PRESSURED : -rc;
        }
        sent(pair); // posted with the postlist, or at this slot's next progress (any call here), flush or barrier
        return COMPLETED;
    }

    /**
     * An active message whose payload is {@code length} bytes at {@code off} of this rank's part of
     * {@code source} ({@link ActiveMessages}): eager up to {@link #rendezvousThreshold()} (copied;
     * {@link #COMPLETED}), else a rendezvous request the receiver pulls before the handler runs (a
     * request handle that completes when it has; leave the bytes unchanged until then). The caller
     * checked the arguments.
     */
    int active(int rank, int toSlot, int id, long header0, long header1, Window source, long off, long length) {
        checkSlot("send", toSlot);
        SlotGuard g = guard();
        if (g == null) {
            return activeEntered(pairOf(rank, toSlot), id, header0, header1, source, off, length);
        }
        g.enter();
        try {
            return activeEntered(pairOf(rank, toSlot), id, header0, header1, source, off, length);
        } finally {
            g.exit();
        }
    }

    private int activeEntered(int pair, int id, long header0, long header1, Window source, long off, long length) {
        RankEndpoint r = re;
        if (length <= threshold) {
            return stageEager(r, pair, MessageHub.AM, id, header0, header1, source.local(), off, length);
        }
        if (s < MessageHub.HEADER + MessageHub.AM_RTS_BODY) {
            throw new IllegalArgumentException("send: a rendezvous active message needs receive slots of at least "
                    + (MessageHub.HEADER + MessageHub.AM_RTS_BODY) + " bytes (these have " + s
                    + "; EndpointOptions.withBuffers; nothing sent)");
        }
        return stageRendezvous(r, pair, MessageHub.AM_RTS, id, source, off, length, header0, header1);
    }

    /** This slot's active messages, made on first use. */
    ActiveMessages active() {
        ActiveMessages a = active;
        if (a == null) {
            a = new ActiveMessages(this, hub, slot, inbox, pairs, n, s);
            active = a;
        }
        return a;
    }

    /** The bound endpoint (null before {@link RankEndpoint#messages()}). */
    RankEndpoint endpoint() {
        return re;
    }

    /** Run the handler of the active message in inbox slot {@code idx} (of stream {@code pair}), then consume it. */
    private void dispatch(int pair, int idx) {
        dispatching = true;
        try {
            if (inbox.get(ValueLayout.JAVA_BYTE, (long) idx * s + 4) == MessageHub.AM_RTS) {
                dispatchRendezvous(pair, idx);
            } else if (active == null) {
                hub.refuse(MessageRefusal.HANDLER);
            } else {
                active.dispatch(rankOf(pair), slotOf(pair), idx);
            }
        } finally {
            dispatching = false;
            consume(pair, idx);
        }
    }

    /**
     * A rendezvous active message: pull its payload into the slot's rendezvous buffer
     * ({@link ActiveMessages#rendezvousBuffer}), tell the sender, then run the handler on a view
     * of it. Without a handler for its id, or without a buffer that holds it, the handler does not
     * run, the message is counted refused (HANDLER, OVERSIZE) and the send completes with
     * {@link MessageStatus#REMOTE_ERROR}.
     */
    private void dispatchRendezvous(int pair, int idx) {
        int rank = rankOf(pair);
        long at = (long) idx * s;
        int id = inbox.get(ValueLayout.JAVA_INT_UNALIGNED, at + 12);
        long len = inbox.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 24);
        long sreq = Integer.toUnsignedLong(inbox.get(ValueLayout.JAVA_INT_UNALIGNED, at + 44));
        ActiveMessages a = active;
        int status = MessageStatus.REMOTE_ERROR;
        if (a == null || !a.registered(id)) {
            hub.refuse(MessageRefusal.HANDLER);
        } else if (!a.holds(len)) {
            hub.refuse(MessageRefusal.OVERSIZE);
        } else if (pull(rank, Short.toUnsignedInt(inbox.get(ValueLayout.JAVA_SHORT_UNALIGNED, at + 40)),
                inbox.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 48), a.landing(), a.landingOffset(), len)) {
            status = MessageStatus.OK;
        }
        finish(pair, sreq, status);
        if (status == MessageStatus.OK) {
            a.dispatchPulled(rank, slotOf(pair), idx, len);
        }
    }

    private boolean room(int pair) {
        return nextSeq[pair] - creditFrom.get(pair) < n;
    }

    /**
     * Whether the mapped mailbox {@code pb} of {@code rank} has a free ring slot for this slot's
     * next message: the consumed count last read, or else read again from its line (the credits of a
     * mapped pair: nothing is returned by message).
     */
    private boolean mappedRoom(int pair, MemorySegment pb) {
        if (nextSeq[pair] - peerHead[pair] < n) {
            return true;
        }
        peerHead[pair] = (long) WORD.getAcquire(pb, lineAt + (long) MessageHub.LINE * mePair);
        return nextSeq[pair] - peerHead[pair] < n;
    }

    /** Where this slot's message {@code seq} goes in a mapped mailbox: its ring slot in the inbox. */
    private long mappedAt(long seq) {
        return ((long) mePair * n + (seq & ringMask)) * s;
    }

    /** Mark message {@code seq}, written at {@code at} ({@link #mappedAt}) of the mapped mailbox {@code pb}, ready (after its bytes). */
    private void publish(int pair, MemorySegment pb, long at, long seq) {
        WORD.setRelease(pb, at + SEQ_AT, seq);
        nextSeq[pair]++;
    }

    private void sent(int pair) {
        nextSeq[pair]++;
        if (head[pair] > creditSent[pair]) {
            creditSent[pair] = head[pair]; // the header carried it
            if (publishedHead[pair] != head[pair]) {
                publishHead(pair, head[pair]); // the credits it grants are the ones the receive hook checks against
            }
        }
    }

    private long stagingAt(int pair, long seq) {
        return (((long) slot * pairs + pair) * n + (seq & ringMask)) * s;
    }

    private void header(MemorySegment m, long at, byte kind, int status, int tag, long value, long length, int pair) {
        m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, MessageHub.MAGIC);
        m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at + 2, (short) slot);
        m.set(ValueLayout.JAVA_BYTE, at + 4, kind);
        m.set(ValueLayout.JAVA_BYTE, at + 5, (byte) status);
        m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at + 6, (short) slotOf(pair));
        m.set(ValueLayout.JAVA_INT_UNALIGNED, at + 8, hub.me);
        m.set(ValueLayout.JAVA_INT_UNALIGNED, at + 12, tag);
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 16, value);
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 24, length);
        m.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 32, head[pair]);
    }

    private static void post(Endpoint e) {
        e.postStagedNow(); // back-pressure keeps it staged: progress posts it
    }

    /** A control message (credit, rendezvous completion) on stream {@code pair}; false when no entry or no room. */
    private boolean control(int pair, byte kind, int status, long value) {
        int c = 0;
        while (c < MessageHub.CONTROL && controlBusy[c]) {
            c++;
        }
        if (c == MessageHub.CONTROL) {
            return false;
        }
        RankEndpoint r = re;
        long at = ((long) slot * MessageHub.CONTROL + c) * MessageHub.CONTROL_BYTES;
        MemorySegment m = hub.control;
        header(m, at, kind, status, 0, value, 0, pair);
        int rc = stageOn(r, pair, Endpoint.CONTROL_BASE + c, m.address() + at, MessageHub.HEADER, hub.controlLkey, true);
        if (rc != Endpoint.OK) {
            return false;
        }
        controlBusy[c] = true;
        post(r.to(rankOf(pair)));
        return true;
    }

    // ---- receives ------------------------------------------------------------------------------

    /**
     * Post a receive of a message from {@code source} (a rank or {@link #ANY_SOURCE}) whose tag
     * matches {@code tag} under {@code tagMask}, into {@code capacity} bytes at {@code offset} of
     * {@code destination}. A longer message fills the buffer and completes the receive with
     * {@link MessageStatus#TRUNCATED}; a rendezvous message needs a window
     * ({@link MessageStatus#NOT_REGISTERED}). Returns a request or {@link #BACK_PRESSURED}.
     */
    public int recv(int source, int tag, int tagMask, MemorySegment destination, long offset, long capacity) {
        bound("recv");
        checkTag("recv", tag);
        if (destination == null || offset < 0 || capacity < 0 || offset + capacity > destination.byteSize()) {
            throw new IllegalArgumentException("recv: range [" + offset + ", " + (offset + capacity) + ") is outside "
                    + (destination == null ? "a null segment" : "the destination of " + destination.byteSize() + " bytes")
                    + " (nothing posted)");
        }
        SlotGuard g = guard();
        if (g != null && !destination.isAccessibleBy(g.attendant())) {
            throw new IllegalArgumentException("recv: the destination is confined to another thread, and with a progress "
                    + "thread (ProgressMode.THREAD) a receive may complete in it: use memory of a shared or global arena, "
                    + "or a window (nothing posted)");
        }
        return postRecv(source, tag, tagMask, destination, null, offset, capacity);
    }

    /** As {@link #recv(int, int, int, MemorySegment, long, long)} into this rank's part of a window (any size). */
    public int recv(int source, int tag, int tagMask, Window destination, long offset, long capacity) {
        checkTag("recv", tag);
        return recvAnyTag(source, tag, tagMask, destination, offset, capacity);
    }

    /** {@link #recv(int, int, int, Window, long, long)} with any tag, the reserved ones included ({@link Collectives}). */
    int recvAnyTag(int source, int tag, int tagMask, Window destination, long offset, long capacity) {
        RankEndpoint r = bound("recv");
        destination.checkRange("recv", r.rank(), offset, capacity);
        destination.checkOpen("recv");
        return postRecv(source, tag, tagMask, destination.local(), destination, offset, capacity);
    }

    private int postRecv(int src, int t, int m, MemorySegment dst, Window win, long off, long cap) {
        SlotGuard g = guard();
        if (g == null) {
            return postRecvEntered(src, t, m, dst, win, off, cap);
        }
        g.enter();
        try {
            return postRecvEntered(src, t, m, dst, win, off, cap);
        } finally {
            g.exit();
        }
    }

    private int postRecvEntered(int src, int t, int m, MemorySegment dst, Window win, long off, long cap) {
        if (src != ANY_SOURCE) {
            checkRank("recv", src);
        }
        int q = allocate();
        if (q < 0) {
            progress();
            return backPressured();
        }
        state[q] = RECV_POSTED;
        source[q] = src;
        tag[q] = t;
        mask[q] = m;
        buffer[q] = dst;
        window[q] = win;
        offset[q] = off;
        capacity[q] = cap;
        int from = src == ANY_SOURCE ? 0 : src * w;
        int to = src == ANY_SOURCE ? pairs : (src + 1) * w;
        for (int pr = from; pr < to; pr++) {
            for (long seq = head[pr]; seq < arrived[pr]; seq++) {
                int idx = pr * n + (int) (seq & ringMask);
                if (!consumed[idx] && matches(q, rankOf(pr), inbox.get(ValueLayout.JAVA_INT_UNALIGNED, (long) idx * s + 12))) {
                    deliver(q, pr, idx);
                    return q;
                }
            }
        }
        nextPosted[q] = -1;
        prevPosted[q] = postedTail;
        if (postedTail >= 0) {
            nextPosted[postedTail] = q;
        } else {
            postedHead = q;
        }
        postedTail = q;
        return q;
    }

    private boolean matches(int q, int rank, int messageTag) {
        return (source[q] == ANY_SOURCE || source[q] == rank) && ((messageTag ^ tag[q]) & mask[q]) == 0
                && (!reserved(messageTag) || reserved(tag[q])); // only a collective's receive takes a collective's message
    }

    private void unlink(int q) {
        int p = prevPosted[q];
        int x = nextPosted[q];
        if (p >= 0) {
            nextPosted[p] = x;
        } else {
            postedHead = x;
        }
        if (x >= 0) {
            prevPosted[x] = p;
        } else {
            postedTail = p;
        }
    }

    /** Receive the message in inbox slot {@code idx} (of stream {@code pair}) into request {@code q}. */
    private void deliver(int q, int pair, int idx) {
        int rank = rankOf(pair);
        long at = (long) idx * s;
        int kind = inbox.get(ValueLayout.JAVA_BYTE, at + 4);
        int t = inbox.get(ValueLayout.JAVA_INT_UNALIGNED, at + 12);
        long len = inbox.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 24);
        long cap = capacity[q];
        long take = Math.min(len, cap);
        int error = len > cap ? MessageStatus.TRUNCATED : MessageStatus.OK;
        if (kind == MessageHub.EAGER) {
            MemorySegment.copy(inbox, at + MessageHub.HEADER, buffer[q], offset[q], take);
        } else {
            long sreq = Integer.toUnsignedLong(inbox.get(ValueLayout.JAVA_INT_UNALIGNED, at + 44));
            int remote;
            if (window[q] == null) {
                error = MessageStatus.NOT_REGISTERED;
                remote = MessageStatus.REMOTE_ERROR;
            } else if (pull(rank, Short.toUnsignedInt(inbox.get(ValueLayout.JAVA_SHORT_UNALIGNED, at + 40)),
                    inbox.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 48), window[q], offset[q], take)) {
                remote = MessageStatus.OK;
            } else {
                error = MessageStatus.TRANSFER_FAILED;
                remote = MessageStatus.REMOTE_ERROR;
            }
            finish(pair, sreq, remote);
        }
        consume(pair, idx);
        state[q] = RECV_DONE;
        buffer[q] = null;
        window[q] = null;
        doneSource[q] = rank;
        doneSlot[q] = slotOf(pair);
        doneTag[q] = t;
        doneLength[q] = len;
        doneError[q] = error;
    }

    /** The rendezvous read: {@code length} bytes of rank {@code rank}'s part of window {@code id}. */
    private boolean pull(int rank, int id, long from, Window into, long at, long length) {
        Window w = hub.window(id);
        if (w == null || !w.isOpen()) {
            return false;
        }
        RankEndpoint r = re;
        try {
            int rc;
            while ((rc = r.get(rank, w, from, into, at, length)) == Endpoint.BACK_PRESSURED) {
                r.progress();
            }
            return rc == Endpoint.OK && r.flush(rank);
        } catch (IllegalArgumentException | IllegalStateException e) {
            return false; // a range or window the sender named that this rank cannot read
        }
    }

    private void finish(int pair, long sreq, int status) {
        MemorySegment pb = peerBox[pair];
        if (pb != null) { // the sender's slot: its FIN word, as the hook would store it
            if (sreq >= 0 && sreq < MessageHub.REQUESTS) {
                FIN.setRelease(pb, finAt + 4L * sreq, status + 1);
            }
            return;
        }
        if (finCount == 0 && control(pair, MessageHub.FIN, status, sreq)) {
            return;
        }
        while (finCount == finRank.length) {
            progress();
            Thread.onSpinWait();
        }
        int i = (finHead + finCount) % finRank.length;
        finRank[i] = pair;
        finReq[i] = sreq;
        finStatus[i] = status;
        finCount++;
    }

    private void consume(int pair, int idx) {
        consumed[idx] = true;
        while (head[pair] < arrived[pair]) {
            int i = pair * n + (int) (head[pair] & ringMask);
            if (!consumed[i]) {
                break;
            }
            consumed[i] = false;
            head[pair]++;
        }
        long h = head[pair];
        if (!readsLine[pair] || h == arrived[pair] || h - publishedHead[pair] >= Math.max(1, n / 4)) {
            publishHead(pair, h);
        }
        returnCredits(pair);
    }

    private void publishHead(int pair, long h) {
        WORD.setRelease(box, lineAt + (long) MessageHub.LINE * pair, h);
        publishedHead[pair] = h;
    }

    /**
     * {@link #BACK_PRESSURED}, after storing the consumed counts not stored yet: the caller will
     * retry, and the rank it cannot send to may itself wait for credits from this one.
     */
    private int backPressured() {
        publishConsumed();
        return BACK_PRESSURED;
    }

    /** Store every consumed count not stored yet: this thread is about to wait (a sender may wait for those credits). */
    void publishConsumed() {
        for (int pair = 0; pair < pairs; pair++) {
            long h = head[pair];
            if (h != publishedHead[pair]) {
                publishHead(pair, h);
            }
        }
    }

    /**
     * Return credits to pair's sender once half its ring was consumed since the last return: in a
     * credit message, or not at all when that sender reads the consumed count from this mailbox
     * (the +8 word of its line, which it sets once when it maps this mailbox). That word is read
     * only then, not per message, and not at all once it was seen set: it shares its line with the
     * consumed count that {@link #consume} has just stored and the sender keeps reading, and the load
     * after that store took about a third of the receiving thread's time in
     * {@code tag_bw -s 8 --transport shm} when it was read per message, and 3.5 % when read once per
     * half ring.
     */
    private void returnCredits(int pair) {
        long h = head[pair];
        if (h - creditSent[pair] < Math.max(1, n / 2)) {
            return;
        }
        if (readsLine[pair] || box.get(ValueLayout.JAVA_LONG, lineAt + (long) MessageHub.LINE * pair + 8) != 0) {
            creditSent[pair] = h; // that slot reads the consumed count from this mailbox (the word is set once, never cleared)
            readsLine[pair] = true;
            return;
        }
        if (control(pair, MessageHub.CREDIT, 0, h)) {
            creditSent[pair] = h;
        }
    }

    /**
     * Whether a message from {@code source} (or {@link #ANY_SOURCE}) matching {@code tag} under
     * {@code tagMask} is waiting (progressing first); if so its source, tag and length are in
     * {@code out} and a receive posted now takes it (or an earlier matching one from that source).
     */
    public boolean probe(int source, int tag, int tagMask, MessageStatus out) {
        SlotGuard g = guard();
        if (g == null) {
            return probeEntered(source, tag, tagMask, out);
        }
        g.enter();
        try {
            return probeEntered(source, tag, tagMask, out);
        } finally {
            g.exit();
        }
    }

    private boolean probeEntered(int source, int tag, int tagMask, MessageStatus out) {
        bound("probe");
        checkTag("probe", tag);
        if (source != ANY_SOURCE) {
            checkRank("probe", source);
        }
        progress();
        int from = source == ANY_SOURCE ? 0 : source * w;
        int to = source == ANY_SOURCE ? pairs : (source + 1) * w;
        for (int pr = from; pr < to; pr++) {
            for (long seq = head[pr]; seq < arrived[pr]; seq++) {
                int idx = pr * n + (int) (seq & ringMask);
                long at = (long) idx * s;
                int t = inbox.get(ValueLayout.JAVA_INT_UNALIGNED, at + 12);
                if (!consumed[idx] && ((t ^ tag) & tagMask) == 0 && !reserved(t)) {
                    out.set(rankOf(pr), slotOf(pr), t, inbox.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 24), MessageStatus.OK);
                    return true;
                }
            }
        }
        publishConsumed();
        return false;
    }

    /**
     * Cancel a receive no message has matched yet: true, and its {@link #test} reports
     * {@link MessageStatus#CANCELLED}; false when it already matched (or is a send, which cannot be
     * cancelled).
     */
    public boolean cancel(int request) {
        SlotGuard g = guard();
        if (g == null) {
            return cancelEntered(request);
        }
        g.enter();
        try {
            return cancelEntered(request);
        } finally {
            g.exit();
        }
    }

    private boolean cancelEntered(int request) {
        bound("cancel");
        checkRequest("cancel", request);
        if (request == COMPLETED || state[request] != RECV_POSTED) {
            return false;
        }
        unlink(request);
        state[request] = RECV_DONE;
        buffer[request] = null;
        window[request] = null;
        doneSource[request] = source[request];
        doneSlot[request] = -1;
        doneTag[request] = tag[request];
        doneLength[request] = 0;
        doneError[request] = MessageStatus.CANCELLED;
        return true;
    }

    // ---- completion ----------------------------------------------------------------------------

    /**
     * Whether {@code request} completed (progressing once if not): then its status is in
     * {@code out} and the handle is free again.
     */
    public boolean test(int request, MessageStatus out) {
        SlotGuard g = guard();
        if (g == null) {
            return testEntered(request, out);
        }
        g.enter();
        try {
            return testEntered(request, out);
        } finally {
            g.exit();
        }
    }

    private boolean testEntered(int request, MessageStatus out) {
        bound("test");
        checkRequest("test", request);
        if (request == COMPLETED) {
            out.set(-1, -1, 0, 0, MessageStatus.OK);
            return true;
        }
        if (!done(request)) {
            progress();
            if (!done(request)) {
                publishConsumed();
                return false;
            }
        }
        if (state[request] == SEND) {
            doneError[request] = (int) FIN.getAcquire(box, finAt + 4L * request) - 1;
        }
        out.set(doneSource[request], doneSlot[request], doneTag[request], doneLength[request], doneError[request]);
        release(request);
        return true;
    }

    /**
     * {@link #test} until {@code request} completes; false when 60 s pass first (the request stays
     * open). Every {@link #PROBE_NANOS} of waiting it probes the rank the request waits for (a
     * receive's source, every other rank for {@link #ANY_SOURCE}; a rendezvous send's destination)
     * with an 8-byte RDMA read; when the device fails the read, the rank is gone: the request is
     * closed and completes with {@link MessageStatus#PEER_LOST}, its source naming that rank.
     */
    public boolean waitFor(int request, MessageStatus out) {
        SlotGuard g = guard();
        if (g == null) {
            return waitForEntered(request, out);
        }
        g.enter();
        try {
            return waitForEntered(request, out);
        } finally {
            g.exit();
        }
    }

    private boolean waitForEntered(int request, MessageStatus out) {
        long deadline = 0;
        long probe = 0;
        IdleStrategy idle = bound("waitFor").idle();
        idle.reset();
        for (int spins = 1; !test(request, out); spins++) {
            if ((spins & 63) == 0) { // a clock read costs tens of ns: the deadlines are seconds away
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + WAIT_NANOS;
                    probe = now + PROBE_NANOS;
                } else if (now - deadline > 0) {
                    return false;
                }
                if (now - probe > 0 && (spins & 4095) == 0) {
                    int lost = lostRank(request);
                    if (lost >= 0) {
                        lost(request, lost, out);
                        return true;
                    }
                    probe = System.nanoTime() + PROBE_NANOS;
                }
            }
            if (spins > TIGHT_LOOKS) {
                idle.idle(); // the message may need another thread (a sharer, the peer rank) to run
            } else {
                Thread.onSpinWait();
            }
        }
        return true;
    }

    /** A rank open request {@code q} waits for that no longer answers, or -1 (every one answers). */
    private int lostRank(int q) {
        if (q == COMPLETED) {
            return -1;
        }
        int from = state[q] == SEND ? doneSource[q] : source[q];
        int to = from == ANY_SOURCE ? ranks : from + 1;
        for (int r = Math.max(0, from); r < to; r++) {
            if (!re.answers(r, PROBE_TIMEOUT_NANOS)) {
                return r;
            }
        }
        return -1;
    }

    /** Close request q, whose peer {@code rank} is gone, with {@link MessageStatus#PEER_LOST}. */
    private void lost(int q, int rank, MessageStatus out) {
        int t = state[q] == SEND ? doneTag[q] : tag[q];
        if (state[q] == RECV_POSTED) {
            unlink(q);
        }
        buffer[q] = null;
        window[q] = null;
        out.set(rank, -1, t, 0, MessageStatus.PEER_LOST);
        release(q);
    }

    private boolean done(int q) {
        return state[q] == RECV_DONE || (state[q] == SEND && (int) FIN.getAcquire(box, finAt + 4L * q) != 0);
    }

    /**
     * Progress: post what is staged, poll this slot's endpoints (which moves arriving messages into
     * the inboxes of their slots), match what arrived here against the posted receives in sequence
     * order, and send the credits and rendezvous completions that wait for room. Does not allocate.
     */
    public void progress() {
        progressCounted();
    }

    /** {@link #progress()}, returning the messages it took from the inbox (the progress thread's measure of work). */
    int progressCounted() {
        RankEndpoint r = bound("progress");
        SlotGuard g = r.guard;
        if (g == null) {
            return progressIn(r);
        }
        g.enter();
        try {
            return progressIn(r);
        } finally {
            g.exit();
        }
    }

    private int progressIn(RankEndpoint r) {
        Endpoint[] eps = r.distinct();
        for (Endpoint e : eps) {
            post(e);
            e.progressKeepingReceives();
        }
        while (finCount > 0) {
            int h = finHead; // finRank holds the stream
            if (!control(finRank[h], MessageHub.FIN, finStatus[h], finReq[h])) {
                break;
            }
            finHead = h + 1 == finRank.length ? 0 : h + 1;
            finCount--;
        }
        if (dispatching) {
            SlotGuard g = guard();
            if (g != null && g.attendant() == Thread.currentThread()) {
                hub.world.pollOthers(slot); // the progress thread waits in a handler: the siblings' hooks run too
            }
            return 0; // called from inside a handler: the inbox waits for the handler to return
        }
        return takeInbox();
    }

    /**
     * Match what arrived in the inbox (in sequence order per source, against the posted receives in
     * post order; active messages dispatched) and return credits. Returns the messages taken.
     */
    private int takeInbox() {
        if (dispatching) {
            return 0;
        }
        int taken = 0;
        for (int pair = 0; pair < pairs; pair++) {
            for (;;) {
                long seq = arrived[pair];
                int idx = pair * n + (int) (seq & ringMask);
                if ((long) WORD.getAcquire(box, (long) idx * s + SEQ_AT) != seq) {
                    break;
                }
                arrived[pair] = seq + 1;
                taken++;
                byte kind = inbox.get(ValueLayout.JAVA_BYTE, (long) idx * s + 4);
                if (kind == MessageHub.AM || kind == MessageHub.AM_RTS) {
                    dispatch(pair, idx);
                    continue;
                }
                int t = inbox.get(ValueLayout.JAVA_INT_UNALIGNED, (long) idx * s + 12);
                int rank = rankOf(pair);
                for (int q = postedHead; q >= 0; q = nextPosted[q]) {
                    if (matches(q, rank, t)) {
                        unlink(q);
                        deliver(q, pair, idx);
                        break;
                    }
                }
            }
            returnCredits(pair);
        }
        return taken;
    }

    /**
     * Post and poll this slot's endpoints: the receive hooks run (credits and messages for any
     * slot of the rank), no handler does ({@link ProgressAgent#pollOthers}). The caller holds the
     * slot's guard.
     */
    void pollOnly() {
        RankEndpoint r = re;
        if (r == null) {
            return;
        }
        for (Endpoint e : r.distinct()) {
            post(e);
            e.progressKeepingReceives();
        }
    }

    /** The guard of the bound slot where a progress thread runs, else null. */
    private SlotGuard guard() {
        RankEndpoint r = re;
        return r == null ? null : r.guard;
    }

    /**
     * Messages this rank refused for {@code reason} (a {@link MessageRefusal} constant; every slot
     * of the rank counts into one table): malformed, misaddressed or out-of-sequence ones a faulty
     * or hostile peer sent. Each was dropped whole and the stream went on.
     */
    public long refused(int reason) {
        if (reason <= MessageRefusal.NONE || reason >= MessageRefusal.REASONS) {
            throw new IllegalArgumentException("refused: " + reason + " is not a MessageRefusal reason (1.."
                    + (MessageRefusal.REASONS - 1) + ")");
        }
        return hub.refused(reason);
    }

    // ---- called by the hook (any thread of the rank) -------------------------------------------

    /**
     * A message (eager, rendezvous request, active) from {@code rank} with sequence number
     * {@code seq}: true when taken; false when no peer within its credits could have sent it (a
     * sequence number outside the credit window, or its ring slot still in use).
     */
    boolean arrived(int pair, long seq, MemorySegment region, long at, int length) {
        long h = (long) WORD.getAcquire(box, lineAt + (long) MessageHub.LINE * pair);
        int idx = pair * n + (int) (seq & ringMask);
        // [h, h + n): the ring slot's previous message (seq - n) was consumed; its sequence field == seq: this one came already
        long to = (long) idx * s;
        if (length > s || seq < h || seq - h >= n || (long) WORD.getAcquire(box, to + SEQ_AT) == seq) {
            return false;
        }
        MemorySegment.copy(region, at, inbox, to, SEQ_AT); // every byte but the sequence field, which goes last (length >= HEADER)
        MemorySegment.copy(region, at + SEQ_AT + 8, inbox, to + SEQ_AT + 8, length - SEQ_AT - 8);
        WORD.setRelease(box, to + SEQ_AT, seq);
        return true;
    }

    /**
     * From now on write this slot's messages to rank {@code rank} straight into the mailbox of its
     * slot of this index, {@code pb}, mapped into this process ({@link WorldEndpoints#mapMessages}),
     * and serve the rendezvous sends of that slot by storing their FIN words there; the flag in
     * {@code pb} tells that slot to stop returning credits by message. Before the slot's thread
     * uses it.
     */
    void map(int pair, MemorySegment pb) {
        WORD.setRelease(pb, lineAt + (long) MessageHub.LINE * mePair + 8, 1L);
        peerHead[pair] = (long) WORD.getAcquire(pb, lineAt + (long) MessageHub.LINE * mePair);
        peerBox[pair] = pb;
    }

    /** Whether this slot writes its messages to {@code rank} into that rank's mapped mailboxes. */
    boolean mapped(int rank) {
        return peerBox[rank * w] != null;
    }

    /** The slot at the other end of stream {@code pair} has consumed {@code count} of this slot's messages. */
    void credit(int pair, long count) {
        for (;;) {
            long c = creditFrom.get(pair);
            if (count <= c || creditFrom.compareAndSet(pair, c, count)) {
                return;
            }
        }
    }

    /** The receiver of rendezvous send {@code request} is done with it. */
    void finished(long request, int status) {
        if (request >= 0 && request < MessageHub.REQUESTS) {
            FIN.setRelease(box, finAt + 4L * request, status + 1);
        }
    }

    /** Control staging entry {@code entry} is free (its send completed; called by this slot's thread). */
    void controlDone(int entry) {
        controlBusy[entry] = false;
    }

    /**
     * What this slot knows of its stream with {@code rank}, for an error that says why a wait did
     * not end: sequence numbers sent and credited, arrived and consumed, the endpoint's unfinished
     * work and first error, and the rank's refusals. Control path (allocates).
     */
    String describe(int rank) {
        StringBuilder b = new StringBuilder(160);
        for (int pr = rank * w; pr < (rank + 1) * w; pr++) {
            b.append(pr == rank * w ? "" : "; ").append("to rank ").append(rank).append(" slot ").append(slotOf(pr))
                    .append(": sent ").append(nextSeq[pr]).append(", credited ").append(creditFrom.get(pr))
                    .append("; from it: arrived ").append(arrived[pr]).append(", consumed ").append(head[pr])
                    .append(", credit returned ").append(creditSent[pr]);
        }
        RankEndpoint r = re;
        if (r != null) {
            Endpoint e = r.to(rank);
            b.append("; endpoint ").append(e.index()).append(": ").append(e.outstanding()).append(" outstanding, ")
                    .append(e.staged()).append(" staged, first error ").append(e.firstErrorStatus());
        }
        b.append("; ").append(MessageHub.REQUESTS - freeCount).append(" requests of this slot open");
        for (int reason = MessageRefusal.NONE + 1; reason < MessageRefusal.REASONS; reason++) {
            long c = hub.refused(reason);
            if (c != 0) {
                b.append("; refused ").append(MessageRefusal.name(reason)).append(' ').append(c);
            }
        }
        return b.toString();
    }

    // ---- requests and checks -------------------------------------------------------------------

    private int allocate() {
        return freeCount == 0 ? -1 : free[--freeCount];
    }

    private void release(int q) {
        state[q] = FREE;
        free[freeCount++] = q;
    }

    private RankEndpoint bound(String op) {
        RankEndpoint r = re;
        if (r == null) {
            throw new IllegalStateException("messages of thread slot " + slot + ": " + op
                    + " before the slot was acquired (RankEndpoint.messages())");
        }
        r.distinct()[0].checkOwnerFor(op);
        return r;
    }

    /** Whether {@code tag} is one of the tags reserved for {@link Collectives} (top byte 0x7F). */
    static boolean reserved(int tag) {
        return (tag >>> 24) == Collectives.TAG_BASE >>> 24;
    }

    private static void checkTag(String op, int tag) {
        if (reserved(tag)) {
            throw new IllegalArgumentException(op + ": tag 0x" + Integer.toHexString(tag) + " is reserved for collectives "
                    + "(tags 0x7f000000..0x7fffffff; use another tag; nothing done)");
        }
    }

    private void checkRank(String op, int rank) {
        if (rank < 0 || rank >= ranks) {
            throw new IllegalArgumentException(op + ": rank " + rank + " is not a rank of a world of " + ranks
                    + " (nothing done)");
        }
    }

    private void checkSlot(String op, int to) {
        if (to != slot && (to < 0 || to >= hub.threads || w == 1)) {
            throw new IllegalArgumentException(op + ": thread slot " + to + (to < 0 || to >= hub.threads
                    ? " is not a slot of a rank of " + hub.threads + " threads"
                    : " is not this slot's index (" + slot + "), and this world was opened with SlotAddressing.SAME_INDEX "
                    + "(open every rank's world with SlotAddressing.ANY_SLOT to name another slot)") + " (nothing sent)");
        }
    }

    private void checkRequest(String op, int q) {
        if (q != COMPLETED && (q < 0 || q >= MessageHub.REQUESTS || state[q] == FREE)) {
            throw new IllegalArgumentException(op + ": " + q + " is not an open request of thread slot " + slot);
        }
    }
}
