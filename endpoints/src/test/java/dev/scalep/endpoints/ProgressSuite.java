package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * The attentiveness suite ({@link ProgressMode}), run by one rank of a world of at least two with
 * {@code threads} threads: in one JVM by {@link ProgressTest} and across processes by
 * {@link ProgressMain} under {@code mpirun}. Slot t of rank 1 posts three times its credits of
 * tagged receives and then computes without making any call (it spins on a word of its window that
 * only a put of rank 0 sets); slot t of rank 0 sends it those tagged messages and then twice the
 * credits of active messages, each of which rank 1's handler answers with a reply.
 * <ul>
 *   <li>{@link ProgressMode#CALLER}: rank 0 takes at most the credits of a hundred times as many
 *       send attempts (back-pressure, bounded work: nobody on rank 1 returns credits); it then
 *       wakes rank 1 with the put, and everything completes as rank 1 progresses (its handlers
 *       running in its own thread).</li>
 *   <li>{@link ProgressMode#THREAD}: rank 0 completes every send and receives every reply while
 *       rank 1 still computes, and only then wakes it: rank 1 finds every receive complete with
 *       its bytes and every handler run, all of them in a thread other than its own (the
 *       progress thread).</li>
 * </ul>
 */
final class ProgressSuite {
    static final EndpointOptions OPTS = MessageSuite.OPTS;
    static final List<String> SCENARIOS = List.of("caller: back-pressured", "thread: completed while computing");
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    private static final int TAG = 7;
    private static final int LEN = 16;

    private final WorldEndpoints eps;
    private final int threads;
    private final int me;
    private final ProgressMode mode;

    private ProgressSuite(World world, WorldEndpoints eps, int threads, ProgressMode mode) {
        this.eps = eps;
        this.threads = threads;
        this.me = world.rank();
        this.mode = mode;
    }

    static List<String> runAll(World world, Device device, String level, int threads) throws Exception {
        if (world.size() < 2) {
            throw new IllegalArgumentException("the progress suite needs two ranks or more");
        }
        List<String> ran = new ArrayList<>();
        for (ProgressMode mode : ProgressMode.values()) {
            try (WorldEndpoints eps = WorldEndpoints.open(world, device, SharingConfig.parse(level), threads, OPTS, mode)) {
                check(eps.progressMode() == mode, "progress mode " + eps.progressMode());
                new ProgressSuite(world, eps, threads, mode).anInattentiveReceiver();
            }
            ran.add(mode == ProgressMode.CALLER ? SCENARIOS.get(0) : SCENARIOS.get(1));
        }
        return ran;
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static void expectRefusal(Runnable call, String mentions) {
        try {
            call.run();
        } catch (IllegalArgumentException e) {
            check(e.getMessage().contains(mentions), "refusal names '" + mentions + "': " + e.getMessage());
            return;
        }
        throw new AssertionError("not refused: expected a message naming '" + mentions + "'");
    }

    static byte pattern(int t, long i, long k) {
        return (byte) (t * 7 + i * 13 + k);
    }

    void anInattentiveReceiver() throws Exception {
        boolean thread = mode == ProgressMode.THREAD;
        try (Window flag = eps.allocateWindow(64L * threads); Arena shared = Arena.ofShared()) {
            SlotThreads.run(eps, threads, me, 1 << 16, (ep, confined) -> {
                int t = ep.index();
                // With a progress thread a receive may complete in it: the runtime refuses confined memory.
                if (thread) {
                    expectRefusal(() -> ep.messages().recv(0, TAG, Messages.ALL_BITS, confined, 0, LEN),
                            "confined to another thread");
                }
                MemorySegment buf = shared.allocate(1 << 16, 64);
                Messages m = ep.messages();
                ActiveMessages am = ep.activeMessages();
                int c = m.credits();
                int tagged = 3 * c;
                int active = 2 * c;
                Thread slotThread = Thread.currentThread();
                long[] got = {0};
                long[] onOther = {0};
                long[] deferred = {0};
                long[] replies = {0};
                am.register(50, msg -> { // rank 1: count, note the thread, answer
                    check(msg.header0() == got[0], "active message " + got[0] + " out of order: " + msg);
                    got[0]++;
                    if (Thread.currentThread() != slotThread) {
                        onOther[0]++;
                    }
                    int rc;
                    for (long spins = 0; (rc = msg.reply(51, msg.header0(), 0)) == ActiveMessages.BACK_PRESSURED; spins++) {
                        check(spins < 50_000_000L, "the reply to message " + msg.header0() + " stayed back-pressured");
                        deferred[0]++;
                        am.progress(); // polls (credits from rank 0 come back), runs no handler
                    }
                    check(rc == ActiveMessages.COMPLETED, "reply outcome " + rc);
                });
                am.register(51, msg -> { // rank 0: the replies, in order
                    check(msg.header0() == replies[0], "reply " + replies[0] + " out of order: " + msg);
                    replies[0]++;
                });
                int[] req = new int[tagged];
                if (me == 1) {
                    for (int i = 0; i < tagged; i++) {
                        req[i] = m.recv(0, TAG, Messages.ALL_BITS, buf, (long) i * LEN, LEN);
                        check(req[i] >= 0, "receive " + i + ": " + req[i]);
                    }
                }
                check(ep.barrier(), "barrier: handlers registered, receives posted");
                MemorySegment word = flag.local();
                long wake = 64L * t;
                if (me == 1) {
                    // Compute: no call of the slot's until rank 0's put lands.
                    for (long spins = 0; (long) WORD.getVolatile(word, wake) == 0; spins++) {
                        check(spins < 2_000_000_000L, "rank 0 never woke slot " + t + " of rank 1");
                        if ((spins & 1023) == 1023) {
                            Thread.yield();
                        } else {
                            Thread.onSpinWait();
                        }
                    }
                    MessageStatus st = new MessageStatus();
                    for (int i = 0; i < tagged; i++) {
                        check(m.waitFor(req[i], st), "receive " + i + " never completed");
                        check(st.error() == MessageStatus.OK && st.length() == LEN, "receive " + i + ": " + st);
                        for (int k = 0; k < LEN; k++) {
                            check(buf.get(ValueLayout.JAVA_BYTE, (long) i * LEN + k) == pattern(t, i, k),
                                    "byte " + k + " of message " + i);
                        }
                    }
                    if (thread) {
                        check(got[0] == active && onOther[0] == active, "handlers run while rank 1 computed: "
                                + got[0] + " of " + active + ", " + onOther[0] + " in the progress thread");
                    } else {
                        ActiveMessageSuite.progressUntil(am, () -> got[0] == active, "rank 1's handlers never ran");
                        check(onOther[0] == 0, onOther[0] + " handlers ran outside the slot's thread without a progress thread");
                    }
                } else if (me == 0) {
                    boolean[] woken = {false};
                    try {
                        sendAll(ep, m, am, flag, wake, woken, buf, c, tagged, active, replies, thread);
                    } finally {
                        if (!woken[0]) {
                            wake(ep, flag, wake); // whatever failed here, rank 1 must not compute for ever
                        }
                    }
                }
            });
        }
    }

    /** Send tagged message {@code taken}: true when it was taken, else (back-pressured) progress once. */
    private static boolean sendOrProgress(Messages m, int t, int taken, MemorySegment buf) {
        int rc = send(m, t, taken, buf);
        if (rc == Messages.COMPLETED) {
            return true;
        }
        check(rc == Messages.BACK_PRESSURED, "send outcome " + rc);
        m.progress();
        return false;
    }

    private static void sendAll(RankEndpoint ep, Messages m, ActiveMessages am, Window flag, long wake, boolean[] woken,
                                MemorySegment buf, int c, int tagged, int active, long[] replies, boolean thread) {
        int t = ep.index();
        int taken = 0;
        if (!thread) {
            for (int i = 0; i < 100 * c; i++) {
                if (sendOrProgress(m, t, taken, buf)) {
                    taken++;
                }
            }
            check(taken >= 1 && taken <= c, "a sender to an inattentive slot took " + taken
                    + " of 100 x " + c + " sends; credits " + c);
            woken[0] = true;
            wake(ep, flag, wake);
        }
        for (long spins = 0; taken < tagged; spins++) {
            check(spins < 50_000_000L, "tagged message " + taken + " stayed back-pressured");
            if (sendOrProgress(m, t, taken, buf)) {
                taken++;
            }
        }
        for (int i = 0; i < active; i++) {
            ActiveMessageSuite.send(am, 1, 50, i, 0, buf, 0, 0);
        }
        ActiveMessageSuite.progressUntil(am, () -> replies[0] == active, "replies: " + replies[0] + " of " + active);
        if (thread) {
            woken[0] = true;
            wake(ep, flag, wake);
        }
    }

    private static int send(Messages m, int t, int i, MemorySegment buf) {
        long at = 60_000 + (i % 16) * LEN;
        for (int k = 0; k < LEN; k++) {
            buf.set(ValueLayout.JAVA_BYTE, at + k, pattern(t, i, k));
        }
        return m.send(1, TAG, buf, at, LEN);
    }

    /** Set slot t's word on rank 1 with a put (no thread of rank 1 is needed for it). */
    private static void wake(RankEndpoint ep, Window flag, long at) {
        flag.local().set(ValueLayout.JAVA_LONG, at + 8, 1);
        int rc;
        while ((rc = ep.put(1, flag, at, flag, at + 8, 8)) == Endpoint.BACK_PRESSURED) {
            ep.progress();
        }
        check(rc == Endpoint.OK && ep.flush(1), "the put that wakes rank 1: " + rc);
    }
}
