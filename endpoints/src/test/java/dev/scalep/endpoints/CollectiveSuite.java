package dev.scalep.endpoints;

import dev.scalep.endpoints.Collectives.ReduceOp;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The behavioural suite of {@link Collectives}, run by one rank of a world with {@code threads}
 * threads (in one JVM by {@link CollectiveTest}): every thread slot runs the collectives with the
 * same slot of every rank at the same time, and every result is checked exactly (integer sums;
 * doubles holding integers, whose sums are exact), at sizes below and above the eager limit.
 */
final class CollectiveSuite {
    static final long SCRATCH = 256 * 1024;
    static final long DATA = 1 << 20;

    private final WorldEndpoints eps;
    private final int threads;
    private final int p;
    private final int me;
    private final Window scratch;
    private final Window data;

    private CollectiveSuite(World world, WorldEndpoints eps, int threads, Window scratch, Window data) {
        this.eps = eps;
        this.threads = threads;
        this.p = world.size();
        this.me = world.rank();
        this.scratch = scratch;
        this.data = data;
    }

    static List<String> runAll(World world, Device device, String level, int threads) throws Exception {
        List<String> ran = new ArrayList<>();
        try (WorldEndpoints eps = MessageSuite.open(world, device, level, threads, MessageSuite.OPTS);
             Window scratch = eps.allocateWindow(threads * SCRATCH);
             Window data = eps.allocateWindow(threads * DATA)) {
            CollectiveSuite s = new CollectiveSuite(world, eps, threads, scratch, data);
            s.inThreads(s::barriers);
            ran.add("barrier");
            s.inThreads(s::broadcasts);
            ran.add("broadcast");
            s.inThreads(s::allreduces);
            ran.add("allreduce");
            s.inThreads(s::allgathers);
            ran.add("allgather");
            s.inThreads(s::alltoalls);
            ran.add("alltoall");
            s.shortcut();
            ran.add("shortcut");
        }
        return ran;
    }

    interface Body {
        void run(int t, Collectives c, MemorySegment mine, long base) throws Exception;
    }

    void inThreads(Body body) throws Exception {
        eachSlot(ep -> {
            int t = ep.index();
            body.run(t, new Collectives(ep, scratch, t * SCRATCH, SCRATCH), data.local(), t * DATA);
        });
    }

    interface SlotBody {
        void run(RankEndpoint ep) throws Exception;
    }

    /** {@code body} in one thread per slot, each ending in the slots' barrier; the first failure is rethrown. */
    void eachSlot(SlotBody body) throws Exception {
        SlotThreads.run(eps, threads, me, 0, (ep, unused) -> body.run(ep));
    }

    /**
     * {@link RankEndpoint#collectives()} in two acquires of every slot (the same object, its call
     * sequence continuing): an allreduce and a barrier over the runtime's scratch; tags reserved
     * for collectives refused in sends, receives and probes; and a user receive of any source and
     * any tag, posted before the collectives, takes none of their messages but the user message
     * sent after them.
     */
    void shortcut() throws Exception {
        Collectives[] first = new Collectives[threads];
        for (int round = 0; round < 2; round++) {
            int rd = round;
            eachSlot(ep -> {
                int t = ep.index();
                Collectives c = ep.collectives();
                check(c == ep.collectives(), "one Collectives per slot");
                if (rd == 0) {
                    first[t] = c;
                } else {
                    check(c == first[t], "the slot keeps its Collectives from one acquire to the next");
                }
                Messages m = ep.messages();
                MemorySegment mine = data.local();
                long base = t * DATA;
                MessageStatus st = new MessageStatus();
                refused(() -> m.send(0, Collectives.TAG_BASE | 5, mine, base, 8), "send");
                refused(() -> m.send(0, 0x7FFFFFFF, data, base, 8), "send");
                refused(() -> m.recv(Messages.ANY_SOURCE, 0x7F00FF00, Messages.ALL_BITS, mine, base, 8), "recv");
                refused(() -> m.recv(0, Collectives.TAG_BASE, 0, data, base, 8), "recv");
                refused(() -> m.probe(Messages.ANY_SOURCE, 0x7F123456, 0, st), "probe");
                int wide = m.recv(Messages.ANY_SOURCE, 0, 0, mine, base + 64, 16);
                check(wide >= 0, "wide receive posted: " + wide);
                long[] v = {me + 1L, t, rd};
                c.allreduce(v, 0, 3, ReduceOp.SUM);
                check(v[0] == (long) p * (p + 1) / 2 && v[1] == (long) p * t && v[2] == (long) p * rd,
                        "allreduce over the runtime's scratch: " + v[0] + ", " + v[1] + ", " + v[2]);
                // No rank sends its user message before this rank has entered the barrier below.
                check(!m.test(wide, st) && !m.probe(Messages.ANY_SOURCE, 0, 0, st),
                        "a user receive of any tag took (or a probe saw) a collective's message");
                c.barrier();
                mine.set(ValueLayout.JAVA_LONG, base, 1000L * me + t);
                int q;
                while ((q = m.send((me + 1) % p, 0x1234, mine, base, 8)) == Messages.BACK_PRESSURED) {
                    m.progress();
                }
                check(q == Messages.COMPLETED, "user send: " + q);
                check(m.waitFor(wide, st), "the user message arrived");
                int from = (me - 1 + p) % p;
                check(st.tag() == 0x1234 && st.source() == from && st.length() == 8
                        && mine.get(ValueLayout.JAVA_LONG, base + 64) == 1000L * from + t, "the wide receive got " + st);
            });
        }
    }

    interface Refusable {
        void call() throws Exception;
    }

    static void refused(Refusable call, String op) throws Exception {
        try {
            call.call();
        } catch (IllegalArgumentException e) {
            check(e.getMessage().startsWith(op + ": tag 0x7f") && e.getMessage().contains("reserved for collectives"),
                    "refusal names the op and the tag: " + e.getMessage());
            return;
        }
        throw new AssertionError(op + " with a reserved tag was not refused");
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    /** Many barriers in a row, interleaved with a broadcast whose data must be the barrier count. */
    void barriers(int t, Collectives c, MemorySegment mine, long base) {
        for (int i = 0; i < 20; i++) {
            c.barrier();
            if (me == i % p) {
                mine.set(ValueLayout.JAVA_LONG, base, 1000L * i + t);
            }
            c.broadcast(i % p, data, base, 8);
            check(mine.get(ValueLayout.JAVA_LONG, base) == 1000L * i + t, "barrier round " + i);
        }
    }

    static long pattern(int rank, int t, long i) {
        return ((long) rank << 40) ^ ((long) t << 32) ^ (i * 0x9E3779B1L);
    }

    void broadcasts(int t, Collectives c, MemorySegment mine, long base) {
        for (long bytes : new long[]{8, 200, 4096, 100_000}) {
            for (int root = 0; root < p; root++) {
                long words = bytes / 8;
                for (long i = 0; i < words; i++) {
                    mine.set(ValueLayout.JAVA_LONG, base + 8 * i, me == root ? pattern(root, t, i) : -1);
                }
                c.broadcast(root, data, base, bytes);
                for (long i = 0; i < words; i++) {
                    check(mine.get(ValueLayout.JAVA_LONG, base + 8 * i) == pattern(root, t, i),
                            "broadcast of " + bytes + " B from " + root + ": word " + i);
                }
            }
        }
    }

    void allreduces(int t, Collectives c, MemorySegment mine, long base) {
        long tri = (long) p * (p + 1) / 2;
        for (int n : new int[]{0, 1, 3, 25, 100, 2500, 20_000, 40_000}) {
            long[] l = new long[n + 2];
            double[] d = new double[n + 2];
            for (ReduceOp op : ReduceOp.values()) {
                for (int i = 0; i < n; i++) {
                    l[i + 1] = (long) (me + 1) * (i + 1) + t;
                    d[i + 1] = l[i + 1];
                }
                l[0] = -7;
                l[n + 1] = -9;
                c.allreduce(l, 1, n, op);
                c.allreduce(d, 1, n, op);
                check(l[0] == -7 && l[n + 1] == -9, "allreduce wrote outside its range");
                for (int i = 0; i < n; i++) {
                    long expect = switch (op) {
                        case SUM -> tri * (i + 1) + (long) p * t;
                        case MIN -> (i + 1) + t;
                        case MAX -> (long) p * (i + 1) + t;
                    };
                    check(l[i + 1] == expect, "allreduce " + op + " of " + n + " longs: [" + i + "] = " + l[i + 1]
                            + ", expected " + expect);
                    check(d[i + 1] == expect, "allreduce " + op + " of " + n + " doubles: [" + i + "] = " + d[i + 1]
                            + ", expected " + expect);
                }
            }
        }
    }

    void allgathers(int t, Collectives c, MemorySegment mine, long base) {
        for (long block : new long[]{8, 256, 40_000}) {
            long words = block / 8;
            for (int r = 0; r < p; r++) {
                for (long i = 0; i < words; i++) {
                    mine.set(ValueLayout.JAVA_LONG, base + r * block + 8 * i, r == me ? pattern(me, t, i) : -1);
                }
            }
            c.allgather(data, base, block);
            for (int r = 0; r < p; r++) {
                for (long i = 0; i < words; i++) {
                    check(mine.get(ValueLayout.JAVA_LONG, base + r * block + 8 * i) == pattern(r, t, i),
                            "allgather of " + block + " B: rank " + r + " word " + i);
                }
            }
        }
    }

    static long count(int from, int to, int t, long unit) {
        return 8 * unit * ((from + 2 * to + t) % 4);
    }

    void alltoalls(int t, Collectives c, MemorySegment mine, long base) {
        long half = DATA / 2;
        for (long unit : new long[]{1, 30, 1000}) {
            long[] sc = new long[p];
            long[] sd = new long[p];
            long[] rc = new long[p];
            long[] rd = new long[p];
            long so = 0;
            long ro = 0;
            for (int r = 0; r < p; r++) {
                sc[r] = count(me, r, t, unit);
                sd[r] = so;
                so += sc[r];
                rc[r] = count(r, me, t, unit);
                rd[r] = ro;
                ro += rc[r];
                for (long i = 0; i < sc[r] / 8; i++) {
                    mine.set(ValueLayout.JAVA_LONG, base + sd[r] + 8 * i, pattern(me, t, r * 1_000_000L + i));
                }
            }
            mine.asSlice(base + half, ro).fill((byte) 0);
            c.alltoall(data, base, sc, sd, data, base + half, rc, rd);
            for (int r = 0; r < p; r++) {
                for (long i = 0; i < rc[r] / 8; i++) {
                    check(mine.get(ValueLayout.JAVA_LONG, base + half + rd[r] + 8 * i)
                            == pattern(r, t, me * 1_000_000L + i), "alltoall unit " + unit + ": from rank " + r
                            + " word " + i);
                }
            }
        }
    }
}
