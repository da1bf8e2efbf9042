package dev.scalep.spmd;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The ranks of a job as threads of this process: {@link #create(int)} returns one world per rank,
 * each to be used by its own thread. Collectives meet at a barrier; a collective that waits longer
 * than the timeout (a rank that never came, or failed) throws instead of hanging. It lets the
 * endpoint exchange run inside one JVM, where the simulated devices of every rank are one device.
 */
public final class LocalWorld implements World {
    private final Shared shared;
    private final int rank;
    private boolean closed;

    private static final class Shared {
        final int size;
        final CyclicBarrier barrier;
        final byte[][] slots;
        final long timeoutMillis;

        Shared(int size, long timeoutMillis) {
            this.size = size;
            this.barrier = new CyclicBarrier(size);
            this.slots = new byte[size][];
            this.timeoutMillis = timeoutMillis;
        }
    }

    private LocalWorld(Shared shared, int rank) {
        this.shared = shared;
        this.rank = rank;
    }

    /** {@code size} ranks whose collectives give up after 120 s. */
    public static List<World> create(int size) {
        return create(size, 120_000);
    }

    /** {@code size} ranks whose collectives give up after {@code timeoutMillis}. */
    public static List<World> create(int size, long timeoutMillis) {
        if (size < 1) {
            throw new IllegalArgumentException("a world has at least one rank: " + size);
        }
        Shared s = new Shared(size, timeoutMillis);
        List<World> out = new ArrayList<>(size);
        for (int r = 0; r < size; r++) {
            out.add(new LocalWorld(s, r));
        }
        return out;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return shared.size;
    }

    @Override
    public int localRank(int r) {
        return check(r);
    }

    @Override
    public int node(int r) {
        check(r);
        return 0;
    }

    @Override
    public String host(int r) {
        check(r);
        return RankTable.hostName();
    }

    @Override
    public int nodes() {
        return 1;
    }

    @Override
    public byte[][] allgather(byte[] mine) {
        shared.slots[rank] = mine.clone();
        await("allgather");
        byte[][] out = new byte[shared.size][];
        for (int r = 0; r < shared.size; r++) {
            out[r] = shared.slots[r].clone();
        }
        await("allgather");
        return out;
    }

    @Override
    public void barrier() {
        await("barrier");
    }

    private void await(String op) {
        if (closed) {
            throw new IllegalStateException("world is closed");
        }
        try {
            shared.barrier.await(shared.timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            shared.barrier.reset();
            throw new IllegalStateException("rank " + rank + " interrupted in " + op, e);
        } catch (BrokenBarrierException | TimeoutException e) {
            shared.barrier.reset();
            throw new IllegalStateException("rank " + rank + ": " + op + " abandoned (a rank failed or did not arrive within "
                    + shared.timeoutMillis + " ms)", e);
        }
    }

    @Override
    public String describe() {
        return "local: rank " + rank + " of " + shared.size + " (threads of one process)";
    }

    @Override
    public String bootstrap() {
        return "local";
    }

    @Override
    public int lostRank() {
        return -1;
    }

    @Override
    public void close() {
        closed = true;
    }

    private int check(int r) {
        if (r < 0 || r >= shared.size) {
            throw new IndexOutOfBoundsException("rank " + r + " of a world of " + shared.size);
        }
        return r;
    }
}
