package dev.scalep.endpoints;

import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The behavioural suite of active messages ({@link ActiveMessages}) and of refusing what a faulty
 * or hostile peer sends, run by one rank of a world with {@code threads} threads: in one JVM by
 * {@link ActiveMessageTest} and across processes by {@link ActiveMessageMain} under
 * {@code mpirun}. Slot t of every rank talks to slot t of every rank (its own included); every
 * scenario ends in {@link RankEndpoint#barrier()}.
 */
final class ActiveMessageSuite {
    static final EndpointOptions OPTS = MessageSuite.OPTS;
    static final int SCRATCH = 1 << 16;

    private final WorldEndpoints eps;
    private final int threads;
    private final int p;
    private final int me;

    ActiveMessageSuite(World world, WorldEndpoints eps, int threads) {
        this.eps = eps;
        this.threads = threads;
        this.p = world.size();
        this.me = world.rank();
    }

    static List<String> runAll(World world, Device device, String level, int threads) throws Exception {
        List<String> ran = new ArrayList<>();
        try (WorldEndpoints eps = MessageSuite.open(world, device, level, threads, OPTS)) {
            ActiveMessageSuite s = new ActiveMessageSuite(world, eps, threads);
            s.handlersRunInSendOrderWithTheirPayloads();
            ran.add("dispatch");
            s.handlersReplyToTheSource();
            ran.add("reply");
            s.aSenderIsBackPressuredWhileNobodyDispatches();
            ran.add("back-pressure");
            s.hostileMessagesAreRefusedAndTheStreamGoesOn();
            ran.add("hostile");
            s.largePayloadsGoByRendezvous();
            ran.add("rendezvous");
            s.handlersRunOnTheNamedSlotAndReplyToTheSender(MessageSuite.anySlot(level));
            ran.add("slots");
        }
        return ran;
    }

    interface Body {
        void run(int t, RankEndpoint ep, ActiveMessages am, MemorySegment scratch) throws Exception;
    }

    void inThreads(Body body) throws Exception {
        SlotThreads.run(eps, threads, me, SCRATCH, (ep, s) -> body.run(ep.index(), ep, ep.activeMessages(), s));
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    /** Send, progressing (and so dispatching) through back-pressure. */
    static void send(ActiveMessages am, int rank, int id, long h0, long h1, MemorySegment src, long off, long len) {
        int rc;
        for (long spins = 0; (rc = am.send(rank, id, h0, h1, src, off, len)) == ActiveMessages.BACK_PRESSURED; spins++) {
            check(spins < 50_000_000L, "active message to rank " + rank + " stayed back-pressured");
            am.progress();
        }
        check(rc == ActiveMessages.COMPLETED, "send outcome " + rc);
    }

    /** Progress until {@code done} says so, a bounded number of times. */
    static void progressUntil(ActiveMessages am, BooleanSupplier done, String what) {
        for (long spins = 0; !done.getAsBoolean(); spins++) {
            check(spins < 50_000_000L, what);
            am.progress();
            if ((spins & 4095) == 4095) {
                Thread.yield();
            }
        }
    }

    static byte pattern(int src, int t, long i, long k) {
        return (byte) (src * 31 + t * 7 + i * 13 + k);
    }

    static long lengthOf(long i, int max) {
        return i % 25 == 24 ? max : (i % 25) * 8;
    }

    /**
     * The send-side checks refuse before anything is sent (a payload above the limit, naming it;
     * an unregistered or out-of-range id); then every slot sends 200 active messages of varying
     * length (0 to the limit) to every rank, interleaved: each handler runs once per message, in
     * send order per source, with the header words and payload sent, on a read-only view, and a
     * progress call from inside a handler runs no other handler.
     */
    void handlersRunInSendOrderWithTheirPayloads() throws Exception {
        int count = 200;
        inThreads((t, ep, am, buf) -> {
            int max = am.maxPayload();
            check(max == ep.messages().eagerLimit(), "the active-message limit is the eager limit");
            long[] got = new long[p];
            int[] depth = {0};
            boolean[] triedWrite = {false};
            int id = am.register(msg -> {
                check(++depth[0] == 1, "a handler ran inside another handler");
                try {
                    int src = msg.source();
                    long i = msg.header1();
                    check(msg.id() == 0 && msg.header0() == (((long) src << 32) | t) && i == got[src],
                            "message " + got[src] + " from " + src + " out of order or damaged: " + msg);
                    check(msg.length() == lengthOf(i, max), "length of " + msg);
                    for (long k = 0; k < msg.length(); k++) {
                        check(msg.data().get(ValueLayout.JAVA_BYTE, msg.offset() + k) == pattern(src, t, i, k),
                                "payload byte " + k + " of " + msg);
                    }
                    if (!triedWrite[0]) {
                        triedWrite[0] = true;
                        try {
                            msg.data().set(ValueLayout.JAVA_BYTE, msg.offset(), (byte) 0);
                            throw new AssertionError("the handler's view is writable");
                        } catch (UnsupportedOperationException | IllegalArgumentException expected) {
                            // read-only
                        }
                    }
                    am.progress(); // polls, but runs no other handler now
                    got[src]++;
                } finally {
                    depth[0]--;
                }
            });
            check(id == 0 && am.registered(0) && !am.registered(1), "the first handler takes id 0");
            expectRefusal(() -> am.send(me, 0, 0, 0, buf, 0, max + 1), "above the active-message limit of " + max);
            expectRefusal(() -> am.send(me, 1, 0, 0), "no handler is registered under id 1");
            expectRefusal(() -> am.send(me, 256, 0, 0), "outside 0..255");
            expectRefusal(() -> am.send(p, 0, 0, 0), "is not a rank");
            check(ep.barrier(), "barrier: every slot registered before anything is sent");
            for (int i = 0; i < count; i++) {
                for (int r = 0; r < p; r++) {
                    long len = lengthOf(i, max);
                    for (long k = 0; k < len; k++) {
                        buf.set(ValueLayout.JAVA_BYTE, k, pattern(me, t, i, k));
                    }
                    send(am, r, 0, ((long) me << 32) | t, i, buf, 0, len);
                }
            }
            progressUntil(am, () -> {
                for (long g : got) {
                    if (g < count) {
                        return false;
                    }
                }
                return true;
            }, "handlers ran for fewer than " + count + " messages per rank");
            for (int r = 0; r < p; r++) {
                check(got[r] == count, "rank " + r + ": " + got[r] + " messages handled, sent " + count);
            }
        });
    }

    static void expectRefusal(Runnable call, String says) {
        try {
            call.run();
        } catch (IllegalArgumentException e) {
            check(e.getMessage().contains(says), "refusal says \"" + says + "\": " + e.getMessage());
            return;
        }
        throw new AssertionError("not refused: expected \"" + says + "\"");
    }

    /**
     * Each slot sends 300 pings (at most 8 unanswered) to the next rank; the ping handler replies
     * from inside itself with a pong carrying the ping's header + 1 and its payload reversed (a
     * reply that meets back-pressure is kept and sent from the main loop); every pong arrives, in
     * order, whole.
     */
    void handlersReplyToTheSource() throws Exception {
        int count = 300;
        inThreads((t, ep, am, buf) -> {
            int next = (me + 1) % p;
            long[] pongs = {0};
            long[] pings = {0};
            long[] deferred = new long[count + 1];
            int[] deferredHead = {0};
            int[] deferredTail = {0};
            MemorySegment replyBuf = buf.asSlice(4096, 1024);
            int pong = 11; // handlers stay registered for the world's life: each scenario takes ids of its own
            int ping = 10;
            am.register(ping, msg -> {
                long v = msg.header0();
                check(v == pings[0]++, "ping " + v + " out of order");
                if (deferredHead[0] == deferredTail[0] && reply(msg, pong, v, replyBuf) == ActiveMessages.COMPLETED) {
                    return;
                }
                deferred[deferredTail[0]++] = v; // back-pressured: reply later, from outside the handler
            });
            am.register(pong, msg -> {
                long i = pongs[0];
                check(msg.source() == next && msg.header0() == i + 1 && msg.header1() == ~(i + 1), "pong " + i + ": " + msg);
                check(msg.length() == 8 + (i % 8) * 8, "pong length " + msg);
                for (long k = 0; k < msg.length(); k++) {
                    byte sent = pattern(me, t, i, msg.length() - 1 - k);
                    check(msg.data().get(ValueLayout.JAVA_BYTE, msg.offset() + k) == sent, "pong payload byte " + k);
                }
                pongs[0]++;
            });
            check(ep.barrier(), "barrier: every slot registered before anything is sent");
            int sent = 0;
            for (long spins = 0; pongs[0] < count || pings[0] < count || deferredHead[0] < deferredTail[0];
                 spins++) {
                check(spins < 100_000_000L, "ping-pong stalled: " + sent + " pings, " + pongs[0] + " pongs");
                if (sent < count && sent - pongs[0] < 8) {
                    long len = 8 + (sent % 8) * 8;
                    for (long k = 0; k < len; k++) {
                        buf.set(ValueLayout.JAVA_BYTE, k, pattern(me, t, sent, k));
                    }
                    int rc = am.send(next, ping, sent, 0, buf, 0, len);
                    if (rc == ActiveMessages.COMPLETED) {
                        sent++;
                    } else {
                        check(rc == ActiveMessages.BACK_PRESSURED, "ping outcome " + rc);
                    }
                }
                while (deferredHead[0] < deferredTail[0]) {
                    long v = deferred[deferredHead[0]];
                    int prev = (me + p - 1) % p;
                    int rc = am.send(prev, pong, v + 1, ~(v + 1), deferredPayload(replyBuf, prev, t, v), 0, 8 + (v % 8) * 8);
                    if (rc != ActiveMessages.COMPLETED) {
                        break;
                    }
                    deferredHead[0]++;
                }
                am.progress();
            }
        });
    }

    /** The pong payload: the ping's bytes reversed (as the ping's source wrote them). */
    private static MemorySegment deferredPayload(MemorySegment into, int src, int t, long i) {
        long len = 8 + (i % 8) * 8;
        for (long k = 0; k < len; k++) {
            into.set(ValueLayout.JAVA_BYTE, k, pattern(src, t, i, len - 1 - k));
        }
        return into;
    }

    private static int reply(ActiveMessage msg, int pong, long v, MemorySegment into) {
        long len = msg.length();
        for (long k = 0; k < len; k++) {
            into.set(ValueLayout.JAVA_BYTE, k, msg.data().get(ValueLayout.JAVA_BYTE, msg.offset() + len - 1 - k));
        }
        return msg.reply(pong, v + 1, ~(v + 1), into, 0, len);
    }

    static final long RENDEZVOUS_BUFFER = 1 << 20;
    /** The payload every slot sends every named slot by rendezvous in the {@code slots} scenario. */
    private static final long SLOT_PAYLOAD = 20_000;

    /**
     * Payloads in a window: every slot names a 1 MiB rendezvous buffer and sends every rank (its
     * own included) active messages of the eager limit less one, the limit, one above it, twice it,
     * 64 KiB and 1 MiB from its part of a window, one message at a time, waiting for each
     * rendezvous send: the handler runs once per message, in order, with the header words and
     * every byte (a pattern that differs per message, so a stale buffer shows); then one payload
     * above the destination's buffer, which runs no handler, is counted refused (OVERSIZE) there
     * and completes with REMOTE_ERROR at the sender (an empty message after it shows the
     * destination has dispatched it).
     */
    void largePayloadsGoByRendezvous() throws Exception {
        long region = RENDEZVOUS_BUFFER + 4096;
        try (Window src = eps.allocateWindow(region * threads); Window land = eps.allocateWindow(RENDEZVOUS_BUFFER * threads)) {
            long[] oversizeBefore = new long[1];
            inThreads((t, ep, am, buf) -> {
                int max = am.maxPayload();
                long[] sizes = {max - 1, max, max + 1, 2L * max + 3, 65536, RENDEZVOUS_BUFFER};
                long[] got = new long[p];
                am.register(40, msg -> {
                    int from = msg.source();
                    long i = got[from];
                    if (msg.header0() == sizes.length + 1) { // the marker after the refused one: it was dispatched
                        check(i == sizes.length, "the marker from " + from + " after " + i + " messages");
                        got[from]++;
                        return;
                    }
                    check(i < sizes.length && msg.header0() == i && msg.header1() == ((long) from << 32 | t),
                            "message " + i + " from " + from + ": " + msg);
                    check(msg.length() == sizes[(int) i], "length of " + msg + ": expected " + sizes[(int) i]);
                    for (long k = 0; k < msg.length(); k++) {
                        if (msg.data().get(ValueLayout.JAVA_BYTE, msg.offset() + k) != pattern(from, t, i, k)) {
                            throw new AssertionError("byte " + k + " of " + msg);
                        }
                    }
                    got[from]++;
                });
                am.rendezvousBuffer(land, RENDEZVOUS_BUFFER * t, RENDEZVOUS_BUFFER);
                if (t == 0) {
                    oversizeBefore[0] = am.refused(MessageRefusal.OVERSIZE);
                }
                check(ep.barrier(), "barrier: handlers and buffers in place");
                Messages m = am.messages();
                MessageStatus st = new MessageStatus();
                MemorySegment mine = src.local();
                long base = region * t;
                for (int i = 0; i <= sizes.length + 1; i++) {
                    long len = i < sizes.length ? sizes[i] : i == sizes.length ? RENDEZVOUS_BUFFER + 64 : 0;
                    for (long k = 0; k < len; k++) {
                        mine.set(ValueLayout.JAVA_BYTE, base + k, pattern(me, t, i, k));
                    }
                    for (int r = 0; r < p; r++) {
                        int q;
                        for (long spins = 0; (q = am.send(r, 40, i, (long) me << 32 | t, src, base, len))
                                == ActiveMessages.BACK_PRESSURED; spins++) {
                            check(spins < 50_000_000L, "a message of " + len + " bytes to rank " + r + " stayed back-pressured");
                            am.progress();
                        }
                        check(q >= 0, "send of " + len + " bytes: " + q);
                        check((q == ActiveMessages.COMPLETED) == (len <= max), len + " bytes went "
                                + (q == ActiveMessages.COMPLETED ? "eager" : "by rendezvous") + "; the eager limit is " + max);
                        if (q != ActiveMessages.COMPLETED) {
                            check(m.waitFor(q, st), "the rendezvous send of " + len + " bytes to rank " + r + " did not complete");
                            int expect = i < sizes.length ? MessageStatus.OK : MessageStatus.REMOTE_ERROR;
                            check(st.error() == expect, len + " bytes to rank " + r + ": " + st);
                        }
                    }
                }
                progressUntil(am, () -> {
                    for (int r = 0; r < p; r++) {
                        if (got[r] < sizes.length + 1) {
                            return false;
                        }
                    }
                    return true;
                }, "handled " + Arrays.toString(got));
                check(ep.barrier(), "barrier: every rendezvous send completed");
                for (int r = 0; r < p; r++) {
                    check(got[r] == sizes.length + 1, "rank " + r + ": " + got[r] + " handled; the one above the buffer ran");
                }
                if (t == 0) {
                    long refused = am.refused(MessageRefusal.OVERSIZE) - oversizeBefore[0];
                    check(refused == (long) p * threads, "payloads above the rendezvous buffer refused: " + refused
                            + "; sent " + p * threads);
                }
            });
        }
    }

    /**
     * While the other ranks sit in a barrier (which polls the device but runs no handler), rank
     * 0's slots send to rank 1: at most the credits are taken, then {@link ActiveMessages#BACK_PRESSURED}
     * (not an exception, not an unbounded queue); once rank 1 progresses, every handler runs and
     * the credits come back.
     */
    void aSenderIsBackPressuredWhileNobodyDispatches() throws Exception {
        if (p < 2) {
            return; // a rank's own sends progress it, so it always dispatches what it sends itself
        }
        inThreads((t, ep, am, buf) -> {
            long[] got = {0};
            long[] announced = {-1};
            am.register(20, msg -> {
                check(msg.header0() == (msg.header0() < 0 ? -1 : got[0]), "message " + got[0] + ": " + msg);
                if (msg.header0() < 0) {
                    announced[0] = msg.header1();
                }
                got[0]++;
            });
            check(ep.barrier(), "barrier: registered");
            int n = am.credits();
            int taken = 0;
            if (me == 0) {
                for (int i = 0; i < 100 * n; i++) {
                    int rc = am.send(1, 20, taken, 0, buf, 0, 16);
                    if (rc == ActiveMessages.COMPLETED) {
                        taken++;
                    } else {
                        check(rc == ActiveMessages.BACK_PRESSURED, "send outcome " + rc);
                    }
                }
                // At most the credits: fewer when rank 1 consumed earlier messages whose credits it
                // has not returned yet (under half of them).
                check(taken >= 1 && taken <= n, "a sender nobody dispatches for took " + taken + " sends; credits " + n);
            }
            check(ep.barrier(), "barrier: rank 0 was back-pressured");
            if (me == 0) {
                send(am, 1, 20, -1, taken, buf, 0, 16); // waits for the credits rank 1 returns as it dispatches
            }
            if (me == 1) {
                progressUntil(am, () -> announced[0] >= 0, "rank 1 never got the last message");
                check(got[0] == announced[0] + 1, "rank 1 handled " + got[0] + "; rank 0 sent " + (announced[0] + 1));
            }
        });
    }

    /**
     * Every slot crafts raw messages with its endpoint's send into the next rank's receives: a bad
     * magic word, a bad kind, a length field that disagrees with the bytes, a message shorter
     * than a header, a thread slot, a source slot and a source rank outside the world, a length beyond the
     * receive slot, sequence numbers outside the credit window, a handler id above 255 and, with
     * a real sequence number, an id no handler is registered under. Each is refused under its
     * reason on the receiving rank, and a good active message and a good tagged message sent
     * after them arrive.
     */
    void hostileMessagesAreRefusedAndTheStreamGoesOn() throws Exception {
        int[] expect = new int[MessageRefusal.REASONS];
        expect[MessageRefusal.MALFORMED] = 4;
        expect[MessageRefusal.ADDRESS] = 3;
        expect[MessageRefusal.OVERSIZE] = 1;
        expect[MessageRefusal.SEQUENCE] = 2;
        expect[MessageRefusal.HANDLER] = 2;
        try (Window raw = eps.allocateWindow((long) threads * 16 * 256)) {
            inThreads((t, ep, am, buf) -> {
                int next = (me + 1) % p;
                int prev = (me + p - 1) % p;
                long[] got = {0};
                am.register(30, msg -> {
                    check(msg.source() == prev && msg.header0() == 0xBEEF && msg.length() == 8
                            && msg.data().get(ValueLayout.JAVA_LONG_UNALIGNED, msg.offset()) == 0x600D00L + prev,
                            "the good message after the hostile ones: " + msg);
                    got[0]++;
                });
                Messages m = ep.messages();
                long[] before = new long[MessageRefusal.REASONS];
                for (int r = 1; r < MessageRefusal.REASONS; r++) {
                    before[r] = m.refused(r);
                }
                check(ep.barrier(), "barrier: counters read before anything is sent");
                MemorySegment w = raw.local();
                long base = (long) t * 16 * 256;
                Endpoint e = ep.to(next);
                int lkey = raw.lkey[ep.keyIndex(next)];
                int k = 0;
                // a bad magic word
                k = craft(e, w, base, k, lkey, 0x12345678, MessageHub.EAGER, t, me, 0, 0, 8, 8);
                // an unknown kind
                k = craft(e, w, base, k, lkey, MessageHub.MAGIC, (byte) 9, t, me, 0, 0, 8, 8);
                // a length field that disagrees with the bytes sent
                k = craft(e, w, base, k, lkey, MessageHub.MAGIC, MessageHub.EAGER, t, me, 0, 0, 100, 8);
                // shorter than a header
                stage(e, w.address() + base + (long) k++ * 256, 20, lkey);
                // a thread slot and a source rank outside the world
                k = craft(e, w, base, k, lkey, MessageHub.MAGIC, MessageHub.EAGER, 999, me, 0, 0, 8, 8);
                k = craft(e, w, base, k, lkey, MessageHub.MAGIC, MessageHub.EAGER, t, p + 77, 0, 0, 8, 8);
                // a source slot outside the world
                k = craft(e, w, base, k, lkey, MessageHub.MAGIC, MessageHub.EAGER, 777, t, me, 0, 0, 8, 8);
                // a length beyond the receive slot
                k = craft(e, w, base, k, lkey, MessageHub.MAGIC, MessageHub.EAGER, t, me, 0, 0, 1L << 40, 8);
                // sequence numbers outside the credit window
                k = craft(e, w, base, k, lkey, MessageHub.MAGIC, MessageHub.EAGER, t, me, 0, 1L << 40, 8, 8);
                k = craft(e, w, base, k, lkey, MessageHub.MAGIC, MessageHub.EAGER, t, me, 0, -5, 8, 8);
                // a handler id outside 0..255
                k = craft(e, w, base, k, lkey, MessageHub.MAGIC, MessageHub.AM, t, me, 300, 0, 8, 8);
                check(ep.flush(next), "flush the crafted messages");
                // an id nobody registered, through the real send path (it takes a sequence number)
                int rc;
                while ((rc = m.active(next, t, 200, 0, 0, buf, 0, 8)) == Messages.BACK_PRESSURED) {
                    m.progress();
                }
                check(rc == Messages.COMPLETED, "the unregistered id's send: " + rc);
                buf.set(ValueLayout.JAVA_LONG, 0, 0x600D00L + me);
                send(am, next, 30, 0xBEEF, 0, buf, 0, 8);
                MessageSuite.send(m, next, 44, buf, 0, 8);
                MessageStatus st = MessageSuite.await(m, m.recv(prev, 44, Messages.ALL_BITS, buf, 64, 8), "tagged after");
                check(st.error() == 0 && buf.get(ValueLayout.JAVA_LONG, 64) == 0x600D00L + prev, "tagged after: " + st);
                progressUntil(am, () -> {
                    if (got[0] < 1) {
                        return false;
                    }
                    for (int r = 1; r < MessageRefusal.REASONS; r++) {
                        if (m.refused(r) - before[r] < (long) threads * expect[r]) {
                            return false;
                        }
                    }
                    return true;
                }, "hostile messages not all refused, or the good one missing");
                check(got[0] == 1, "the good active message ran once: " + got[0]);
                check(ep.barrier(), "barrier: every rank's refusals are counted");
                for (int r = 1; r < MessageRefusal.REASONS; r++) {
                    check(m.refused(r) - before[r] == (long) threads * expect[r], MessageRefusal.name(r) + ": "
                            + (m.refused(r) - before[r]) + " refused, crafted " + threads * expect[r]);
                }
            });
        }
    }

    /**
     * With {@link SlotAddressing#ANY_SLOT} every slot sends one active message to every slot of
     * every rank, naming it; the handler runs on the slot named (it checks the slot the sender
     * meant, and the sender's rank and slot in {@link ActiveMessage#sourceSlot()}) and replies,
     * which reaches the sending slot. Then every slot sends every slot a payload above the
     * rendezvous threshold from a {@link Window}, naming it: the handler runs on the slot named, with
     * the sender's bytes pulled into that slot's rendezvous buffer, and each send completes. With
     * {@link SlotAddressing#SAME_INDEX} a send to another slot, eager or rendezvous, is refused with
     * nothing sent.
     */
    void handlersRunOnTheNamedSlotAndReplyToTheSender(boolean any) throws Exception {
        long big = SLOT_PAYLOAD;
        try (Window src = eps.allocateWindow(big * threads); Window land = eps.allocateWindow(big * threads)) {
            namedSlots(any, src, land, big);
        }
    }

    private void namedSlots(boolean any, Window src, Window land, long big) throws Exception {
        inThreads((t, ep, am, buf) -> {
            if (!any) {
                if (threads > 1) {
                    try {
                        am.send(0, (t + 1) % threads, 0, 0, 0, buf, 0, 0);
                        check(false, "an active message to another slot was taken in a SAME_INDEX world");
                    } catch (IllegalArgumentException expected) {
                        check(expected.getMessage().contains("ANY_SLOT"), "refusal: " + expected.getMessage());
                    }
                    try {
                        am.send(0, (t + 1) % threads, 0, 0, 0, src, big * t, big);
                        check(false, "a rendezvous active message to another slot was taken in a SAME_INDEX world");
                    } catch (IllegalArgumentException expected) {
                        check(expected.getMessage().contains("ANY_SLOT"), "refusal: " + expected.getMessage());
                    }
                }
                return;
            }
            int request = 50; // ids of this scenario's own (handlers stay registered for the world's life)
            int answer = 51;
            long[] arrived = {0};
            long[] answered = {0};
            long[] owed = new long[p * threads];
            int[] owedCount = {0};
            am.register(request, msg -> {
                check(msg.header1() == t && msg.header0() == ((long) msg.source() << 16 | msg.sourceSlot()),
                        "slot " + t + " ran a request meant for slot " + msg.header1() + ": " + msg);
                arrived[0]++;
                long back = (long) me << 16 | t;
                if (owedCount[0] > 0 || msg.reply(answer, back, msg.sourceSlot()) != ActiveMessages.COMPLETED) {
                    owed[owedCount[0]++] = (long) msg.source() << 16 | msg.sourceSlot(); // back-pressured: reply later
                }
            });
            am.register(answer, msg -> {
                check(msg.header1() == t && msg.header0() == ((long) msg.source() << 16 | msg.sourceSlot()),
                        "slot " + t + " got an answer meant for slot " + msg.header1() + ": " + msg);
                answered[0]++;
            });
            check(ep.barrier(), "barrier: every slot registered before anything is sent");
            for (int r = 0; r < p; r++) {
                for (int u = 0; u < threads; u++) {
                    int rc;
                    for (long spins = 0; (rc = am.send(r, u, request, (long) me << 16 | t, u, buf, 0, 0))
                            == ActiveMessages.BACK_PRESSURED; spins++) {
                        check(spins < 50_000_000L, "active message to rank " + r + " slot " + u + " stayed back-pressured");
                        am.progress();
                    }
                    check(rc == ActiveMessages.COMPLETED, "send to rank " + r + " slot " + u + ": " + rc);
                }
            }
            progressUntil(am, () -> {
                while (owedCount[0] > 0) {
                    long to = owed[owedCount[0] - 1];
                    if (am.send((int) (to >>> 16), (int) (to & 0xFFFF), answer, (long) me << 16 | t, to & 0xFFFF, buf, 0, 0)
                            != ActiveMessages.COMPLETED) {
                        break;
                    }
                    owedCount[0]--;
                }
                return arrived[0] == (long) p * threads && answered[0] == (long) p * threads && owedCount[0] == 0;
            }, "slot " + t + ": " + arrived[0] + " requests and " + answered[0] + " answers of " + p * threads);
            namedRendezvous(t, ep, am, src, land, big);
        });
    }

    /** The rendezvous phase of {@link #handlersRunOnTheNamedSlotAndReplyToTheSender} on slot {@code t}. */
    private void namedRendezvous(int t, RankEndpoint ep, ActiveMessages am, Window src, Window land, long big) {
        check(big > am.messages().rendezvousThreshold(), big + " bytes would go eager");
        int pulled = 53;
        long[] got = {0};
        am.register(pulled, msg -> {
            int from = msg.source();
            int fromSlot = msg.sourceSlot();
            check(msg.header1() == t && msg.header0() == ((long) from << 16 | fromSlot) && msg.length() == big,
                    "slot " + t + " ran a rendezvous message meant for slot " + msg.header1() + ": " + msg);
            for (long k = 0; k < big; k += 97) {
                check(msg.data().get(ValueLayout.JAVA_BYTE, msg.offset() + k) == pattern(from, fromSlot, 0, k),
                        "byte " + k + " of " + msg);
            }
            got[0]++;
        });
        am.rendezvousBuffer(land, big * t, big);
        MemorySegment mine = src.local();
        for (long k = 0; k < big; k++) {
            mine.set(ValueLayout.JAVA_BYTE, big * t + k, pattern(me, t, 0, k));
        }
        check(ep.barrier(), "barrier: every slot's rendezvous handler and buffer in place");
        Messages m = am.messages();
        MessageStatus st = new MessageStatus();
        for (int r = 0; r < p; r++) {
            for (int u = 0; u < threads; u++) {
                int q;
                for (long spins = 0; (q = am.send(r, u, pulled, (long) me << 16 | t, u, src, big * t, big))
                        == ActiveMessages.BACK_PRESSURED; spins++) {
                    check(spins < 50_000_000L, "rendezvous to rank " + r + " slot " + u + " stayed back-pressured");
                    am.progress();
                }
                check(q >= 0 && q != ActiveMessages.COMPLETED, "rendezvous send to rank " + r + " slot " + u + ": " + q);
                check(m.waitFor(q, st) && st.error() == MessageStatus.OK, "rendezvous to rank " + r + " slot " + u + ": " + st);
            }
        }
        progressUntil(am, () -> got[0] == (long) p * threads, "slot " + t + ": " + got[0] + " rendezvous messages of "
                + p * threads);
        check(ep.barrier(), "barrier: every named rendezvous handled");
    }

    /** Write a header (and {@code payload} bytes) into crafting slot {@code k} and stage its send; returns k + 1. */
    private static int craft(Endpoint e, MemorySegment w, long base, int k, int lkey, int magic, byte kind, int slot,
                             int rank, int tag, long seq, long lengthField, int payload) {
        return craft(e, w, base, k, lkey, magic, kind, slot == 999 ? 0 : slot, slot, rank, tag, seq, lengthField, payload);
    }

    /** {@link #craft} with the source slot {@code from} apart from the destination slot. */
    private static int craft(Endpoint e, MemorySegment w, long base, int k, int lkey, int magic, byte kind, int from,
                             int slot, int rank, int tag, long seq, long lengthField, int payload) {
        long at = base + (long) k * 256;
        w.asSlice(at, 256).fill((byte) 0);
        w.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, (short) magic);
        w.set(ValueLayout.JAVA_SHORT_UNALIGNED, at + 2, (short) from);
        w.set(ValueLayout.JAVA_BYTE, at + 4, kind);
        w.set(ValueLayout.JAVA_SHORT_UNALIGNED, at + 6, (short) slot);
        w.set(ValueLayout.JAVA_INT_UNALIGNED, at + 8, rank);
        w.set(ValueLayout.JAVA_INT_UNALIGNED, at + 12, tag);
        w.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 16, seq);
        w.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 24, lengthField);
        stage(e, w.address() + at, MessageHub.HEADER + payload, lkey);
        return k + 1;
    }

    private static void stage(Endpoint e, long addr, int length, int lkey) {
        int rc;
        for (long spins = 0; (rc = e.stageMessage(Endpoint.FLUSH_ID, addr, length, lkey, false)) == Endpoint.BACK_PRESSURED;
             spins++) {
            check(spins < 50_000_000L, "crafted send stayed back-pressured");
            e.progressKeepingReceives();
        }
        check(rc == Endpoint.OK, "crafted send: " + rc);
    }
}
