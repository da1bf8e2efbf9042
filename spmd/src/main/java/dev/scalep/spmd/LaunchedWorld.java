package dev.scalep.spmd;

/**
 * What every world a launcher formed shares, whatever protocol carries it: the rank table (host
 * and pid of every rank, exchanged once at start), one all-gather key per round, and the watch for
 * dead ranks. While a fence waits for every rank ({@link #awaitAll}), a watcher thread checks the
 * ranks on this node; when one is dead and the same fence is still waiting {@link #GRACE_PERIODS}
 * checks later, or a collective fails while one is dead, the process prints one line naming the
 * lost rank and ends with {@link World#EXIT_RANK_LOST}, so nothing hangs. The grace is for the rank
 * that passed the job's last fence and exited normally while this one had not yet read the same
 * fence's answer; the gets that follow a fence are answered by the server and are not watched.
 */
abstract class LaunchedWorld implements World {
    private static final long WATCH_PERIOD_MS = 100;
    /** Checks a dead rank must be seen by while the same fence still waits before this rank gives up (3 s). */
    static final int GRACE_PERIODS = 30;

    final int rank;
    final int size;
    private RankTable table;
    /** The collective under way (for the message), or null. */
    private volatile String op;
    /** Sequence number of the fence now waiting, 0 when none waits. */
    private volatile long fenceWaiting;
    private long fences;
    private Thread watcher;
    private int round;
    private volatile boolean closed;
    /** Why this protocol was chosen (set by {@link Bootstrap}), for {@link #describe()}. */
    String chosen = "";

    LaunchedWorld(int rank, int size) {
        this.rank = rank;
        this.size = size;
    }

    /** Every rank's {@code mine} for round {@code round} (a fresh key space each round), indexed by rank. */
    abstract byte[][] exchange(int round, byte[] mine);

    /** Return when every rank has arrived. */
    abstract void fence();

    /** Leave the job (finalize). Called once, from {@link #close()}. */
    abstract void leave();

    /** The protocol and its session, e.g. {@code pmix nspace prterun-vm-1@1}. */
    abstract String session();

    /**
     * Exchange the rank table and start the watcher; the world is usable after this. {@code nodeOf}
     * is the launcher's own node of every rank, or null to group ranks by host name.
     */
    final void start(int[] nodeOf) {
        table = RankTable.parse(exchange(round++, RankTable.self()), nodeOf);
        watcher = Thread.ofPlatform().daemon().name("scalep-spmd-watch").start(this::watch);
    }

    @Override
    public final int rank() {
        return rank;
    }

    @Override
    public final int size() {
        return size;
    }

    @Override
    public final int localRank(int r) {
        return table.localRank(r);
    }

    @Override
    public final int node(int r) {
        return table.node(r);
    }

    @Override
    public final String host(int r) {
        return table.host(r);
    }

    @Override
    public final int nodes() {
        return table.nodes();
    }

    @Override
    public final synchronized byte[][] allgather(byte[] mine) {
        checkOpen();
        op = "allgather";
        try {
            return exchange(round++, mine);
        } catch (RuntimeException e) {
            throw failed("allgather", e);
        } finally {
            op = null;
        }
    }

    @Override
    public final synchronized void barrier() {
        checkOpen();
        op = "barrier";
        try {
            fence();
        } catch (RuntimeException e) {
            throw failed("barrier", e);
        } finally {
            op = null;
        }
    }

    /** Run {@code fence}, a step that returns when every rank has reached it, under the watch for dead ranks. */
    final void awaitAll(Runnable fence) {
        fenceWaiting = ++fences;
        try {
            fence.run();
        } finally {
            fenceWaiting = 0;
        }
    }

    /** A collective failed: when a rank on this node is dead that is the cause (one line, exit 3); else the failure. */
    private RuntimeException failed(String op, RuntimeException e) {
        int lost = lostRank();
        if (lost >= 0) {
            abortLost(lost, op + " (" + e.getMessage() + ")");
        }
        return e instanceof PmiException ? new IllegalStateException(op + " on rank " + rank + " of " + size + ": "
                + e.getMessage(), e) : e;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("world is closed");
        }
    }

    @Override
    public final String describe() {
        return session() + ", rank " + rank + " of " + size + " on " + table.nodes() + " node" + (table.nodes() == 1 ? "" : "s")
                + (chosen.isEmpty() ? "" : " (" + chosen + ")");
    }

    @Override
    public final int lostRank() {
        return table == null ? -1 : table.firstDeadOnNode(rank);
    }

    private void watch() {
        long suspect = 0; // the fence during which a dead rank was seen, and how many checks in a row
        int seen = 0;
        while (!closed) {
            try {
                Thread.sleep(WATCH_PERIOD_MS);
            } catch (InterruptedException e) {
                return;
            }
            long f = fenceWaiting;
            int lost = f == 0 ? -1 : table.firstDeadOnNode(rank);
            if (lost < 0) {
                suspect = 0;
                seen = 0;
            } else if (f != suspect) {
                suspect = f;
                seen = 1;
            } else if (++seen >= GRACE_PERIODS && fenceWaiting == f) {
                String in = op;
                abortLost(lost, in == null ? "a fence" : in);
            }
        }
    }

    /** One line naming the lost rank, then exit without finalizing (the job is over). */
    private void abortLost(int lost, String op) {
        Output.line(System.err, "spmd: rank " + lost + " (pid " + table.pid(lost) + " on " + table.host(lost)
                + ") was lost while rank " + rank + " waited in " + op + "; exiting with status " + EXIT_RANK_LOST);
        Runtime.getRuntime().halt(EXIT_RANK_LOST);
    }

    @Override
    public final synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (watcher != null) {
            watcher.interrupt();
        }
        leave();
    }
}
