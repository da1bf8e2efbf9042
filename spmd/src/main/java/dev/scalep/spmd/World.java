package dev.scalep.spmd;

import java.util.Map;

/**
 * The ranks of one SPMD job: N copies of a program started together by a launcher (Open MPI's
 * {@code mpirun}/{@code prterun}, Slurm's {@code srun}, MPICH's {@code mpiexec.hydra}, Flux), each a rank with its own
 * threads. A world knows its rank, the job's size, and the node and local rank of every rank; it
 * offers an all-gather of bytes and a barrier for the application's own set-up (endpoint
 * addresses travel through {@link #allgather}). Collectives are called by every rank, in the same
 * order, by one thread per rank at a time.
 *
 * <p>{@link #open()} bootstraps through whatever the launcher speaks (PMIx, PMI-2 or PMI-1: see
 * {@link Bootstrap}) and is rank 0 of 1 when nothing launched the process. While a collective
 * waits for the other ranks, those on the same node are watched: when one has died (and the wait
 * has not ended within a grace of 3 s, the time a rank that finished normally may take to see the
 * same fence end) the waiting rank prints which rank was lost and exits with
 * {@link #EXIT_RANK_LOST}, so nothing hangs and the launcher ends the job.
 */
public interface World extends AutoCloseable {
    /** Exit status of a rank that found another rank dead. */
    int EXIT_RANK_LOST = 3;

    /** This process's rank, 0..size-1. */
    int rank();

    /** Number of ranks in the job. */
    int size();

    /** This rank's index among the ranks on its node. */
    default int localRank() {
        return localRank(rank());
    }

    /** Rank {@code r}'s index among the ranks on its node. */
    int localRank(int r);

    /** The node rank {@code r} runs on, numbered 0.. in order of each node's lowest rank. */
    int node(int r);

    /** The host name rank {@code r} runs on. */
    String host(int r);

    /** Number of distinct nodes. */
    int nodes();

    /**
     * Every rank contributes {@code mine}; every rank gets all contributions, indexed by rank (its
     * own included). Lengths may differ between ranks.
     */
    byte[][] allgather(byte[] mine);

    /** Return when every rank has entered the barrier. */
    void barrier();

    /** How this world was formed, e.g. {@code pmix nspace prterun-host-1234@1, rank 0 of 4}. */
    String describe();

    /** The protocol that formed this world: {@code pmix}, {@code pmi2}, {@code pmi1}, {@code none} (not launched) or {@code local}. */
    String bootstrap();

    /** The lowest rank known to have died (same-node ranks are checked now), or -1. */
    int lostRank();

    /** Leave the job (PMIx_Finalize, or the PMI finalize, when launched). Idempotent. */
    @Override
    void close();

    /** A world of this process alone: rank 0 of 1, no launcher. */
    static World single() {
        return new SingletonWorld();
    }

    /** Bootstrap from the process environment: see {@link Bootstrap#open(Map)}. */
    static World open() {
        return Bootstrap.open(System.getenv());
    }
}
