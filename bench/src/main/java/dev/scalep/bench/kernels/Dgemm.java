package dev.scalep.bench.kernels;

import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointManager;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.endpoints.Substitution;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.endpoints.Completion;
import dev.scalep.verbs.Device;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * Global-array DGEMM over endpoints: a "server" manager holds A, B and C in registered memory;
 * client threads fetch tiles of A and B with RDMA reads, multiply, and write tiles of C back with
 * RDMA writes. C = A×B is verified against a local reference multiply; the matrices hold small
 * integers, so the result is exact.
 *
 * <p>Mapping onto the Endpoint API. The research gave each QP three buffers and three MRs (A and B
 * tile landing zones and the C tile source). An {@link Endpoint} has one MR with three regions,
 * and reaches only the regions of the one server endpoint it is paired with; so:
 * <ul>
 * <li>client read region = landing zone for one A tile (offset 0) and one B tile (offset tile bytes);
 * <li>client send region = source of the C tile being written;
 * <li>server send region of each endpoint = A then B, stored tile by tile (one tile, one read). The
 *     global array is replicated per server endpoint because a client can read only its peer's region;
 * <li>server target region of each endpoint = C, tile by tile; tile {@code L} is computed by the
 *     client endpoint {@code L mod threads} and lands in the paired server endpoint's C, from where
 *     the server assembles C.
 * </ul>
 * Every request is signaled (q = 1, p = 1): a thread waits for its two reads before computing and
 * for its write before reusing the C source.
 */
public final class Dgemm {
    private Dgemm() {
    }

    /** Value of A at (i, j): a small integer. */
    static double a(int i, int j) {
        return ((i * 7 + j * 3) % 11) - 5;
    }

    /** Value of B at (i, j): a small integer. */
    static double b(int i, int j) {
        return ((i * 5 + j * 2) % 13) - 6;
    }

    /** {@link #run(World, Device, String, SharingConfig, int, int, int)} in this process alone. */
    public static KernelSupport.Result run(Device device, String label, SharingConfig cfg, int threads, int n, int tile)
            throws InterruptedException {
        return run(World.single(), device, label, cfg, threads, n, tile);
    }

    /**
     * Run C = A×B for {@code n}×{@code n} matrices in {@code tile}×{@code tile} tiles at sharing
     * level {@code cfg}. One rank: a server manager and {@code threads} client threads in this
     * process. Several ranks: rank 0 holds the matrices (one server manager per client rank), and
     * every other rank runs {@code threads} client threads; client {@code c} of {@code C} in all
     * ({@code c = (rank-1)·threads + t}) computes tiles {@code c, c+C, ...}. Rank 0 verifies C.
     */
    public static KernelSupport.Result run(World world, Device device, String label, SharingConfig cfg, int threads, int n,
                                           int tile) throws InterruptedException {
        if (n < 1 || tile < 1 || n % tile != 0) {
            throw new IllegalArgumentException("--size " + n + " must be a positive multiple of --tile " + tile);
        }
        if (threads < 1) {
            throw new IllegalArgumentException("--threads must be >= 1: " + threads);
        }
        final long matBytes = (long) n * n * Double.BYTES;
        if (2 * matBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("--size " + n + " is too large for one endpoint region");
        }
        final int tileBytes = tile * tile * Double.BYTES;
        int bufferBytes = (int) Math.max(2 * matBytes, 2L * tileBytes);
        EndpointOptions opts = EndpointOptions.DEFAULTS.withFeatures(1, 1, 0).withDepths(16, 1).withBuffers(bufferBytes, 64);
        int ranks = world.size();
        int rank = world.rank();
        int clients = ranks == 1 ? threads : (ranks - 1) * threads;
        List<EndpointManager> servers = new ArrayList<>(); // rank 0 (or the only rank): the server for client rank r at r-1
        EndpointManager client = null;
        try {
            if (ranks == 1) {
                servers.add(EndpointManager.open(device, cfg, threads, opts));
                client = EndpointManager.open(device, cfg, threads, opts);
                client.connect(servers.get(0));
            } else if (rank == 0) {
                ByteArrayOutputStream packed = new ByteArrayOutputStream();
                for (int r = 1; r < ranks; r++) {
                    EndpointManager m = EndpointManager.open(device, cfg, threads, opts);
                    servers.add(m);
                    byte[] a = m.address();
                    packed.write(ByteBuffer.allocate(4).putInt(a.length).array(), 0, 4);
                    packed.write(a, 0, a.length);
                }
                byte[][] all = world.allgather(packed.toByteArray());
                for (int r = 1; r < ranks; r++) {
                    servers.get(r - 1).connect(all[r]);
                }
            } else {
                client = EndpointManager.open(device, cfg, threads, opts);
                byte[][] all = world.allgather(client.address());
                ByteBuffer b = ByteBuffer.wrap(all[0]);
                byte[] mine = null;
                for (int r = 1; r < ranks; r++) {
                    byte[] a = new byte[b.getInt()];
                    b.get(a);
                    if (r == rank) {
                        mine = a;
                    }
                }
                client.connect(mine);
            }
            for (EndpointManager server : servers) {
                fillServer(server, threads, n, tile, matBytes);
            }
            world.barrier(); // every pair is connected and every server holds A and B
            EndpointManager notesFrom = client != null ? client : servers.get(0);
            String notes = notesFrom.substitutions().stream().map(Substitution::toString).collect(Collectors.joining("; "));
            double seconds = 0;
            long ops = 0;
            if (client != null) {
                int base = ranks == 1 ? 0 : (rank - 1) * threads;
                long[] spanOps = runClients(client, label, threads, base, clients, n, tile, matBytes);
                seconds = spanOps[0] / 1e9;
                ops = spanOps[1];
            }
            world.barrier(); // every client's writes of C have completed
            long mismatches = 0;
            String first = null;
            if (rank == 0) {
                double[] ref = reference(n);
                int nt = n / tile;
                for (int i = 0; i < n; i++) {
                    for (int j = 0; j < n; j++) {
                        int c = ((i / tile) * nt + (j / tile)) % clients;
                        MemorySegment cseg = servers.get(ranks == 1 ? 0 : c / threads).endpoint(c % threads).targetBuffer();
                        double got = cseg.get(ValueLayout.JAVA_DOUBLE, tileOffset(i, j, tile, nt));
                        if (Double.doubleToRawLongBits(got) != Double.doubleToRawLongBits(ref[i * n + j])) {
                            if (first == null) {
                                first = "C[" + i + "][" + j + "] = " + got + ", expected " + ref[i * n + j];
                            }
                            mismatches++;
                        }
                    }
                }
            }
            KernelSupport.Combined all = KernelSupport.combine(world, seconds, mismatches, ops, first);
            double gflops = 2.0 * n * n * (double) n / all.seconds() / 1e9;
            String detail = all.mismatches() == 0 ? "C = A×B exact (" + n + "x" + n + ", tile " + tile + ")"
                    : all.mismatches() + " wrong elements, first " + all.firstBad();
            return new KernelSupport.Result("dgemm", label, ranks, threads, all.seconds(), gflops, "GFLOP/s",
                    all.ops() / all.seconds(), all.mismatches() == 0, detail, notes);
        } finally {
            if (client != null) {
                client.close();
            }
            for (EndpointManager m : servers) {
                m.close();
            }
        }
    }

    /** The server's global arrays in every endpoint's send region, tile-major: tile (bi, bj) of A at ((bi*nt + bj) * tileBytes). */
    private static void fillServer(EndpointManager server, int threads, int n, int tile, long matBytes) {
        int nt = n / tile;
        for (int e = 0; e < threads; e++) {
            MemorySegment s = server.endpoint(e).sendBuffer();
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    long off = tileOffset(i, j, tile, nt);
                    s.set(ValueLayout.JAVA_DOUBLE, off, a(i, j));
                    s.set(ValueLayout.JAVA_DOUBLE, matBytes + off, b(i, j));
                }
            }
            server.endpoint(e).targetBuffer().fill((byte) 0);
        }
    }

    /**
     * Run {@code threads} client threads on {@code client}: thread with endpoint {@code k} is client
     * {@code base + k} of {@code clients}. Returns {span nanoseconds, requests posted}.
     */
    private static long[] runClients(EndpointManager client, String label, int threads, int base, int clients, int n, int tile,
                                     long matBytes) throws InterruptedException {
        final int nt = n / tile;
        final int tileElems = tile * tile;
        final int tileBytes = tileElems * Double.BYTES;
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        long[] done = new long[threads];
        long[] began = new long[threads];
        long[] ops = new long[threads];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int slot = t;
            Thread th = Thread.ofPlatform().name("dgemm-" + t).unstarted(() -> {
                Endpoint ep = null;
                try {
                    ep = client.acquire();
                    Completion c = new Completion();
                    double[] at = new double[tileElems];
                    double[] bt = new double[tileElems];
                    double[] acc = new double[tileElems];
                    MemorySegment land = ep.readBuffer();
                    MemorySegment src = ep.sendBuffer();
                    int me = base + ep.index();
                    start.await(60, TimeUnit.SECONDS);
                    began[slot] = System.nanoTime();
                    long id = 0;
                    for (int l = me; l < nt * nt; l += clients) {
                        int bi = l / nt;
                        int bj = l % nt;
                        Arrays.fill(acc, 0.0);
                        for (int bk = 0; bk < nt; bk++) {
                            int aOff = (bi * nt + bk) * tileBytes;
                            int bOff = (int) matBytes + (bk * nt + bj) * tileBytes;
                            final Endpoint e = ep;
                            final long rid = id;
                            KernelSupport.post(e, c, () -> e.read(rid, 0, tileBytes, aOff), "read of A tile");
                            KernelSupport.post(e, c, () -> e.read(rid + 1, tileBytes, tileBytes, bOff), "read of B tile");
                            id += 2;
                            KernelSupport.await(ep, c, 2);
                            MemorySegment.copy(land, ValueLayout.JAVA_DOUBLE, 0, at, 0, tileElems);
                            MemorySegment.copy(land, ValueLayout.JAVA_DOUBLE, tileBytes, bt, 0, tileElems);
                            multiplyAdd(at, bt, acc, tile);
                        }
                        MemorySegment.copy(acc, 0, src, ValueLayout.JAVA_DOUBLE, 0, tileElems);
                        final Endpoint e = ep;
                        final long wid = id++;
                        final int cOff = l * tileBytes;
                        KernelSupport.post(e, c, () -> e.write(wid, 0, tileBytes, cOff), "write of C tile");
                        KernelSupport.await(ep, c, 1);
                    }
                    done[slot] = System.nanoTime();
                    ops[slot] = id;
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    start.reset();
                } finally {
                    if (ep != null) {
                        try {
                            ep.close();
                        } catch (RuntimeException e) {
                            failure.compareAndSet(null, e);
                        }
                    }
                }
            });
            workers.add(th);
            th.start();
        }
        double seconds = KernelSupport.runWorkers("dgemm", label, threads, start, workers, failure, began, done);
        long total = 0;
        for (long o : ops) {
            total += o;
        }
        return new long[]{(long) (seconds * 1e9), total};
    }

    /** Byte offset of element (i, j) in the tile-major layout. */
    static long tileOffset(int i, int j, int tile, int nt) {
        int l = (i / tile) * nt + (j / tile);
        return ((long) l * tile * tile + (long) (i % tile) * tile + (j % tile)) * Double.BYTES;
    }

    /** acc += at × bt for row-major tile×tile tiles. */
    static void multiplyAdd(double[] at, double[] bt, double[] acc, int tile) {
        for (int i = 0; i < tile; i++) {
            for (int k = 0; k < tile; k++) {
                double x = at[i * tile + k];
                int bRow = k * tile;
                int cRow = i * tile;
                for (int j = 0; j < tile; j++) {
                    acc[cRow + j] += x * bt[bRow + j];
                }
            }
        }
    }

    /** The local reference product, row-major. */
    static double[] reference(int n) {
        double[] c = new double[n * n];
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < n; k++) {
                double x = a(i, k);
                for (int j = 0; j < n; j++) {
                    c[i * n + j] += x * b(k, j);
                }
            }
        }
        return c;
    }
}
