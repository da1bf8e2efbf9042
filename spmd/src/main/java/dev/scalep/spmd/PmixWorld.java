package dev.scalep.spmd;

import dev.scalep.spmd.ffm.Pmix;
import dev.scalep.spmd.ffm.PmixStructs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * A world bootstrapped through the PMIx client library ({@link Pmix}): rank from {@code PMIx_Init},
 * size from {@code pmix.job.size} on the wildcard rank, all-gather as put of a byte object, commit,
 * collecting fence and one get per rank, barrier as a fence without data. Host and pid of every
 * rank are all-gathered once at start; a watcher thread checks the same-node ranks while a
 * collective waits and ends this process with {@link World#EXIT_RANK_LOST} when one has died.
 */
final class PmixWorld implements World {
    private static final long WATCH_PERIOD_MS = 100;

    private final MemorySegment nspace;
    private final String nspaceName;
    private final int rank;
    private final int size;
    private RankTable table;
    private volatile String waitingIn;
    private Thread watcher;
    private int round;
    private boolean closed;

    private PmixWorld(MemorySegment proc, int size) {
        this.nspace = proc;
        this.nspaceName = proc.getString(0, StandardCharsets.UTF_8);
        this.rank = proc.get(JAVA_INT, PmixStructs.PROC_RANK);
        this.size = size;
    }

    static PmixWorld connect(Map<String, String> env) {
        String who = "PMIX_NAMESPACE=" + env.getOrDefault("PMIX_NAMESPACE", "unset") + ", PMIX_RANK="
                + env.getOrDefault("PMIX_RANK", "unset");
        try {
            Pmix.load();
        } catch (IllegalArgumentException | LinkageError e) {
            throw new BootstrapException("launched by a PMIx launcher (" + who + ") but the PMIx client library "
                    + Pmix.SONAME + " cannot be loaded (" + e.getMessage() + "); install libpmix2");
        }
        Arena boot = Arena.global();
        MemorySegment proc = boot.allocate(PmixStructs.PMIX_PROC);
        int rc = Pmix.init(proc);
        if (rc != PmixStructs.PMIX_SUCCESS) {
            // No PMIx_Finalize after a failed init: OpenPMIx 4.2 crashes there with a dead server.
            throw new BootstrapException("PMIx_Init failed with " + Pmix.errorString(rc) + ": launched by a PMIx launcher ("
                    + who + ") whose server is unreachable; start the job with a running `mpirun` or `srun --mpi=pmix`");
        }
        Pmix.Value[] v = new Pmix.Value[1];
        rc = Pmix.get(proc, PmixStructs.PMIX_RANK_WILDCARD, PmixStructs.PMIX_JOB_SIZE, v);
        if (rc != PmixStructs.PMIX_SUCCESS || v[0].number() < 1) {
            Pmix.finalizeClient();
            throw new BootstrapException("PMIx_Get(" + PmixStructs.PMIX_JOB_SIZE + ") failed with "
                    + (rc != PmixStructs.PMIX_SUCCESS ? Pmix.errorString(rc) : "size " + v[0].number()) + " (" + who + ")");
        }
        PmixWorld w = new PmixWorld(proc, (int) v[0].number());
        try {
            w.table = RankTable.parse(w.gather(RankTable.self()));
        } catch (RuntimeException e) {
            Pmix.finalizeClient();
            throw new BootstrapException("exchanging the rank table over PMIx failed: " + e.getMessage());
        }
        w.watcher = Thread.ofPlatform().daemon().name("scalep-spmd-watch").start(w::watch);
        return w;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public int localRank(int r) {
        return table.localRank(r);
    }

    @Override
    public int node(int r) {
        return table.node(r);
    }

    @Override
    public String host(int r) {
        return table.host(r);
    }

    @Override
    public int nodes() {
        return table.nodes();
    }

    @Override
    public synchronized byte[][] allgather(byte[] mine) {
        checkOpen();
        waitingIn = "allgather";
        try {
            return gather(mine);
        } finally {
            waitingIn = null;
        }
    }

    /** put, commit, collecting fence, one get per rank (unique key per round). */
    private byte[][] gather(byte[] mine) {
        String key = "scalep.ag." + (round++);
        check("PMIx_Put", Pmix.putBytes(key, mine));
        check("PMIx_Commit", Pmix.commit());
        check("PMIx_Fence", Pmix.fence(true));
        byte[][] out = new byte[size][];
        Pmix.Value[] v = new Pmix.Value[1];
        for (int r = 0; r < size; r++) {
            int rc = Pmix.get(nspace, r, key, v);
            if (rc != PmixStructs.PMIX_SUCCESS) {
                throw new IllegalStateException("PMIx_Get(rank " + r + ", " + key + ") failed with " + Pmix.errorString(rc));
            }
            if (v[0].type() != PmixStructs.PMIX_BYTE_OBJECT_TYPE) {
                throw new IllegalStateException("PMIx_Get(rank " + r + ", " + key + ") returned type " + v[0].type()
                        + ", not a byte object");
            }
            out[r] = v[0].bytes();
        }
        return out;
    }

    @Override
    public synchronized void barrier() {
        checkOpen();
        waitingIn = "barrier";
        try {
            check("PMIx_Fence", Pmix.fence(false));
        } finally {
            waitingIn = null;
        }
    }

    private void check(String call, int rc) {
        if (rc != PmixStructs.PMIX_SUCCESS) {
            int lost = lostRank();
            if (lost >= 0) {
                abortLost(lost, call + " (" + Pmix.errorString(rc) + ")");
            }
            throw new IllegalStateException(call + " failed with " + Pmix.errorString(rc) + " on rank " + rank + " of " + size);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("world is closed");
        }
    }

    @Override
    public String describe() {
        return "pmix nspace " + nspaceName + ", rank " + rank + " of " + size + " on " + table.nodes() + " node"
                + (table.nodes() == 1 ? "" : "s");
    }

    @Override
    public int lostRank() {
        return table == null ? -1 : table.firstDeadOnNode(rank);
    }

    private void watch() {
        while (!closed) {
            try {
                Thread.sleep(WATCH_PERIOD_MS);
            } catch (InterruptedException e) {
                return;
            }
            String op = waitingIn;
            if (op != null) {
                int lost = table.firstDeadOnNode(rank);
                if (lost >= 0) {
                    abortLost(lost, op);
                }
            }
        }
    }

    /** One line naming the lost rank, then exit without PMIx_Finalize (the job is over). */
    private void abortLost(int lost, String op) {
        Output.line(System.err, "spmd: rank " + lost + " (pid " + table.pid(lost) + " on " + table.host(lost)
                + ") was lost while rank " + rank + " waited in " + op + "; exiting with status " + EXIT_RANK_LOST);
        Runtime.getRuntime().halt(EXIT_RANK_LOST);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        watcher.interrupt();
        Pmix.finalizeClient();
    }
}
