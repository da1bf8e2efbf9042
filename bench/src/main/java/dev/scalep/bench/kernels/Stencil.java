package dev.scalep.bench.kernels;

import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointManager;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.endpoints.Substitution;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.endpoints.Completion;
import dev.scalep.verbs.Device;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * 5-point Jacobi stencil with 1-D (row strip) partitioning and halo exchange over endpoints,
 * verified bitwise against a sequential run of the same number of iterations.
 *
 * <p>Mapping onto the Endpoint API. Each thread has one endpoint (one QP) per neighbour, as in the
 * research. An endpoint pairs with endpoint {@code i} of one peer manager, so the links are built
 * as two managers of {@code threads - 1} endpoints each, both at the requested sharing level:
 * {@code down} (endpoint {@code k} belongs to thread {@code k}, towards {@code k+1}) and {@code up}
 * (endpoint {@code k} belongs to thread {@code k+1}, towards {@code k}), connected to each other.
 * Threads acquire their endpoints in index order so that thread {@code t} holds {@code down[t]}
 * and {@code up[t-1]}. Deviation: a CQ cannot span two managers, so a thread's two QPs complete on
 * two CQs (one per direction; within a direction the level's CQ sharing applies), not on one.
 *
 * <p>Exchange. A halo row is an RDMA write into the neighbour's target region, alternating
 * between two slots by iteration parity; after its completion (the data is placed) an 8-byte
 * iteration flag is written behind the slots, and the neighbour spins on that flag. Notification
 * by flag rather than write-with-immediate keeps the kernel correct when threads share a QP or SRQ
 * (a receive is consumed by whichever endpoint posted it first). Two slots suffice: a thread
 * writes iteration {@code i+1} only after it has the neighbour's iteration {@code i}, which the
 * neighbour sent after consuming iteration {@code i-1} from the slot being reused.
 */
public final class Stencil {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private Stencil() {
    }

    /** Initial value of cell (i, j); row 0 is a hot boundary. */
    static double initial(int i, int j, int rows) {
        if (i == 0) {
            return 1.0;
        }
        return ((i * 31 + j * 17) % 100) / 100.0;
    }

    /** One cell update; both the parallel and the sequential run use exactly this expression. */
    static double update(double c, double up, double down, double left, double right) {
        return 0.2 * (c + up + down + left + right);
    }

    /** The sequential reference: {@code iterations} sweeps of the whole {@code rows}×{@code cols} grid. */
    static double[] sequential(int rows, int cols, int iterations) {
        double[] cur = new double[rows * cols];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                cur[i * cols + j] = initial(i, j, rows);
            }
        }
        double[] next = cur.clone();
        for (int it = 0; it < iterations; it++) {
            for (int i = 1; i < rows - 1; i++) {
                for (int j = 1; j < cols - 1; j++) {
                    int x = i * cols + j;
                    next[x] = update(cur[x], cur[x - cols], cur[x + cols], cur[x - 1], cur[x + 1]);
                }
            }
            double[] t = cur;
            cur = next;
            next = t;
        }
        return cur;
    }

    /** {@link #run(World, Device, String, SharingConfig, int, int, int)} in this process alone. */
    public static KernelSupport.Result run(Device device, String label, SharingConfig cfg, int threads, int size,
                                           int iterations) throws InterruptedException {
        return run(World.single(), device, label, cfg, threads, size, iterations);
    }

    /**
     * Run {@code iterations} sweeps of a {@code size}×{@code size} grid (boundary rows and columns
     * fixed) on {@code threads} threads of every rank of {@code world} at sharing level {@code cfg}:
     * the interior rows are cut into {@code ranks × threads} strips, worker {@code g = rank·threads + t}
     * owns strip {@code g}. Neighbouring threads of one rank exchange halos through the rank's
     * {@code down}/{@code up} managers; the last thread of rank {@code r} and the first of rank
     * {@code r+1} through a one-endpoint manager on each side, connected with the addresses the
     * world all-gathers. Every rank verifies its strips; the result is combined over all ranks.
     */
    public static KernelSupport.Result run(World world, Device device, String label, SharingConfig cfg, int threads, int size,
                                           int iterations) throws InterruptedException {
        int ranks = world.size();
        int rank = world.rank();
        int workers = ranks * threads;
        if (threads < 1) {
            throw new IllegalArgumentException("--threads must be >= 1: " + threads);
        }
        if (size < 3 || size - 2 < workers) {
            throw new IllegalArgumentException("--size " + size + " leaves " + Math.max(0, size - 2)
                    + " interior rows for " + workers + " workers (" + ranks + " ranks x " + threads + " threads); give at least workers + 2");
        }
        if (iterations < 0) {
            throw new IllegalArgumentException("--iterations must be >= 0: " + iterations);
        }
        final int rows = size;
        final int cols = size;
        final int rowBytes = cols * Double.BYTES;
        final int flagOff = 2 * rowBytes;
        EndpointOptions opts = EndpointOptions.DEFAULTS.withFeatures(1, 1, 0).withDepths(16, 1).withBuffers(flagOff + 64, 64);
        int links = threads - 1;
        EndpointManager down = null;
        EndpointManager up = null;
        EndpointManager prev = null;
        EndpointManager next = null;
        try {
            if (links > 0) {
                down = EndpointManager.open(device, cfg, links, opts);
                up = EndpointManager.open(device, cfg, links, opts);
                down.connect(up);
                for (int k = 0; k < links; k++) {
                    down.endpoint(k).targetBuffer().fill((byte) 0);
                    up.endpoint(k).targetBuffer().fill((byte) 0);
                }
            }
            if (ranks > 1) {
                prev = rank > 0 ? EndpointManager.open(device, cfg, 1, opts) : null;
                next = rank < ranks - 1 ? EndpointManager.open(device, cfg, 1, opts) : null;
                connectNeighbours(world, prev, next);
            }
            final EndpointManager dn = down;
            final EndpointManager upm = up;
            final EndpointManager prv = prev;
            final EndpointManager nxt = next;
            EndpointManager any = down != null ? down : prev != null ? prev : next;
            String notes = any == null ? "" : any.substitutions().stream().map(Substitution::toString)
                    .collect(Collectors.joining("; "));
            int interior = rows - 2;
            int[] first = new int[workers + 1];
            for (int g = 0; g <= workers; g++) {
                first[g] = 1 + (int) ((long) interior * g / workers);
            }
            double[][] result = new double[threads][];
            long[] done = new long[threads];
            long[] began = new long[threads];
            AtomicInteger downTurn = new AtomicInteger();
            AtomicInteger upTurn = new AtomicInteger();
            CyclicBarrier start = new CyclicBarrier(threads + 1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> ws = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int me = t;
                final int g = rank * threads + t;
                Thread th = Thread.ofPlatform().name("stencil-" + rank + "-" + t).unstarted(() -> {
                    Endpoint toDown = null;
                    Endpoint toUp = null;
                    try {
                        if (me < links) {
                            toDown = acquireInOrder(dn, downTurn, me, failure);
                        } else if (nxt != null) {
                            toDown = nxt.acquire();
                        }
                        if (me > 0) {
                            toUp = acquireInOrder(upm, upTurn, me - 1, failure);
                        } else if (prv != null) {
                            toUp = prv.acquire();
                        }
                        int r0 = first[g];
                        int n = first[g + 1] - r0;
                        double[] cur = new double[(n + 2) * cols];
                        for (int i = 0; i < n + 2; i++) {
                            for (int j = 0; j < cols; j++) {
                                cur[i * cols + j] = initial(r0 - 1 + i, j, rows);
                            }
                        }
                        double[] nextGrid = cur.clone();
                        Completion c = new Completion();
                        start.await(60, TimeUnit.SECONDS);
                        began[me] = System.nanoTime();
                        for (int it = 0; it < iterations; it++) {
                            step(toDown, toUp, c, cur, nextGrid, n, cols, (it & 1) * rowBytes, flagOff, it + 1L);
                            double[] tmp = cur;
                            cur = nextGrid;
                            nextGrid = tmp;
                        }
                        done[me] = System.nanoTime();
                        result[me] = Arrays.copyOfRange(cur, cols, (n + 1) * cols);
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        start.reset();
                    } finally {
                        release(me < links ? toDown : null, failure);
                        release(me > 0 ? toUp : null, failure);
                        release(me == links ? toDown : null, failure);
                        release(me == 0 ? toUp : null, failure);
                    }
                });
                ws.add(th);
                th.start();
            }
            world.barrier(); // every rank's endpoints are connected and its workers are ready to start
            double seconds = KernelSupport.runWorkers("stencil", label, threads, start, ws, failure, began, done);
            double[] ref = sequential(rows, cols, iterations);
            long mismatches = 0;
            String firstBad = null;
            for (int t = 0; t < threads; t++) {
                int g = rank * threads + t;
                for (int k = 0; k < result[t].length; k++) {
                    int x = first[g] * cols + k;
                    if (Double.doubleToRawLongBits(result[t][k]) != Double.doubleToRawLongBits(ref[x])) {
                        if (firstBad == null) {
                            firstBad = "cell (" + x / cols + "," + x % cols + ") = " + result[t][k] + ", expected " + ref[x];
                        }
                        mismatches++;
                    }
                }
            }
            KernelSupport.Combined all = KernelSupport.combine(world, seconds, mismatches, 0, firstBad);
            double updates = (double) interior * (cols - 2) * iterations;
            double messages = 4.0 * (workers - 1) * iterations; // per link and iteration: row + flag, both directions
            String detail = all.mismatches() == 0 ? "bitwise equal to the sequential run (" + rows + "x" + cols + ", "
                    + iterations + " iterations)" : all.mismatches() + " cells differ, first " + all.firstBad();
            return new KernelSupport.Result("stencil", label, ranks, threads, all.seconds(), updates / all.seconds() / 1e6,
                    "Mcell/s", messages / all.seconds(), all.mismatches() == 0, detail, notes);
        } finally {
            for (EndpointManager m : new EndpointManager[]{down, up, prev, next}) {
                if (m != null) {
                    m.close();
                }
            }
        }
    }

    /**
     * Connect this rank's {@code prev} manager to the previous rank's {@code next} and its
     * {@code next} to the next rank's {@code prev}, with addresses all-gathered through the world;
     * a barrier follows, so every receive is posted before anyone writes.
     */
    private static void connectNeighbours(World world, EndpointManager prev, EndpointManager next) {
        byte[] p = prev == null ? new byte[0] : prev.address();
        byte[] n = next == null ? new byte[0] : next.address();
        ByteBuffer b = ByteBuffer.allocate(8 + p.length + n.length);
        b.putInt(p.length).put(p).putInt(n.length).put(n);
        byte[][] all = world.allgather(b.array());
        int r = world.rank();
        if (prev != null) {
            prev.endpoint(0).targetBuffer().fill((byte) 0);
            prev.connect(part(all[r - 1], 1));
        }
        if (next != null) {
            next.endpoint(0).targetBuffer().fill((byte) 0);
            next.connect(part(all[r + 1], 0));
        }
        world.barrier();
    }

    /** Part {@code i} (0 = prev, 1 = next) of a neighbour's packed addresses. */
    private static byte[] part(byte[] packed, int i) {
        ByteBuffer b = ByteBuffer.wrap(packed);
        byte[] p = new byte[b.getInt()];
        b.get(p);
        if (i == 0) {
            return p;
        }
        byte[] n = new byte[b.getInt()];
        b.get(n);
        return n;
    }

    /** Acquire endpoint {@code index} of {@code m}: threads take turns so that acquire() hands out that index. */
    private static Endpoint acquireInOrder(EndpointManager m, AtomicInteger turn, int index,
                                           AtomicReference<Throwable> failure) {
        long deadline = System.nanoTime() + KernelSupport.TIMEOUT_NANOS;
        while (turn.get() != index) {
            if (failure.get() != null || System.nanoTime() > deadline) {
                throw new IllegalStateException("gave up waiting to acquire endpoint " + index);
            }
            Thread.yield();
        }
        Endpoint e = m.acquire();
        turn.incrementAndGet();
        if (e.index() != index) {
            throw new IllegalStateException("acquired endpoint " + e.index() + ", expected " + index);
        }
        return e;
    }

    private static void release(Endpoint e, AtomicReference<Throwable> failure) {
        if (e != null) {
            try {
                e.close();
            } catch (RuntimeException x) {
                failure.compareAndSet(null, x);
            }
        }
    }

    /**
     * One iteration of one worker: exchange the halo rows of {@code cur} with the neighbours, then
     * relax its {@code n} rows into {@code next}. A method of its own, called once per iteration,
     * so that the JIT compiles it as a method that every level shares: as the body of the worker's
     * one long-running call it was compiled on stack (OSR) during whichever level ran first and
     * compiled again when the next level took other paths, which made the first level measured
     * about 3x slower than the same level measured second.
     */
    private static void step(Endpoint toDown, Endpoint toUp, Completion c, double[] cur, double[] next, int n, int cols,
                             int slot, int flagOff, long iteration) {
        if (toDown != null) {
            send(toDown, c, cur, n * cols, cols, slot, flagOff, iteration);
        }
        if (toUp != null) {
            send(toUp, c, cur, cols, cols, slot, flagOff, iteration);
        }
        if (toDown != null) {
            receive(toDown, cur, (n + 1) * cols, cols, slot, flagOff, iteration);
        }
        if (toUp != null) {
            receive(toUp, cur, 0, cols, slot, flagOff, iteration);
        }
        relax(cur, next, n, cols);
    }

    /** The five-point update of rows {@code 1..n} of {@code cur} into {@code next}. */
    private static void relax(double[] cur, double[] next, int n, int cols) {
        for (int i = 1; i <= n; i++) {
            for (int j = 1; j < cols - 1; j++) {
                int x = i * cols + j;
                next[x] = update(cur[x], cur[x - cols], cur[x + cols], cur[x - 1], cur[x + 1]);
            }
        }
    }

    /** Write row {@code from} of {@code grid} into the neighbour's slot, wait until placed, then raise its flag. */
    private static void send(Endpoint ep, Completion c, double[] grid, int from, int cols, int slot, int flagOff, long iteration) {
        MemorySegment src = ep.sendBuffer();
        MemorySegment.copy(grid, from, src, ValueLayout.JAVA_DOUBLE, slot, cols);
        int bytes = cols * Double.BYTES;
        KernelSupport.post(ep, c, () -> ep.write(iteration * 2, slot, bytes, slot), "halo write");
        KernelSupport.await(ep, c, 1);
        src.set(ValueLayout.JAVA_LONG, flagOff, iteration);
        KernelSupport.post(ep, c, () -> ep.write(iteration * 2 + 1, flagOff, Long.BYTES, flagOff), "halo flag write");
        KernelSupport.await(ep, c, 1);
    }

    /** Wait until the neighbour's flag reaches {@code iteration}, then copy its row into {@code grid} at {@code to}. */
    private static void receive(Endpoint ep, double[] grid, int to, int cols, int slot, int flagOff, long iteration) {
        MemorySegment target = ep.targetBuffer();
        long deadline = 0;
        int spins = 0;
        while ((long) LONG.getAcquire(target, (long) flagOff) < iteration) {
            if (++spins == 256) {
                spins = 0;
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + KernelSupport.TIMEOUT_NANOS;
                } else if (now > deadline) {
                    throw new IllegalStateException("halo of iteration " + iteration + " did not arrive on endpoint "
                            + ep.index() + " within 60 s");
                }
                Thread.yield();
            }
        }
        MemorySegment.copy(target, ValueLayout.JAVA_DOUBLE, slot, grid, to, cols);
    }
}
