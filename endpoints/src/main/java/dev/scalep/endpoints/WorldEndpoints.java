package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.ResourceUsage;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Endpoints of one rank that reach every other rank of a {@link World}: thread {@code t} of this
 * rank gets a {@link RankEndpoint} connected to thread {@code t}'s endpoint on every other rank.
 * The QP addresses and the peer buffers (address, rkey, length) travel through the world's
 * all-gather; nothing else is exchanged.
 *
 * <p>What a sharing level implies per peer, with {@code T} threads, {@code P} ranks and QPs shared
 * {@code x} ways:
 * <ul>
 *   <li>RC (mlx5, rxe): a QP talks to one remote QP, so the rank builds one endpoint manager per
 *       other rank and the sharing level applies within each: {@code ceil(T/x)} QPs per peer,
 *       {@code (P-1)·ceil(T/x)} per rank, growing linearly with the ranks (and so do the level's
 *       contexts, CQs and buffers, which each per-peer manager builds for itself). The connection is
 *       eager, all-to-all: fine for the tens of ranks of one job on a few nodes, not for thousands.</li>
 *   <li>SRD and UD (EFA): one manager, one QP per endpoint (as the level shares them) whatever
 *       {@code P}; each QP holds one address handle per other rank ({@code P-1} AHs), and each
 *       endpoint one set of peer buffers per rank. Only the AH table grows with the ranks.</li>
 * </ul>
 * After every rank has connected, the world's barrier runs, so no rank sends before all receives
 * are posted. {@link #close()} takes a barrier first too, so no rank tears down what another still
 * writes to.
 */
public final class WorldEndpoints implements AutoCloseable {
    private final World world;
    private final QpType qpType;
    private final int threads;
    /** RC: manager reaching rank r at index r (null for this rank); connectionless: one shared manager. */
    private final EndpointManager[] byRank;
    private final List<EndpointManager> managers = new ArrayList<>();
    private final boolean[] taken;
    private boolean closed;

    private WorldEndpoints(World world, QpType qpType, int threads) {
        this.world = world;
        this.qpType = qpType;
        this.threads = threads;
        this.byRank = new EndpointManager[world.size()];
        this.taken = new boolean[threads];
    }

    /**
     * Build this rank's endpoints for {@code threads} threads at sharing level {@code cfg} and connect
     * them to every other rank. Every rank calls it with the same device kind, level and thread count.
     */
    public static WorldEndpoints open(World world, Device device, SharingConfig cfg, int threads, EndpointOptions opts) {
        QpType type = device.capabilities().qpTypes().contains(QpType.RC) ? QpType.RC : QpType.SRD;
        WorldEndpoints w = new WorldEndpoints(world, type, threads);
        int p = world.size();
        int me = world.rank();
        try {
            if (p > 1 && type.connectionless()) {
                EndpointManager m = EndpointManager.open(device, cfg, threads, opts, p - 1);
                w.managers.add(m);
                for (int r = 0; r < p; r++) {
                    w.byRank[r] = r == me ? null : m;
                }
                byte[][] all = world.allgather(m.address());
                byte[][] others = new byte[p - 1][];
                for (int r = 0; r < p; r++) {
                    if (r != me) {
                        others[peerIndex(r, me)] = all[r];
                    }
                }
                m.connect(others);
            } else if (p > 1) {
                byte[][] mine = new byte[p][];
                for (int r = 0; r < p; r++) {
                    if (r != me) {
                        EndpointManager m = EndpointManager.open(device, cfg, threads, opts, 1);
                        w.managers.add(m);
                        w.byRank[r] = m;
                        mine[r] = m.address();
                    }
                }
                byte[][] all = world.allgather(pack(mine));
                for (int r = 0; r < p; r++) {
                    if (r != me) {
                        w.byRank[r].connect(unpack(all[r], p)[me]);
                    }
                }
            }
            world.barrier();
        } catch (RuntimeException | Error e) {
            w.closeManagers();
            throw e;
        }
        return w;
    }

    /** Peer index of rank {@code r} on a connectionless QP of rank {@code me}. */
    static int peerIndex(int r, int me) {
        return r < me ? r : r - 1;
    }

    private static byte[] pack(byte[][] perRank) {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        try (DataOutputStream o = new DataOutputStream(bo)) {
            o.writeInt(perRank.length);
            for (byte[] b : perRank) {
                o.writeInt(b == null ? -1 : b.length);
                if (b != null) {
                    o.write(b);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bo.toByteArray();
    }

    private static byte[][] unpack(byte[] b, int ranks) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(b))) {
            int n = in.readInt();
            if (n != ranks) {
                throw new IllegalArgumentException("a rank sent addresses for " + n + " ranks; the world has " + ranks);
            }
            byte[][] out = new byte[n][];
            for (int r = 0; r < n; r++) {
                int len = in.readInt();
                if (len > in.available()) {
                    throw new IllegalArgumentException("truncated address list");
                }
                out[r] = len < 0 ? null : in.readNBytes(len);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalArgumentException("malformed address list: " + e.getMessage(), e);
        }
    }

    /** Bind a free set of endpoints (one per other rank, or one that reaches them all) to the calling thread. */
    public synchronized RankEndpoint acquire() {
        if (closed) {
            throw new IllegalStateException("world endpoints are closed");
        }
        int t = 0;
        while (t < threads && taken[t]) {
            t++;
        }
        if (t == threads) {
            throw new IllegalStateException("all " + threads + " endpoints are acquired; release one first");
        }
        taken[t] = true;
        Endpoint[] eps = new Endpoint[world.size()];
        for (EndpointManager m : managers) {
            Endpoint e = m.acquire();
            if (e.index() != t) {
                throw new IllegalStateException("endpoint " + e.index() + " acquired for thread slot " + t);
            }
            for (int r = 0; r < eps.length; r++) {
                if (byRank[r] == m) {
                    eps[r] = e;
                }
            }
        }
        return new RankEndpoint(this, t, eps, qpType.connectionless(), world.rank());
    }

    synchronized void release(RankEndpoint e) {
        for (Endpoint ep : e.distinct()) {
            ep.manager().release(ep);
        }
        taken[e.index()] = false;
    }

    public World world() {
        return world;
    }

    public QpType qpType() {
        return qpType;
    }

    public int threads() {
        return threads;
    }

    /** The managers this rank built: one per other rank on RC, one in all on connectionless devices. */
    public List<EndpointManager> managers() {
        return Collections.unmodifiableList(managers);
    }

    /** QPs this rank created to reach one other rank (RC), or in all (connectionless). */
    public int qpsPerPeer() {
        return managers.isEmpty() ? 0 : managers.get(0).qps.size();
    }

    /** Resources held by this rank's endpoints (sum over its managers). */
    public ResourceUsage resources() {
        ResourceUsage sum = ResourceUsage.ZERO;
        for (EndpointManager m : managers) {
            sum = sum.plus(m.resources());
        }
        return sum;
    }

    /** Barrier (no rank still writes here), then every manager closed. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            world.barrier();
        } finally {
            closeManagers();
        }
    }

    private void closeManagers() {
        RuntimeException first = null;
        for (EndpointManager m : managers) {
            try {
                m.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
