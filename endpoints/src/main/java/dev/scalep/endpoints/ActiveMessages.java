package dev.scalep.endpoints;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Active messages of one thread slot of a {@link WorldEndpoints} ({@link RankEndpoint#activeMessages()}):
 * a message names a handler id, carries two header words and a payload, and the handler
 * registered under that id on the destination slot runs when it arrives. Thread-bound like its
 * {@link RankEndpoint}.
 *
 * <p><b>Handlers.</b> Up to {@value #HANDLERS} per slot, ids 0..255: {@link #register(ActiveMessageHandler)}
 * takes the lowest free id, {@link #register(int, ActiveMessageHandler)} a given one. Every slot
 * that receives registers the same handlers under the same ids (in the same order on every rank),
 * before any rank sends to it (a barrier after registering is enough): a message for an id with
 * no handler there is refused ({@link MessageRefusal#HANDLER}) and dropped.
 *
 * <p><b>Dispatch.</b> A message reaches the slot of the same index on the destination rank (as
 * {@link Messages}). Its handler runs in that slot's progress ({@link #progress()},
 * {@link Messages#progress()}, and {@link Messages#test}/{@link Messages#waitFor}/{@link Messages#probe},
 * which progress), in the thread holding the slot (or, in a world opened with
 * {@link ProgressMode#THREAD}, in the rank's progress thread while the slot's thread makes no call:
 * never two handlers of a slot at once, nor a handler alongside the slot's own calls; what a handler
 * writes is visible to the slot's thread after its next call), with an {@link ActiveMessage} that is valid only
 * during the call: its payload is a read-only view of the receive ring; copy to keep. A handler
 * may send (active or tagged messages) and {@link ActiveMessage#reply}; a call that progresses from
 * inside a handler polls the device but runs no other handler (they run after it returns). A
 * handler that throws propagates out of the progress call that ran it; its message is consumed.
 *
 * <p><b>Order and flow control.</b> Active messages share the tagged messages' per-pair sequence,
 * credits and receive ring: two messages from one slot to one slot (active or tagged) are taken in
 * send order, and handlers run in that order; a sender past its credits gets
 * {@link #BACK_PRESSURED}. An active message is consumed when its handler returns, but credits
 * come back in sequence order, so an unmatched tagged message ahead of it holds them.
 *
 * <p><b>Protocols.</b> A payload in any memory ({@link #send(int, int, long, long, MemorySegment, long, long)})
 * is eager: at most {@link #maxPayload()} bytes (the receive slot less the
 * {@value MessageHub#HEADER}-byte header, as {@link Messages#eagerLimit()}) are copied into a
 * registered staging slot at the call, so the source may be reused at once; a longer one is
 * refused before anything is sent. A payload in this rank's part of a {@link Window}
 * ({@link #send(int, int, long, long, Window, long, long)}) is eager up to
 * {@link Messages#rendezvousThreshold()} and goes by rendezvous above it, as a tagged message does:
 * the message carries the window, offset and length; the destination slot reads the bytes with
 * RDMA reads into its rendezvous buffer ({@link #rendezvousBuffer}, a range of a window it
 * names), tells the sender (whose request, a {@link Messages} request handle, then completes), and
 * runs the handler with a read-only view of the buffer. A destination without a buffer that
 * holds the payload refuses it (counted {@link MessageRefusal#OVERSIZE}; the send completes with
 * {@link MessageStatus#REMOTE_ERROR}). Nothing on the eager send, receive or dispatch path allocates.
 */
public final class ActiveMessages {
    /** Handler ids per slot: 0..255. */
    public static final int HANDLERS = 256;
    /** Bytes of the message header in front of every payload in a receive slot ({@link #maxPayload()} = slot − this). */
    public static final int HEADER_BYTES = MessageHub.HEADER;
    /** Returned when nothing was sent: no credit towards that rank or a full send queue; progress, then call again. */
    public static final int BACK_PRESSURED = Messages.BACK_PRESSURED;
    /** Returned by a send whose message was taken (its payload copied). */
    public static final int COMPLETED = Messages.COMPLETED;

    private final Messages messages;
    private final MessageHub hub;
    private final int slot;
    private final int n;
    private final int s;
    private final MemorySegment inbox;
    /** Per ring slot (source rank × credit): a read-only view of it, made once. */
    private final MemorySegment[] views;
    private final ActiveMessageHandler[] handlers = new ActiveMessageHandler[HANDLERS];
    private final ActiveMessage current = new ActiveMessage(this);
    /** Where rendezvous payloads land ({@link #rendezvousBuffer}): a window range, and a read-only view of it. */
    private Window landing;
    private long landingOffset;
    private long landingBytes;
    private MemorySegment landingView;

    ActiveMessages(Messages messages, MessageHub hub, int slot, MemorySegment inbox, int ranks, int credits, int slotBytes) {
        this.messages = messages;
        this.hub = hub;
        this.slot = slot;
        this.n = credits;
        this.s = slotBytes;
        this.inbox = inbox;
        this.views = new MemorySegment[ranks * credits];
        for (int i = 0; i < views.length; i++) {
            views[i] = inbox.asSlice((long) i * slotBytes, slotBytes).asReadOnly();
        }
    }

    /** The largest payload of one active message. */
    public int maxPayload() {
        return messages.eagerLimit();
    }

    /** Messages this slot may have unconsumed at one slot of one rank (shared with its tagged messages). */
    public int credits() {
        return n;
    }

    /** Register {@code handler} under the lowest free id and return the id. */
    public int register(ActiveMessageHandler handler) {
        bound("register");
        for (int id = 0; id < HANDLERS; id++) {
            if (handlers[id] == null) {
                register(id, handler);
                return id;
            }
        }
        throw new IllegalStateException("register: all " + HANDLERS + " handler ids of thread slot " + slot + " are taken");
    }

    /** Register {@code handler} under {@code id} (0..255, not taken). */
    public void register(int id, ActiveMessageHandler handler) {
        bound("register");
        checkId("register", id);
        if (handler == null) {
            throw new IllegalArgumentException("register: handler " + id + " is null");
        }
        if (handlers[id] != null) {
            throw new IllegalStateException("register: handler id " + id + " of thread slot " + slot + " is taken");
        }
        SlotGuard g = messages.endpoint().guard;
        if (g == null) {
            handlers[id] = handler;
            return;
        }
        g.enter(); // a progress thread may be dispatching this slot's messages
        try {
            handlers[id] = handler;
        } finally {
            g.exit();
        }
    }

    /** Whether a handler is registered under {@code id} on this slot. */
    public boolean registered(int id) {
        checkId("registered", id);
        return handlers[id] != null;
    }

    /**
     * Send an active message for handler {@code id} with header words {@code header0},
     * {@code header1} and the {@code length} bytes at {@code offset} of {@code payload} (any memory,
     * reusable when this returns; at most {@link #maxPayload()}) to thread slot
     * {@link RankEndpoint#index()} of rank {@code rank} (this rank included). {@code id} must be
     * registered on this slot too (every rank registers the same handlers). Returns
     * {@link #COMPLETED}, {@link #BACK_PRESSURED} or a negative errno the device refused with.
     */
    public int send(int rank, int id, long header0, long header1, MemorySegment payload, long offset, long length) {
        return send(rank, slot, id, header0, header1, payload, offset, length);
    }

    /**
     * {@link #send(int, int, long, long, MemorySegment, long, long)} to thread slot {@code toSlot}
     * of rank {@code rank}: any slot where the world was opened with {@link SlotAddressing#ANY_SLOT},
     * else only this slot's own index (another is refused, nothing sent). The handler registered
     * under {@code id} on that slot runs.
     */
    public int send(int rank, int toSlot, int id, long header0, long header1, MemorySegment payload, long offset,
                    long length) {
        bound("send");
        check(rank, id);
        if (payload == null || offset < 0 || length < 0 || offset + length > payload.byteSize()) {
            throw new IllegalArgumentException("send: range [" + offset + ", " + (offset + length) + ") is outside "
                    + (payload == null ? "a null segment" : "the payload of " + payload.byteSize() + " bytes")
                    + " (nothing sent)");
        }
        if (length > maxPayload()) {
            throw new IllegalArgumentException("send: a payload of " + length + " bytes is above the active-message limit of "
                    + maxPayload() + " bytes (the " + s + "-byte receive slot less the " + MessageHub.HEADER
                    + "-byte header; EndpointOptions.withBuffers sets the slot; a payload in a Window goes by rendezvous; "
                    + "nothing sent)");
        }
        return messages.active(rank, toSlot, id, header0, header1, payload, offset, length);
    }

    /**
     * Send an active message whose payload is {@code length} bytes at {@code offset} of this rank's
     * part of {@code payload}: eager up to {@link Messages#rendezvousThreshold()} (returns
     * {@link #COMPLETED}; the bytes were copied), else by rendezvous (returns a request handle of
     * {@link #messages()} that {@link Messages#test}/{@link Messages#waitFor} report once the
     * destination has read the payload; leave it unchanged until then). The destination slot needs
     * a {@link #rendezvousBuffer} of at least {@code length} bytes. Or {@link #BACK_PRESSURED}, or
     * a negative errno the device refused with.
     */
    public int send(int rank, int id, long header0, long header1, Window payload, long offset, long length) {
        return send(rank, slot, id, header0, header1, payload, offset, length);
    }

    /**
     * {@link #send(int, int, long, long, Window, long, long)} to thread slot {@code toSlot} of rank
     * {@code rank}, named as in {@link #send(int, int, int, long, long, MemorySegment, long, long)}:
     * a rendezvous payload lands in that slot's {@link #rendezvousBuffer}, and its handler runs there.
     */
    public int send(int rank, int toSlot, int id, long header0, long header1, Window payload, long offset, long length) {
        RankEndpoint r = bound("send");
        check(rank, id);
        if (payload == null) {
            throw new IllegalArgumentException("send: the payload window is null (nothing sent)");
        }
        payload.checkRange("send", r.rank(), offset, length);
        payload.checkOpen("send");
        return messages.active(rank, toSlot, id, header0, header1, payload, offset, length);
    }

    /**
     * Where this slot's rendezvous active messages land: {@code bytes} bytes at {@code offset} of
     * this rank's part of {@code window} (a window of the world, open while messages may come).
     * A payload above {@code bytes} is refused; the handler sees the payload at the start of the
     * range, and the next rendezvous message overwrites it. Call it before peers send.
     */
    public void rendezvousBuffer(Window window, long offset, long bytes) {
        RankEndpoint r = bound("rendezvousBuffer");
        if (window == null) {
            throw new IllegalArgumentException("rendezvousBuffer: the window is null");
        }
        window.checkRange("rendezvousBuffer", r.rank(), offset, bytes);
        window.checkOpen("rendezvousBuffer");
        MemorySegment view = window.local().asSlice(offset, bytes).asReadOnly();
        SlotGuard g = r.guard;
        if (g != null) {
            g.enter(); // a progress thread may be dispatching this slot's messages
        }
        try {
            landing = window;
            landingOffset = offset;
            landingBytes = bytes;
            landingView = view;
        } finally {
            if (g != null) {
                g.exit();
            }
        }
    }

    Window landing() {
        return landing;
    }

    long landingOffset() {
        return landingOffset;
    }

    /** Whether the rendezvous buffer holds {@code length} bytes. */
    boolean holds(long length) {
        return landing != null && length >= 0 && length <= landingBytes;
    }

    /** Run the handler of the rendezvous message in inbox slot {@code idx}, whose {@code length} bytes were pulled. */
    void dispatchPulled(int rank, int from, int idx, long length) {
        long at = (long) idx * s;
        int id = inbox.get(ValueLayout.JAVA_INT_UNALIGNED, at + 12);
        current.set(rank, from, id, inbox.get(ValueLayout.JAVA_LONG_UNALIGNED, at + MessageHub.HEADER),
                inbox.get(ValueLayout.JAVA_LONG_UNALIGNED, at + MessageHub.HEADER + 8), landingView, 0, length);
        handlers[id].onMessage(current);
    }

    /** An active message without payload. */
    public int send(int rank, int id, long header0, long header1) {
        bound("send");
        check(rank, id);
        return messages.active(rank, slot, id, header0, header1, MemorySegment.NULL, 0, 0);
    }

    /** Progress the slot: post, poll, and run the handlers of the messages that arrived ({@link Messages#progress()}). */
    public void progress() {
        messages.progress();
    }

    /** Messages this rank refused for {@code reason} ({@link Messages#refused(int)}). */
    public long refused(int reason) {
        return messages.refused(reason);
    }

    /** The slot's tagged messages (the same sequence, credits and progress). */
    public Messages messages() {
        return messages;
    }

    /** Run the handler of the message in inbox ring slot {@code idx} from slot {@code from} of {@code rank} (called by {@link Messages}). */
    void dispatch(int rank, int from, int idx) {
        long at = (long) idx * s;
        int id = inbox.get(ValueLayout.JAVA_INT_UNALIGNED, at + 12);
        ActiveMessageHandler h = id >= 0 && id < HANDLERS ? handlers[id] : null;
        if (h == null) {
            hub.refuse(MessageRefusal.HANDLER);
            return;
        }
        current.set(rank, from, id, inbox.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 40),
                inbox.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 48), views[idx], MessageHub.HEADER,
                inbox.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 24));
        h.onMessage(current);
    }

    private void check(int rank, int id) {
        if (rank < 0 || rank >= hub.ranks) {
            throw new IllegalArgumentException("send: rank " + rank + " is not a rank of a world of " + hub.ranks
                    + " (nothing sent)");
        }
        checkId("send", id);
        if (handlers[id] == null) {
            throw new IllegalArgumentException("send: no handler is registered under id " + id + " on thread slot " + slot
                    + "; register the same handlers on every rank before sending (nothing sent)");
        }
    }

    private static void checkId(String op, int id) {
        if (id < 0 || id >= HANDLERS) {
            throw new IllegalArgumentException(op + ": handler id " + id + " is outside 0.." + (HANDLERS - 1));
        }
    }

    private RankEndpoint bound(String op) {
        RankEndpoint r = messages.endpoint();
        if (r == null) {
            throw new IllegalStateException("active messages of thread slot " + slot + ": " + op
                    + " before the slot was acquired (RankEndpoint.activeMessages())");
        }
        r.distinct()[0].checkOwnerFor(op);
        return r;
    }
}
