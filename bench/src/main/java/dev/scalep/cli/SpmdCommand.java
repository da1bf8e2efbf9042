package dev.scalep.cli;

import dev.scalep.endpoints.AllToAllCheck;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.endpoints.WorldEndpoints;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.Bootstrap;
import dev.scalep.spmd.LocalWorld;
import dev.scalep.spmd.Output;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.QpType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * {@code scalep spmd}: the N ranks × T threads check. Every thread of every rank writes a stamp into
 * every other rank and reads the stamp every other rank prepared for it, and verifies both. Ranks
 * come from the launcher ({@code mpirun -np N ./scalep spmd}) or, with {@code --ranks N}, are
 * threads of this process.
 */
@Command(name = "spmd", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"N ranks x T threads: every thread RDMA-writes to and reads from every other rank and verifies "
                + "what it received. Ranks come from the launcher (PMIx, PMI-2 or PMI-1; SCALEP_BOOTSTRAP=pmix,pmi2,pmi1 "
                + "chooses) or, with --ranks, are threads of this process.",
                "Exit status 1 when anything does not verify."},
        footer = {"", "Examples:",
                "  mpirun -np 4 ./scalep spmd --threads 2",
                "  srun -n 4 --mpi=pmi2 ./scalep spmd --verbose",
                "  mpiexec.hydra -n 2 ./scalep spmd",
                "  ./scalep spmd --ranks 3 --threads 2 --device sim:efa"})
final class SpmdCommand implements Callable<Integer> {
    @Option(names = "--device", paramLabel = "NAME", description = "Device (default: ${DEFAULT-VALUE}).")
    String device = Devices.DEFAULT;

    @Option(names = "--threads", paramLabel = "T", description = "Threads per rank (default ${DEFAULT-VALUE}).")
    int threads = 2;

    @Option(names = "--category", paramLabel = "LEVEL", description = "Sharing level of each rank's endpoints (default ${DEFAULT-VALUE}).")
    String category = "static";

    @Option(names = "--rounds", paramLabel = "K", description = "Rounds of writes and reads (default ${DEFAULT-VALUE}).")
    int rounds = 3;

    @Option(names = {"-v", "--verbose"}, description = "Every rank prints how it joined the job (bootstrap, session, node).")
    boolean verbose;

    @Option(names = "--ranks", paramLabel = "N",
            description = "Run N ranks as threads of this process (not when a launcher started it).")
    Integer ranks;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (threads < 1 || threads > 256) {
            throw new UserException("--threads must be in 1..256: " + threads);
        }
        if (rounds < 1) {
            throw new UserException("--rounds must be >= 1: " + rounds);
        }
        boolean launched = Bootstrap.launched(System.getenv());
        if (ranks != null && launched) {
            throw new UserException("--ranks runs ranks as threads of one process; this process was started by a launcher "
                    + "that gives the ranks (drop --ranks; the launcher's -np or -n sets them)");
        }
        if (ranks != null && (ranks < 2 || ranks > 64)) {
            throw new UserException("--ranks must be in 2..64: " + ranks);
        }
        Device dev = Devices.byName(device);
        SharingConfig cfg = SharingConfig.parse(category);
        if (ranks == null) {
            try (World w = World.open()) {
                RankAgreement.check(w, spec, Set.of("--ranks"));
                if (w.size() < 2) {
                    throw new UserException("one rank has nobody to talk to: launch it with `mpirun -np N ./scalep spmd` "
                            + "or give --ranks N");
                }
                return rank(w, dev, cfg);
            }
        }
        List<World> worlds = LocalWorld.create(ranks);
        AtomicReferenceArray<Object> rc = new AtomicReferenceArray<>(ranks);
        List<Thread> ts = new ArrayList<>();
        for (World w : worlds) {
            ts.add(Thread.ofPlatform().name("rank-" + w.rank()).start(() -> {
                try {
                    rc.set(w.rank(), rank(w, dev, cfg));
                } catch (Throwable t) {
                    rc.set(w.rank(), t);
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        int worst = 0;
        for (int r = 0; r < ranks; r++) {
            Object o = rc.get(r);
            if (o instanceof RuntimeException e) {
                throw e;
            }
            if (o instanceof Throwable t) {
                throw new IllegalStateException("rank " + r + ": " + t, t);
            }
            worst = Math.max(worst, (Integer) o);
        }
        return worst;
    }

    /** One rank: connect, run the check, gather every rank's counts; rank 0 prints. */
    private int rank(World w, Device dev, SharingConfig cfg) throws InterruptedException {
        if (verbose) {
            Output.line(System.out, "spmd: rank " + w.rank() + " of " + w.size() + " on " + w.host(w.rank()) + " (node " + w.node(w.rank())
                    + ", local rank " + w.localRank() + ") joined by " + w.describe());
        }
        EndpointOptions opts = EndpointOptions.DEFAULTS.withDepths(64, 8).withBuffers(Math.max(1024, 8 * w.size()), 64);
        AllToAllCheck.Result res = null;
        String error = null;
        int qpsPerPeer;
        QpType type;
        int managers;
        try (WorldEndpoints eps = WorldEndpoints.open(w, dev, cfg, threads, opts)) {
            qpsPerPeer = eps.qpsPerPeer();
            type = eps.qpType();
            managers = eps.managers().size();
            try {
                res = AllToAllCheck.run(eps, rounds, 30_000);
            } catch (IllegalStateException e) {
                error = e.getMessage();
            }
        }
        ByteBuffer mine = ByteBuffer.allocate(17);
        mine.putLong(res == null ? -1 : res.writesVerified()).putLong(res == null ? -1 : res.readsVerified())
                .put((byte) (error == null ? 1 : 0));
        if (error != null) {
            Output.line(System.err, "spmd: rank " + w.rank() + ": " + error);
        }
        byte[][] all = w.allgather(mine.array());
        long writes = 0;
        long reads = 0;
        boolean ok = true;
        for (byte[] b : all) {
            ByteBuffer bb = ByteBuffer.wrap(b);
            long wr = bb.getLong();
            long rd = bb.getLong();
            ok &= bb.get() == 1;
            writes += Math.max(0, wr);
            reads += Math.max(0, rd);
        }
        long expect = (long) w.size() * (w.size() - 1) * threads * rounds;
        ok &= writes == expect && reads == expect;
        if (w.rank() == 0) {
            String qps = type == QpType.RC
                    ? "RC: " + qpsPerPeer + " QP" + (qpsPerPeer == 1 ? "" : "s") + " per peer and " + qpsPerPeer + " to itself, "
                            + qpsPerPeer * managers + " per rank"
                    : type + ": " + qpsPerPeer + " QP" + (qpsPerPeer == 1 ? "" : "s") + " per rank, an address handle per QP and rank (itself included)";
            Output.line(System.out, "spmd: " + w.size() + " ranks x " + threads + " threads on " + dev.name() + " (" + category + ", "
                    + qps + "): " + (ok ? "verified " : "FAILED: ") + writes + " writes and " + reads + " reads of " + expect);
        }
        return ok ? 0 : 1;
    }
}
