package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The behavioural suite of tagged messages ({@link Messages}), run by one rank of a world with
 * {@code threads} threads: in one JVM by {@link MessageTest} (ranks are threads of a
 * {@code LocalWorld}) and across processes by {@link MessageMain} under {@code mpirun}. Thread
 * slot t of every rank talks to slot t of every rank (its own included). Every scenario ends in
 * {@link RankEndpoint#barrier()}, which keeps every thread progressing until all are done.
 */
final class MessageSuite {
    /** 64 receives of 256 bytes: enough credits per pair (at least 5 with three ranks on SRD). */
    static final EndpointOptions OPTS = EndpointOptions.DEFAULTS.withDepths(256, 64).withBuffers(1024, 256);
    static final int SCRATCH = 1 << 16;

    private final World world;
    private final WorldEndpoints eps;
    private final int threads;
    private final int p;
    private final int me;

    MessageSuite(World world, WorldEndpoints eps, int threads) {
        this.world = world;
        this.eps = eps;
        this.threads = threads;
        this.p = world.size();
        this.me = world.rank();
    }

    /** Whether every rank maps its mailboxes at {@code level} (not {@code +mapped:even}): where the lazily returned credits are tested. */
    static boolean everyRankMaps(String level) {
        return level.endsWith("+mapped");
    }

    static List<String> runAll(World world, Device device, String level, int threads) throws Exception {
        List<String> ran = new ArrayList<>();
        try (WorldEndpoints eps = open(world, device, level, threads, OPTS)) {
            MessageSuite s = new MessageSuite(world, eps, threads);
            s.mappedSendsGoAroundTheEndpoints(WindowSuite.mapped(level, world.rank()));
            ran.add("paths");
            s.tagsMasksAndAnySourceMatch();
            ran.add("matching");
            s.messagesOfOnePairArriveInSendOrder();
            ran.add("ordering");
            s.aFastSenderIsBackPressuredAtItsCredits();
            ran.add("back-pressure");
            if (everyRankMaps(level)) { // through the endpoints credits come back by halves
                s.aReceiverThatStopsReceivingReturnsTheCreditsOfWhatItTook();
                ran.add("credits-returned");
            }
            s.truncationFailsOnlyThatReceive();
            ran.add("truncation");
            s.cancelAndProbe();
            ran.add("cancel-probe");
            s.rendezvousPullsLargeMessagesFromWindows();
            ran.add("rendezvous");
            s.namedSlotsGetTheirMessagesInOrder(anySlot(level));
            ran.add("slots");
        }
        return ran;
    }

    /** Whether a suite level opens its world with {@link SlotAddressing#ANY_SLOT} ({@code +anyslot}). */
    static boolean anySlot(String level) {
        return level.contains("+anyslot");
    }

    /**
     * Open a suite's endpoints at {@code level} (with {@code +anyslot} sends may name any slot, and
     * the receive depth is multiplied by the threads to keep each stream's credits): with {@code +mapped} every rank then sends its
     * messages through the mapped mailboxes ({@link WorldEndpoints#mapMessages}), with
     * {@code +mapped:even} the even ranks only (so mapped and endpoint messages meet in one inbox).
     */
    static WorldEndpoints open(World world, Device device, String level, int threads, EndpointOptions opts) {
        boolean any = anySlot(level);
        // ANY_SLOT divides a QP's receives among threads times as many streams: as many more keep the credits
        EndpointOptions o = any ? opts.withDepths(opts.sendDepth(), opts.recvDepth() * threads) : opts;
        WorldEndpoints eps = WorldEndpoints.open(world, device,
                SharingConfig.parse(level.replaceFirst("\\+(anyslot|mapped).*$", "")), threads, o, ProgressMode.CALLER,
                any ? SlotAddressing.ANY_SLOT : SlotAddressing.SAME_INDEX);
        if (WindowSuite.mapped(level, world.rank())) {
            int m = eps.mapMessages();
            check(m == world.size(), "rank " + world.rank() + " mapped the mailboxes of " + m + " of " + world.size() + " ranks");
        }
        return eps;
    }

    /**
     * The precondition of the mapped levels, and what they change: a rank that maps the others'
     * mailboxes sends its messages with no work request (nothing staged or outstanding on the
     * endpoint to the rank afterwards), a rank that does not maps nothing; every message arrives.
     */
    void mappedSendsGoAroundTheEndpoints(boolean mapped) throws Exception {
        inThreads((t, ep, m, buf) -> {
            for (int r = 0; r < p; r++) {
                check(m.mapped(r) == mapped, "rank " + me + " slot " + t + ": messages to rank " + r + " mapped " + m.mapped(r)
                        + ", asked " + mapped);
                Endpoint e = ep.to(r);
                long before = e.staged() + e.outstanding();
                buf.set(ValueLayout.JAVA_LONG, 0, word(me, t, r, 7));
                check(send(m, r, 7 << 16, buf, 0, 8) == Messages.COMPLETED, "an eager send completes at once");
                if (mapped) {
                    check(e.staged() + e.outstanding() == before, "rank " + me + " slot " + t + ": a mapped send to rank " + r
                            + " left work on the endpoint (" + before + " before, " + (e.staged() + e.outstanding()) + " after)");
                }
            }
            for (int r = 0; r < p; r++) {
                MessageStatus st = await(m, m.recv(r, 7 << 16, Messages.ALL_BITS, buf, 64, 8), "the path message of " + r);
                check(st.error() == 0 && buf.get(ValueLayout.JAVA_LONG, 64) == word(r, t, me, 7), "path message of " + r + ": " + st);
            }
        });
    }

    interface Body {
        void run(int t, RankEndpoint ep, Messages m, MemorySegment scratch) throws Exception;
    }

    /** Run {@code body} in every thread with an acquired endpoint, then the world-wide barrier; rethrow the first failure. */
    void inThreads(Body body) throws Exception {
        SlotThreads.run(eps, threads, me, SCRATCH, (ep, s) -> body.run(ep.index(), ep, ep.messages(), s));
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    /** Send, progressing through back-pressure; returns the request. */
    static int send(Messages m, int rank, int tag, MemorySegment src, long off, long len) {
        int rc;
        for (long spins = 0; (rc = m.send(rank, tag, src, off, len)) == Messages.BACK_PRESSURED; spins++) {
            check(spins < 50_000_000L, "send to rank " + rank + " stayed back-pressured (" + m.describe(rank) + ")");
            Thread.onSpinWait();
        }
        check(rc >= 0, "send outcome " + rc);
        return rc;
    }

    static MessageStatus await(Messages m, int request, String what) {
        MessageStatus st = new MessageStatus();
        check(m.waitFor(request, st), what + ": not complete in 60 s");
        return st;
    }

    static long word(int src, int t, int dst, int i) {
        return ((long) src << 48) | ((long) t << 40) | ((long) dst << 32) | i;
    }

    /**
     * Every slot sends three messages to every rank (tags 0x1000r, 0x2000r, 0x3000r with r its
     * rank) before receiving; the receiver takes the 0x2000 one of each source by exact tag (the
     * 0x1000 one before it waits unexpected), then the 0x3000 ones with ANY_SOURCE and a mask that
     * ignores the source bits (one from every rank), then the 0x1000 ones with a mask.
     */
    void tagsMasksAndAnySourceMatch() throws Exception {
        inThreads((t, ep, m, buf) -> {
            for (int r = 0; r < p; r++) {
                for (int k = 1; k <= 3; k++) {
                    buf.set(ValueLayout.JAVA_LONG, 0, word(me, t, r, k));
                    check(send(m, r, (k << 16) | me, buf, 0, 8) == Messages.COMPLETED, "an eager send completes at once");
                }
            }
            MessageStatus st;
            for (int r = 0; r < p; r++) {
                int q = m.recv(r, (2 << 16) | r, Messages.ALL_BITS, buf, 64, 8);
                st = await(m, q, "exact tag from " + r);
                check(st.source() == r && st.tag() == ((2 << 16) | r) && st.length() == 8 && st.error() == 0, "status " + st);
                check(buf.get(ValueLayout.JAVA_LONG, 64) == word(r, t, me, 2), "payload of the 0x2000 message of " + r);
            }
            boolean[] seen = new boolean[p];
            for (int i = 0; i < p; i++) {
                int q = m.recv(Messages.ANY_SOURCE, 3 << 16, 0xFFFF0000, buf, 64, 8);
                st = await(m, q, "any source");
                check(st.tag() == ((3 << 16) | st.source()) && !seen[st.source()], "any-source status " + st);
                seen[st.source()] = true;
                check(buf.get(ValueLayout.JAVA_LONG, 64) == word(st.source(), t, me, 3), "payload of 0x3000 from " + st.source());
            }
            for (int r = p - 1; r >= 0; r--) {
                int q = m.recv(r, 1 << 16, 0xFFFF0000, buf, 64, 8);
                st = await(m, q, "masked tag from " + r);
                check(st.source() == r && st.tag() == ((1 << 16) | r), "status " + st);
                check(buf.get(ValueLayout.JAVA_LONG, 64) == word(r, t, me, 1), "payload of the 0x1000 message of " + r);
            }
            check(!m.probe(Messages.ANY_SOURCE, 0, 0, new MessageStatus()), "nothing left after all were received");
        });
    }

    /**
     * Each slot streams 300 messages of varying length (many times its credits) with one tag to the
     * next rank while receiving the previous rank's stream with ANY_SOURCE: they arrive in send
     * order, whole.
     */
    void messagesOfOnePairArriveInSendOrder() throws Exception {
        int count = 300;
        inThreads((t, ep, m, buf) -> {
            int next = (me + 1) % p;
            int prev = (me + p - 1) % p;
            int sent = 0;
            int got = 0;
            int q = -1;
            MessageStatus st = new MessageStatus();
            for (long spins = 0; sent < count || got < count; spins++) {
                check(spins < 100_000_000L, "stream stalled: sent " + sent + ", received " + got);
                if (sent < count) {
                    int len = 8 + (sent % 24) * 8;
                    for (int i = 0; i < len; i += 8) {
                        buf.set(ValueLayout.JAVA_LONG, i, word(me, t, sent, i));
                    }
                    int rc = m.send(next, 77, buf, 0, len);
                    if (rc != Messages.BACK_PRESSURED) {
                        check(rc == Messages.COMPLETED, "send outcome " + rc);
                        sent++;
                    }
                }
                if (got < count) {
                    if (q < 0) {
                        q = m.recv(p == 1 ? Messages.ANY_SOURCE : prev, 77, Messages.ALL_BITS, buf, 4096, 512);
                    }
                    if (m.test(q, st)) {
                        q = -1;
                        int len = 8 + (got % 24) * 8;
                        check(st.source() == prev && st.length() == len && st.error() == 0, "message " + got + ": " + st);
                        for (int i = 0; i < len; i += 8) {
                            check(buf.get(ValueLayout.JAVA_LONG, 4096 + i) == word(prev, t, got, i),
                                    "message " + got + " out of order or damaged at byte " + i);
                        }
                        got++;
                    }
                }
            }
        });
    }

    /**
     * With nobody receiving, a slot's sends to the next rank are taken exactly up to its credits
     * and then back-pressured (not refused, not queued without bound); after the barrier the
     * receiver takes them all, and the credits come back.
     */
    void aFastSenderIsBackPressuredAtItsCredits() throws Exception {
        try (Window counts = eps.allocateWindow(8L * (p * threads + threads))) {
            inThreads((t, ep, m, buf) -> {
                int next = (me + 1) % p;
                int prev = (me + p - 1) % p;
                int taken = 0;
                for (int i = 0; i < 100 * m.credits(); i++) {
                    buf.set(ValueLayout.JAVA_INT, 0, taken);
                    int rc = m.send(next, 5, buf, 0, 4);
                    if (rc == Messages.BACK_PRESSURED) {
                        continue;
                    }
                    check(rc == Messages.COMPLETED, "send outcome " + rc);
                    taken++;
                }
                // At most the credits: fewer when the receiver consumed earlier messages whose
                // credits it has not returned yet (under half of them, or its credit message waits).
                int n = m.credits();
                check(taken <= n, "a sender nobody receives from took " + taken + " sends; credits " + n);
                long source = 8L * (p * threads + t);
                counts.local().set(ValueLayout.JAVA_LONG, source, taken);
                check(ep.put(next, counts, 8L * (me * threads + t), counts, source, 8) == Endpoint.OK, "put count");
                check(ep.barrier(), "barrier"); // every rank's sends and counts are in
                int expect = (int) counts.local().get(ValueLayout.JAVA_LONG, 8L * (prev * threads + t));
                MessageStatus st;
                for (int i = 0; i < expect; i++) {
                    st = await(m, m.recv(prev, 5, Messages.ALL_BITS, buf, 64, 4), "back-pressured stream");
                    check(buf.get(ValueLayout.JAVA_INT, 64) == i && st.source() == prev, "message " + i + ": " + st);
                }
                check(!m.probe(prev, 5, Messages.ALL_BITS, new MessageStatus()), "no message beyond the credits");
                int rc;
                long spins = 0;
                while ((rc = m.send(next, 6, buf, 0, 4)) == Messages.BACK_PRESSURED) {
                    check(++spins < 50_000_000L, "credits never came back");
                }
                check(rc == Messages.COMPLETED, "send after the credits came back: " + rc);
                await(m, m.recv(prev, 6, Messages.ALL_BITS, buf, 64, 4), "after back-pressure");
            });
        }
    }

    /**
     * On mapped mailboxes credits come back for every message taken when the receiver is about to
     * wait, although it stores its consumed count for a mapped sender only once a quarter of the
     * ring ({@code n} credits) was consumed. (Through the endpoints a receiver returns credits in
     * credit messages of half a ring, so there a sender may stay short of fewer than {@code n/2}.) Every slot fills the next rank's ring ({@code n}
     * messages), takes half of its own, sends half a ring more, then takes {@code n/2 + 1} more:
     * all had arrived, so the last one taken is not yet counted where its sender looks. Then the
     * even ranks send {@code n/2 + 1} more, the last of which needs exactly that credit, while the
     * odd ranks wait in the barrier: their credit must come back as they enter it, an even rank's
     * (three ranks) as it is back-pressured itself. After the barrier the rest arrives in order.
     */
    void aReceiverThatStopsReceivingReturnsTheCreditsOfWhatItTook() throws Exception {
        inThreads((t, ep, m, buf) -> {
            int next = (me + 1) % p;
            int prev = (me + p - 1) % p;
            int n = m.credits();
            int[] sent = {0};
            int[] received = {0};
            Runnable sendOne = () -> {
                buf.set(ValueLayout.JAVA_INT, 0, sent[0]);
                int rc;
                long spins = 0;
                while ((rc = m.send(next, 8, buf, 0, 4)) == Messages.BACK_PRESSURED) {
                    check(++spins < 50_000_000L, "send " + sent[0] + " stayed back-pressured: with " + n
                            + " credits it needs the credits of the first " + (sent[0] - n + 1) + " messages the next rank took");
                }
                check(rc == Messages.COMPLETED, "send outcome " + rc);
                sent[0]++;
            };
            Runnable takeOne = () -> {
                await(m, m.recv(prev, 8, Messages.ALL_BITS, buf, 64, 4), "message " + received[0]);
                check(buf.get(ValueLayout.JAVA_INT, 64) == received[0], "message " + received[0] + " out of order");
                received[0]++;
            };
            for (int i = 0; i < n; i++) {
                sendOne.run();
            }
            check(ep.barrier(), "barrier after the full ring");
            for (int i = 0; i < n / 2; i++) {
                takeOne.run();
            }
            check(ep.barrier(), "barrier after half a ring taken");
            for (int i = 0; i < n / 2; i++) {
                sendOne.run();
            }
            check(ep.barrier(), "barrier after half a ring more");
            for (int i = 0; i <= n / 2; i++) {
                takeOne.run();
            }
            if (me % 2 == 0) {
                for (int i = 0; i <= n / 2; i++) {
                    sendOne.run();
                }
            }
            check(ep.barrier(), "barrier after the sends that need every credit");
            int expect = n + n / 2 + (prev % 2 == 0 ? n / 2 + 1 : 0);
            while (received[0] < expect) {
                takeOne.run();
            }
        });
    }

    /**
     * Sends that name a thread slot. With {@link SlotAddressing#ANY_SLOT} every slot first posts,
     * for every source slot of every rank, {@code K} receives by exact tag (more than a pair's
     * credits, so credits must come back mid-stream), then sends {@code K} messages to every slot
     * of every rank (this one included); each receive gets the message of its position in the
     * stream, from the slot its tag names ({@link MessageStatus#sourceSlot()}). With
     * {@link SlotAddressing#SAME_INDEX} a send to another slot is refused with nothing sent, and one
     * to the slot's own index, named, arrives. A slot outside the rank is refused either way.
     */
    void namedSlotsGetTheirMessagesInOrder(boolean any) throws Exception {
        inThreads((t, ep, m, buf) -> {
            try {
                m.send(0, threads, 1, buf, 0, 8);
                check(false, "a send to slot " + threads + " of a rank of " + threads + " threads was taken");
            } catch (IllegalArgumentException expected) {
                check(expected.getMessage().contains("thread slot " + threads), "refusal: " + expected.getMessage());
            }
            if (!any) {
                if (threads > 1) {
                    int other = (t + 1) % threads;
                    try {
                        m.send(0, other, 1, buf, 0, 8);
                        check(false, "a send to another slot was taken in a SAME_INDEX world");
                    } catch (IllegalArgumentException expected) {
                        check(expected.getMessage().contains("ANY_SLOT"), "refusal names the remedy: " + expected.getMessage());
                    }
                }
                int next = (me + 1) % p;
                int prev = (me + p - 1) % p;
                buf.set(ValueLayout.JAVA_LONG, 0, word(me, t, next, 11));
                int rc;
                while ((rc = m.send(next, t, 0x5100, buf, 0, 8)) == Messages.BACK_PRESSURED) {
                    m.progress();
                }
                check(rc == Messages.COMPLETED, "a send naming the slot's own index: " + rc);
                MessageStatus st = await(m, m.recv(prev, 0x5100, Messages.ALL_BITS, buf, 64, 8), "named own index");
                check(st.error() == 0 && st.sourceSlot() == t && buf.get(ValueLayout.JAVA_LONG, 64) == word(prev, t, me, 11),
                        "named own index: " + st);
                return;
            }
            int k = 3 * m.credits() + 1;
            int[][][] req = new int[p][threads][k];
            for (int r = 0; r < p; r++) {
                for (int from = 0; from < threads; from++) {
                    for (int i = 0; i < k; i++) {
                        long at = 4096 + 8L * ((r * threads + from) * k + i);
                        int q;
                        while ((q = m.recv(r, 0x5000 | from, Messages.ALL_BITS, buf, at, 8)) == Messages.BACK_PRESSURED) {
                            m.progress();
                        }
                        req[r][from][i] = q;
                    }
                }
            }
            for (int i = 0; i < k; i++) { // round-robin over the destinations: every stream is in flight at once
                for (int r = 0; r < p; r++) {
                    for (int to = 0; to < threads; to++) {
                        buf.set(ValueLayout.JAVA_LONG, 0, word(me, t, r, (to << 16) | i));
                        int rc;
                        for (long spins = 0; (rc = m.send(r, to, 0x5000 | t, buf, 0, 8)) == Messages.BACK_PRESSURED; spins++) {
                            check(spins < 50_000_000L, "send to rank " + r + " slot " + to + " from slot " + t
                                    + " stayed back-pressured: " + m.describe(r));
                            m.progress();
                        }
                        check(rc == Messages.COMPLETED, "send to rank " + r + " slot " + to + ": " + rc);
                    }
                }
            }
            MessageStatus st = new MessageStatus();
            for (int r = 0; r < p; r++) {
                for (int from = 0; from < threads; from++) {
                    for (int i = 0; i < k; i++) {
                        check(m.waitFor(req[r][from][i], st), "message " + i + " of rank " + r + " slot " + from + " to slot " + t
                                + ": not complete in 60 s");
                        long got = buf.get(ValueLayout.JAVA_LONG, 4096 + 8L * ((r * threads + from) * k + i));
                        check(st.error() == 0 && st.source() == r && st.sourceSlot() == from && st.length() == 8
                                && got == word(r, from, me, (t << 16) | i), "message " + i + " of rank " + r + " slot " + from
                                + " to slot " + t + ": " + st + ", word 0x" + Long.toHexString(got));
                    }
                }
            }
        });
        if (any && p >= 2 && threads >= 2) {
            aNamedSlotsQpTakesItsMessagesOnConnectionlessDevices();
        }
    }

    /**
     * On a connectionless device a message to another slot goes to that slot's QP, so it arrives
     * while the target rank's slot of the sender's index makes no call at all: rank 1's slot 0
     * spins on a flag, without progressing, until its slot 1 has received rank 0 slot 0's message
     * (on RC the message would wait for slot 0, and the scenario does not run there). Runs where
     * slots 0 and 1 have QPs of their own.
     */
    private void aNamedSlotsQpTakesItsMessagesOnConnectionlessDevices() throws Exception {
        AtomicBoolean received = new AtomicBoolean();
        inThreads((t, ep, m, buf) -> {
            EndpointManager mgr = ep.to(0).manager();
            if (!mgr.qpType.connectionless() || mgr.endpoints[0].qpIndex() == mgr.endpoints[1].qpIndex() || t > 1) {
                return;
            }
            if (me == 0 && t == 0) {
                buf.set(ValueLayout.JAVA_LONG, 0, word(0, 0, 1, 0x52));
                int rc;
                while ((rc = m.send(1, 1, 0x5200, buf, 0, 8)) == Messages.BACK_PRESSURED) {
                    m.progress();
                }
                check(rc == Messages.COMPLETED, "send to rank 1 slot 1: " + rc);
                m.progress(); // post it
            } else if (me == 1 && t == 1) {
                MessageStatus st = await(m, m.recv(0, 0x5200, Messages.ALL_BITS, buf, 64, 8), "the message to slot 1");
                check(st.sourceSlot() == 0 && buf.get(ValueLayout.JAVA_LONG, 64) == word(0, 0, 1, 0x52), "to slot 1: " + st);
                received.set(true);
            } else if (me == 1) {
                for (long spins = 0; !received.get(); spins++) { // no call on this slot meanwhile
                    check(spins < 200_000_000L, "rank 1 slot 1 did not get its message while slot 0 made no call");
                    if ((spins & 1023) == 0) {
                        Thread.yield(); // under mpirun the rank may have one core for both threads
                    } else {
                        Thread.onSpinWait();
                    }
                }
            }
        });
    }

    /** A message longer than the buffer fails that receive only (TRUNCATED, prefix delivered); the next one is whole. */
    void truncationFailsOnlyThatReceive() throws Exception {
        inThreads((t, ep, m, buf) -> {
            int next = (me + 1) % p;
            int prev = (me + p - 1) % p;
            for (int i = 0; i < 64; i++) {
                buf.set(ValueLayout.JAVA_BYTE, i, (byte) (i + me));
            }
            send(m, next, 9, buf, 0, 64);
            buf.set(ValueLayout.JAVA_LONG, 128, 0x7700 + me);
            send(m, next, 9, buf, 128, 8);
            buf.fill((byte) -1);
            MessageStatus st = await(m, m.recv(prev, 9, Messages.ALL_BITS, buf, 1024, 16), "truncated");
            check(st.error() == MessageStatus.TRUNCATED && st.length() == 64 && st.source() == prev, "status " + st);
            for (int i = 0; i < 16; i++) {
                check(buf.get(ValueLayout.JAVA_BYTE, 1024 + i) == (byte) (i + prev), "truncated prefix byte " + i);
            }
            check(buf.get(ValueLayout.JAVA_BYTE, 1024 + 16) == (byte) -1, "nothing written past the buffer");
            st = await(m, m.recv(prev, 9, Messages.ALL_BITS, buf, 2048, 8), "after truncation");
            check(st.error() == 0 && buf.get(ValueLayout.JAVA_LONG, 2048) == 0x7700 + prev, "next message whole: " + st);
        });
    }

    /** A cancelled receive takes nothing; probe sees a waiting message without taking it. */
    void cancelAndProbe() throws Exception {
        inThreads((t, ep, m, buf) -> {
            int next = (me + 1) % p;
            int prev = (me + p - 1) % p;
            int q = m.recv(prev, 0x7777, Messages.ALL_BITS, buf, 0, 8);
            check(m.cancel(q), "cancel a receive nothing matched");
            MessageStatus st = new MessageStatus();
            check(m.test(q, st) && st.error() == MessageStatus.CANCELLED, "cancelled status " + st);
            check(ep.barrier(), "barrier"); // every receive is cancelled before anything is sent
            buf.set(ValueLayout.JAVA_LONG, 0, 0x5150L + me);
            send(m, next, 0x7777, buf, 0, 40);
            long spins = 0;
            while (!m.probe(Messages.ANY_SOURCE, 0x7777, Messages.ALL_BITS, st)) {
                check(++spins < 50_000_000L, "probe never saw the message");
            }
            check(st.source() == prev && st.length() == 40 && st.tag() == 0x7777, "probe status " + st);
            check(m.probe(prev, 0x7777, Messages.ALL_BITS, st), "probe does not take the message");
            int r = m.recv(prev, 0x7777, Messages.ALL_BITS, buf, 64, 40);
            st = await(m, r, "after probe");
            check(st.error() == 0 && buf.get(ValueLayout.JAVA_LONG, 64) == 0x5150L + prev, "message after probe: " + st);
        });
    }

    /**
     * Window sends: eager below the threshold, rendezvous above (the receiver reads from the
     * sender's window into its own), 100 KiB and 300 KiB, and with the threshold at 0 even 8
     * bytes; a rendezvous message matching a receive on plain memory fails both sides' requests.
     */
    void rendezvousPullsLargeMessagesFromWindows() throws Exception {
        long chunk = 300 * 1024;
        try (Window src = eps.allocateWindow(threads * chunk); Window dst = eps.allocateWindow(threads * chunk)) {
            inThreads((t, ep, m, buf) -> {
                int next = (me + 1) % p;
                int prev = (me + p - 1) % p;
                long base = t * chunk;
                for (long i = 0; i < chunk; i += 8) {
                    src.local().set(ValueLayout.JAVA_LONG, base + i, word(me, t, 0, (int) i));
                }
                long[] sizes = {8, m.eagerLimit(), 100 * 1024, chunk};
                for (long size : sizes) {
                    int sq;
                    while ((sq = m.send(next, 21, src, base, size)) == Messages.BACK_PRESSURED) {
                        Thread.onSpinWait();
                    }
                    check(size <= m.eagerLimit() ? sq == Messages.COMPLETED : sq >= 0 && sq != Messages.COMPLETED,
                            size + " bytes: eager completes at once, rendezvous is a request: " + sq);
                    MessageStatus st = await(m, m.recv(prev, 21, Messages.ALL_BITS, dst, base, chunk), size + " bytes");
                    check(st.error() == 0 && st.length() == size && st.source() == prev, size + " bytes: " + st);
                    MessageStatus ss = await(m, sq, "send of " + size);
                    check(ss.error() == 0, "send status " + ss);
                    for (long i = 0; i < size; i += 8) {
                        if (dst.local().get(ValueLayout.JAVA_LONG, base + i) != word(prev, t, 0, (int) i)) {
                            throw new AssertionError(size + " bytes: wrong word at " + i);
                        }
                    }
                    dst.local().asSlice(base, chunk).fill((byte) 0);
                }
                m.rendezvousThreshold(0);
                int sq;
                while ((sq = m.send(next, 22, src, base, 8)) == Messages.BACK_PRESSURED) {
                    Thread.onSpinWait();
                }
                check(sq != Messages.COMPLETED, "8 bytes above a threshold of 0 go by rendezvous");
                MessageStatus st = await(m, m.recv(prev, 22, Messages.ALL_BITS, buf, 0, 8), "rendezvous into plain memory");
                check(st.error() == MessageStatus.NOT_REGISTERED, "receive on plain memory: " + st);
                check(await(m, sq, "refused rendezvous").error() == MessageStatus.REMOTE_ERROR, "sender told");
                m.rendezvousThreshold(m.eagerLimit());
            });
        }
    }
}
