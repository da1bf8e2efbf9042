package dev.scalep.endpoints;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

/**
 * Collective operations of one thread slot among the same slot of every rank of a world, written
 * over the public {@link Messages} API: T threads of a rank run T independent collectives at once,
 * each with the threads of its index on the other ranks. Every slot of every rank must call the
 * same collectives in the same order (as in MPI); thread-bound like its {@link RankEndpoint}.
 *
 * <p><b>Tags.</b> Collectives send with tags whose top byte is {@value #TAG_BYTE_HEX} (tags
 * {@code 0x7F000000..0x7FFFFFFF}: the call's sequence number and the step), which {@link Messages}
 * reserves: an application's send, receive or probe naming one is refused, and its receives with a
 * wide mask never take a collective's message.
 *
 * <p><b>Scratch.</b> {@link RankEndpoint#collectives()} gives the slot one over
 * {@value WorldEndpoints#COLLECTIVE_SCRATCH} bytes of the runtime's own window, kept for the slot
 * from one acquire to the next. Built by hand, a {@code Collectives} takes a region of a
 * {@link Window} on this rank (the slot's scratch, e.g. {@code t * bytes} of a window of
 * {@code threads * bytes}); every slot index of every rank must then use the same kind. Allreduce
 * stages its vectors there (half for what it sends, half for what it receives), so messages above
 * the eager limit go by rendezvous between windows. Broadcast, allgather and alltoall move bytes
 * directly between the application's windows. Nothing on the data path allocates.
 *
 * <p><b>Algorithms.</b> {@link #barrier()}: dissemination (ceil(log2 P) rounds of empty messages).
 * {@link #broadcast}: binomial tree from the root. {@link #allreduce(long[], int, int, ReduceOp)}:
 * in pieces of at most half the scratch; a piece of at least {@link #RING_BYTES} bytes and at
 * least P elements goes by ring (reduce-scatter, then allgather: 2(P-1) steps of 1/P of the
 * piece), a smaller one by recursive doubling among the largest power of two of ranks, the others
 * first folding their vector into a partner and receiving the result at the end. {@link #allgather}:
 * ring (P-1 steps). {@link #alltoall}: pairwise exchange (step s sends to rank + s and receives
 * from rank - s).
 */
public final class Collectives {
    /** The reduction of {@link #allreduce}. */
    public enum ReduceOp { SUM, MIN, MAX }

    /** The first tag reserved for collectives ({@code 0x7F000000}). */
    public static final int TAG_BASE = 0x7F000000;
    static final String TAG_BYTE_HEX = "0x7F";
    /** Allreduce pieces of at least this many bytes (and P elements) go by ring. */
    public static final long RING_BYTES = 16 * 1024;

    private static final int LONG = 0;
    private static final int DOUBLE = 1;

    private RankEndpoint re;
    private final Messages m;
    private final Window scratch;
    private final MemorySegment local;
    private final long sendOff;
    private final long recvOff;
    private final long half;
    private final int p;
    private final int me;
    private final MessageStatus st = new MessageStatus();
    private int seq;
    private int kind;
    private long[] longs;
    private double[] doubles;

    /**
     * Collectives of {@code re}'s thread slot, staging through {@code bytes} bytes at
     * {@code offset} of this rank's part of {@code scratch} (at least 16 bytes; 64 KiB or more
     * keeps allreduce in few pieces).
     */
    public Collectives(RankEndpoint re, Window scratch, long offset, long bytes) {
        if (re == null || scratch == null) {
            throw new IllegalArgumentException("Collectives: a RankEndpoint and a scratch Window are needed");
        }
        if (offset < 0 || bytes < 16 || offset + bytes > scratch.size()) {
            throw new IllegalArgumentException("Collectives: scratch range [" + offset + ", " + (offset + bytes)
                    + ") is not inside the window of " + scratch.size() + " bytes (or below 16 bytes)");
        }
        this.re = re;
        this.m = re.messages();
        this.scratch = scratch;
        this.local = scratch.local();
        this.half = (bytes / 2) & ~7L;
        this.sendOff = offset;
        this.recvOff = offset + half;
        this.p = re.ranks();
        this.me = re.rank();
    }

    /** The slot's collectives, now held by {@code e} (the runtime's, from one acquire of the slot to the next). */
    Collectives bind(RankEndpoint e) {
        re = e;
        return this;
    }

    /** Ranks taking part. */
    public int ranks() {
        return p;
    }

    // ---- barrier, broadcast ------------------------------------------------------------------

    /** A barrier among this slot index of every rank (dissemination over empty messages). */
    public void barrier() {
        int base = nextTag();
        int step = 0;
        for (int k = 1; k < p; k <<= 1, step++) {
            exchange("barrier", (me + k) % p, (me - k + p) % p, base | step, scratch, sendOff, 0, scratch, recvOff, 0);
        }
    }

    /**
     * Broadcast {@code length} bytes at {@code offset} of {@code w} from rank {@code root} to the
     * same offset of {@code w} on every rank (binomial tree).
     */
    public void broadcast(int root, Window w, long offset, long length) {
        checkRank("broadcast", root);
        checkRange("broadcast", w, offset, length);
        int tag = nextTag();
        int vr = (me - root + p) % p;
        int mask = 1;
        while (mask < p) {
            if ((vr & mask) != 0) {
                int from = (me - mask + p) % p;
                int q = recv("broadcast", from, tag, w, offset, length);
                await("broadcast", q, from, length);
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while (mask > 0) {
            if (vr + mask < p) {
                int to = (me + mask) % p;
                await("broadcast", send("broadcast", to, tag, w, offset, length), to, -1);
            }
            mask >>= 1;
        }
    }

    // ---- allgather, alltoall ------------------------------------------------------------------

    /**
     * Allgather (ring): rank r's {@code blockBytes} bytes are at {@code offset + r * blockBytes} of
     * {@code w} on rank r; afterwards every rank holds every rank's block there.
     */
    public void allgather(Window w, long offset, long blockBytes) {
        checkRange("allgather", w, offset, blockBytes * p);
        int base = nextTag();
        int right = (me + 1) % p;
        int left = (me - 1 + p) % p;
        for (int s = 0; s < p - 1; s++) {
            int sb = (me - s + p) % p;
            int rb = (me - s - 1 + 2 * p) % p;
            exchange("allgather", right, left, base | (s & 0xFF), w, offset + sb * blockBytes, blockBytes,
                    w, offset + rb * blockBytes, blockBytes);
        }
    }

    /**
     * Alltoall with per-rank counts (pairwise exchange): {@code sendCounts[r]} bytes at
     * {@code sendOffset + sendDispls[r]} of {@code send} go to rank r, which receives them at
     * {@code recvOffset + recvDispls[me]} of {@code recv} and must name the same count in its
     * {@code recvCounts[me]}. Counts may be 0.
     */
    public void alltoall(Window send, long sendOffset, long[] sendCounts, long[] sendDispls,
                         Window recv, long recvOffset, long[] recvCounts, long[] recvDispls) {
        if (sendCounts.length < p || sendDispls.length < p || recvCounts.length < p || recvDispls.length < p) {
            throw new IllegalArgumentException("alltoall: counts and displacements need " + p + " entries (one per rank)");
        }
        for (int r = 0; r < p; r++) {
            checkRange("alltoall send to rank " + r, send, sendOffset + sendDispls[r], sendCounts[r]);
            checkRange("alltoall receive from rank " + r, recv, recvOffset + recvDispls[r], recvCounts[r]);
        }
        int base = nextTag();
        MemorySegment.copy(send.local(), sendOffset + sendDispls[me], recv.local(), recvOffset + recvDispls[me],
                Math.min(sendCounts[me], recvCounts[me]));
        for (int s = 1; s < p; s++) {
            int to = (me + s) % p;
            int from = (me - s + p) % p;
            exchange("alltoall", to, from, base | (s & 0xFF), send, sendOffset + sendDispls[to], sendCounts[to],
                    recv, recvOffset + recvDispls[from], recvCounts[from]);
        }
    }

    // ---- allreduce ----------------------------------------------------------------------------

    /** Reduce {@code count} longs at {@code from} of {@code data} over every rank with {@code op}, in place. */
    public void allreduce(long[] data, int from, int count, ReduceOp op) {
        Objects.checkFromIndexSize(from, count, data.length);
        kind = LONG;
        longs = data;
        try {
            allreduce(from, count, op);
        } finally {
            longs = null;
        }
    }

    /** Reduce {@code count} doubles at {@code from} of {@code data} over every rank with {@code op}, in place. */
    public void allreduce(double[] data, int from, int count, ReduceOp op) {
        Objects.checkFromIndexSize(from, count, data.length);
        kind = DOUBLE;
        doubles = data;
        try {
            allreduce(from, count, op);
        } finally {
            doubles = null;
        }
    }

    private void allreduce(int from, int count, ReduceOp op) {
        int piece = (int) Math.min(Integer.MAX_VALUE, half / 8);
        for (int done = 0; done == 0 || done < count; ) {
            int n = Math.min(piece, count - done);
            if (p > 1) {
                if ((long) n * 8 >= RING_BYTES && n >= p) {
                    ring(from + done, n, op);
                } else {
                    doubling(from + done, n, op);
                }
            }
            done += Math.max(n, 1);
        }
    }

    private void doubling(int at, int n, ReduceOp op) {
        int tag = nextTag();
        int p2 = Integer.highestOneBit(p);
        int rem = p - p2;
        long bytes = 8L * n;
        if (me >= p2) {
            stage(at, n);
            exchange("allreduce", me - p2, me - p2, tag, scratch, sendOff, bytes, scratch, recvOff, bytes);
            load(at, n);
            return;
        }
        if (me < rem) {
            int q = recv("allreduce", me + p2, tag, scratch, recvOff, bytes);
            await("allreduce", q, me + p2, bytes);
            combine(at, n, op);
        }
        int step = 1;
        for (int mask = 1; mask < p2; mask <<= 1, step++) {
            int partner = me ^ mask;
            stage(at, n);
            exchange("allreduce", partner, partner, tag | step, scratch, sendOff, bytes, scratch, recvOff, bytes);
            combine(at, n, op);
        }
        if (me < rem) {
            stage(at, n);
            await("allreduce", send("allreduce", me + p2, tag, scratch, sendOff, bytes), me + p2, -1);
        }
    }

    private void ring(int at, int n, ReduceOp op) {
        int base = nextTag();
        int right = (me + 1) % p;
        int left = (me - 1 + p) % p;
        for (int s = 0; s < p - 1; s++) {
            int sb = (me - s + p) % p;
            int rb = (me - s - 1 + 2 * p) % p;
            int ss = at + blockStart(sb, n);
            int sn = blockStart(sb + 1, n) - blockStart(sb, n);
            int rs = at + blockStart(rb, n);
            int rn = blockStart(rb + 1, n) - blockStart(rb, n);
            stage(ss, sn);
            exchange("allreduce", right, left, base | (s & 0x7F), scratch, sendOff, 8L * sn, scratch, recvOff, 8L * rn);
            combine(rs, rn, op);
        }
        for (int s = 0; s < p - 1; s++) {
            int sb = (me + 1 - s + p) % p;
            int rb = (me - s + p) % p;
            int ss = at + blockStart(sb, n);
            int sn = blockStart(sb + 1, n) - blockStart(sb, n);
            int rs = at + blockStart(rb, n);
            int rn = blockStart(rb + 1, n) - blockStart(rb, n);
            stage(ss, sn);
            exchange("allreduce", right, left, base | 0x80 | (s & 0x7F), scratch, sendOff, 8L * sn,
                    scratch, recvOff, 8L * rn);
            load(rs, rn);
        }
    }

    private int blockStart(int block, int n) {
        return (int) ((long) block * n / p);
    }

    private void stage(int at, int n) {
        if (kind == LONG) {
            MemorySegment.copy(longs, at, local, ValueLayout.JAVA_LONG_UNALIGNED, sendOff, n);
        } else {
            MemorySegment.copy(doubles, at, local, ValueLayout.JAVA_DOUBLE_UNALIGNED, sendOff, n);
        }
    }

    private void load(int at, int n) {
        if (kind == LONG) {
            MemorySegment.copy(local, ValueLayout.JAVA_LONG_UNALIGNED, recvOff, longs, at, n);
        } else {
            MemorySegment.copy(local, ValueLayout.JAVA_DOUBLE_UNALIGNED, recvOff, doubles, at, n);
        }
    }

    private void combine(int at, int n, ReduceOp op) {
        if (kind == LONG) {
            long[] d = longs;
            for (int i = 0; i < n; i++) {
                long v = local.get(ValueLayout.JAVA_LONG_UNALIGNED, recvOff + 8L * i);
                long a = d[at + i];
                d[at + i] = switch (op) {
                    case SUM -> a + v;
                    case MIN -> Math.min(a, v);
                    case MAX -> Math.max(a, v);
                };
            }
        } else {
            double[] d = doubles;
            for (int i = 0; i < n; i++) {
                double v = local.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, recvOff + 8L * i);
                double a = d[at + i];
                d[at + i] = switch (op) {
                    case SUM -> a + v;
                    case MIN -> Math.min(a, v);
                    case MAX -> Math.max(a, v);
                };
            }
        }
    }

    // ---- messages -----------------------------------------------------------------------------

    private int nextTag() {
        int t = TAG_BASE | ((seq & 0xFFFF) << 8);
        seq++;
        return t;
    }

    /** Post the receive from {@code from}, send to {@code to}, wait for both. */
    private void exchange(String what, int to, int from, int tag, Window sw, long so, long sl, Window rw, long ro, long rl) {
        int rq = recv(what, from, tag, rw, ro, rl);
        int sq = send(what, to, tag, sw, so, sl);
        await(what, sq, to, -1);
        await(what, rq, from, rl);
    }

    private int recv(String what, int from, int tag, Window w, long off, long cap) {
        int q = m.recvAnyTag(from, tag, Messages.ALL_BITS, w, off, cap);
        if (q < 0) {
            throw new IllegalStateException(what + ": receive from rank " + from + " refused (" + q
                    + "; every request handle of the slot may be open)");
        }
        return q;
    }

    private int send(String what, int to, int tag, Window w, long off, long len) {
        int q;
        long deadline = 0;
        while ((q = m.sendAnyTag(to, tag, w, off, len)) == Messages.BACK_PRESSURED) {
            long now = System.nanoTime();
            if (deadline == 0) {
                deadline = now + 60_000_000_000L;
                re.idle().reset();
            } else if (now - deadline > 0) {
                throw new IllegalStateException(what + ": send of " + len + " bytes to rank " + to
                        + " stayed back-pressured for 60 s (rank " + me + ", slot " + re.index() + ")");
            }
            re.idle().idle();
        }
        if (q < 0) {
            throw new IllegalStateException(what + ": send of " + len + " bytes to rank " + to + " failed: errno " + (-q));
        }
        if (q == Messages.COMPLETED) {
            // An eager send is only staged; a collective may end on it (a broadcast's leaves, the last
            // step of allreduce's fallback), and the application may not progress for long after.
            m.progress();
        }
        return q;
    }

    private void await(String what, int q, int peer, long expect) {
        if (!m.waitFor(q, st)) {
            throw new IllegalStateException(what + ": no completion from rank " + peer + " in 60 s (rank " + me
                    + ", slot " + re.index() + "; " + m.describe(peer) + ")");
        }
        if (st.error() != MessageStatus.OK) {
            throw new IllegalStateException(what + ": the message with rank " + peer + " completed with "
                    + MessageStatus.errorName(st.error()));
        }
        if (expect >= 0 && st.length() != expect) {
            throw new IllegalStateException(what + ": rank " + peer + " sent " + st.length() + " bytes where "
                    + expect + " were expected (do all ranks pass the same sizes?)");
        }
    }

    private void checkRank(String what, int rank) {
        if (rank < 0 || rank >= p) {
            throw new IllegalArgumentException(what + ": rank " + rank + " is not a rank of a world of " + p);
        }
    }

    private static void checkRange(String what, Window w, long off, long len) {
        if (w == null || off < 0 || len < 0 || off + len > w.size()) {
            throw new IllegalArgumentException(what + ": range [" + off + ", " + (off + len) + ") is outside "
                    + (w == null ? "a null window" : "the window of " + w.size() + " bytes"));
        }
    }
}
