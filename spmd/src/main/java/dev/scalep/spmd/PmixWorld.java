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
 * collecting fence and one get per rank, barrier as a collecting fence with nothing new to collect.
 *
 * <p>The barrier collects because a fence without {@code PMIX_COLLECT_DATA} is no barrier across
 * nodes under Slurm's pmix plugin (22.05, OpenPMIx 4.2, measured with one rank on each of two hosts):
 * it returned on each node as soon as that node's ranks had entered it, while the collecting fence
 * waited for the other host's rank. Ranks that raced past it posted to peers whose QPs were not yet
 * connected, or read before the peers' writes had landed.
 */
final class PmixWorld extends LaunchedWorld {
    private final MemorySegment nspace;
    private final String nspaceName;

    private PmixWorld(MemorySegment proc, int size) {
        super(proc.get(JAVA_INT, PmixStructs.PROC_RANK), size);
        this.nspace = proc;
        this.nspaceName = proc.getString(0, StandardCharsets.UTF_8);
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
            w.start(null);
        } catch (RuntimeException e) {
            Pmix.finalizeClient();
            throw new BootstrapException("exchanging the rank table over PMIx failed: " + e.getMessage());
        }
        return w;
    }

    @Override
    public String bootstrap() {
        return "pmix";
    }

    /** put, commit, collecting fence, one get per rank (unique key per round). */
    @Override
    byte[][] exchange(int round, byte[] mine) {
        String key = "scalep.ag." + round;
        check("PMIx_Put", Pmix.putBytes(key, mine));
        check("PMIx_Commit", Pmix.commit());
        awaitAll(() -> check("PMIx_Fence", Pmix.fence(true)));
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
    void fence() {
        awaitAll(() -> check("PMIx_Fence", Pmix.fence(true))); // collecting: see the class comment
    }

    private void check(String call, int rc) {
        if (rc != PmixStructs.PMIX_SUCCESS) {
            throw new IllegalStateException(call + " failed with " + Pmix.errorString(rc) + " on rank " + rank + " of " + size);
        }
    }

    @Override
    String session() {
        return "pmix nspace " + nspaceName;
    }

    @Override
    void leave() {
        Pmix.finalizeClient();
    }
}
