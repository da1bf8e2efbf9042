package dev.scalep.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.scalep.bench.Perftest;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.Bootstrap;
import dev.scalep.spmd.LocalWorld;
import dev.scalep.spmd.Output;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * {@code scalep perftest}: ucx_perftest's one-sided tests over scalep windows, with its flags and
 * its columns, so the two can be run side by side.
 */
@Command(name = "perftest", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"ucx_perftest's one-sided tests through scalep windows, its tagged-message tests through "
                + "scalep's tagged messages and its active-message tests through scalep's active messages, between "
                + "two ranks (rank 0 initiates, rank 1 is the target): the same test names, the -s/-n/-w/-T flags and the same columns (latency or "
                + "overhead in usec, bandwidth in MB/s, message rate in msg/s). Under `mpirun -np 2` the ranks are "
                + "processes; alone, two ranks run as threads of this process.",
                "Latency tests time every iteration (ucp_put_lat: half a ping-pong round trip; ucp_get, ucp_fadd, "
                        + "ucp_cswap, ucp_swap: the operation and a flush; tag_lat: half a tagged send/receive round "
                        + "trip; ucp_am_lat: half an active-message round trip, the reply sent from the handler); "
                        + "bandwidth tests (ucp_put_bw, ucp_add, tag_bw, ucp_am_bw) time the "
                        + "stream and its final flush; their percentile column is the median over batches of 4096 "
                        + "operations of the time per operation (ucx_perftest's is over single operations).",
                "Exit status 1 when an operation fails or an atomic test's words do not add up."},
        footer = {"", "Examples:",
                "  ./scalep perftest -t ucp_put_bw -s 8 -n 4000000",
                "  ./scalep perftest -t tag_lat -s 8 -n 100000",
                "  ./scalep perftest -t ucp_am_bw -s 64 -n 1000000",
                "  mpirun -np 2 ./scalep perftest -t ucp_fadd -s 8 -n 1000000 --json",
                "  UCX_TLS=posix,self ucx_perftest localhost -t ucp_fadd -s 8 -n 1000000   (the same test in UCX)"})
final class PerftestCommand implements Callable<Integer> {
    @Option(names = "-t", paramLabel = "TEST", required = true,
            description = "ucp_put_bw, ucp_put_lat, ucp_get, ucp_add, ucp_fadd, ucp_swap, ucp_cswap, tag_lat, tag_bw, ucp_am_lat or ucp_am_bw.")
    String test;

    @Option(names = "-s", paramLabel = "SIZE", description = "Message bytes (default ${DEFAULT-VALUE}; atomics take 8 only).")
    int size = 8;

    @Option(names = "-n", paramLabel = "ITERS", description = "Measured iterations in all threads (default ${DEFAULT-VALUE}).")
    long iterations = 1_000_000;

    /** The bandwidth tests' default warm-up: about what the JIT needs to compile their loop (10,000 left it interpreted). */
    static final long STREAM_WARMUP = 2_000_000;
    /** Every default warm-up moves at most about this many bytes, in at least 1000 iterations (large messages spend their time copying). */
    static final long WARMUP_BYTES = 1L << 30;

    /**
     * The latency tests' default warm-up: with ucx_perftest's 10,000 a run of -n 200,000 measured the
     * JIT at work (ucp_get 8.7 us mean, ucp_fadd 11.4, ucp_put_lat 5.1); after 1,000,000 the same runs
     * measured 0.87, 1.29 and 0.61, what a run of 10,000,000 measures throughout (0.86-0.92 for ucp_get).
     */
    static final long LATENCY_WARMUP = 1_000_000;

    /** The default warm-up of a bandwidth test of {@code size}-byte messages. */
    static long streamWarmup(long size) {
        return cappedWarmup(STREAM_WARMUP, size);
    }

    /** The default warm-up of a latency test of {@code size}-byte messages. */
    static long latencyWarmup(long size) {
        return cappedWarmup(LATENCY_WARMUP, size);
    }

    private static long cappedWarmup(long iterations, long size) {
        return Math.min(iterations, Math.max(1_000, WARMUP_BYTES / Math.max(1, size)));
    }

    @Option(names = "-w", paramLabel = "ITERS", description = "Warm-up iterations in all threads (default " + LATENCY_WARMUP
            + " for latency tests, " + STREAM_WARMUP + " for bandwidth tests, at most 1 GiB of messages and at least 1000: "
            + "with ucx_perftest's 10000 a run measured mostly the interpreter and the JIT).")
    Long warmup;

    @Option(names = "-T", paramLabel = "THREADS", description = "Initiator threads, one endpoint each (default ${DEFAULT-VALUE}).")
    int threads = 1;

    @Option(names = "--device", paramLabel = "NAME", description = "Device (default: ${DEFAULT-VALUE}).")
    String device = Devices.DEFAULT;

    @Option(names = "--category", paramLabel = "LEVEL",
            description = "Sharing level of each rank's endpoints, a category or an axes form (default ${DEFAULT-VALUE}).")
    String category = "mpi-everywhere";

    @Option(names = "--postlist", paramLabel = "P", description = "Bandwidth tests: work requests per doorbell (default ${DEFAULT-VALUE}).")
    int postlist = EndpointOptions.DEFAULTS.postlist();

    @Option(names = "--unsignaled", paramLabel = "Q", description = "Bandwidth tests: one signaled completion every Q (default ${DEFAULT-VALUE}).")
    int unsignaled = EndpointOptions.DEFAULTS.signalEvery();

    /** How the one-sided tests reach the target's window. */
    enum Transport { nic, shm }

    @Option(names = "--transport", paramLabel = "nic|shm", description = "Through the endpoints and the device (nic, the "
            + "default), or, where the device maps the peer's memory into this process (the simulator), with the CPU's loads, "
            + "stores and atomic instructions on the target's window and messages written straight into the peer's inbox "
            + "(shm, as UCX_TLS=posix) (default ${DEFAULT-VALUE}).")
    Transport transport = Transport.nic;

    @Option(names = "--rndv-thresh", paramLabel = "BYTES", description = "Message tests: send messages above this many "
            + "bytes by rendezvous (the receiver reads them) and the others eagerly (copied through the receive slots), at most "
            + "the slots' eager limit (default: that limit; UCX's UCX_RNDV_THRESH). Sizes around it show the crossover.")
    Long rendezvousThreshold;

    @Option(names = "--json", description = "Print the result as one JSON object instead of the table.")
    boolean json;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Perftest.Params p;
        try {
            Perftest.Test t = Perftest.Test.parse(test);
            long w = warmup != null ? warmup : t.latency() ? latencyWarmup(size) : streamWarmup(size);
            p = new Perftest.Params(t, size, iterations, w, threads, transport == Transport.shm,
                    rendezvousThreshold == null ? -1 : rendezvousThreshold);
        } catch (IllegalArgumentException e) {
            throw new UserException(e.getMessage());
        }
        boolean stream = !p.test().latency();
        Checks.refuseUnless(spec, "--postlist", stream, "latency tests post every operation at once (postlist 1)");
        Checks.refuseUnless(spec, "--unsignaled", stream, "latency tests wait for every operation");
        Checks.range("--postlist", postlist, 1, 1024, "");
        Checks.range("--unsignaled", unsignaled, 1, 1024, "");
        SharingConfig cfg;
        try {
            cfg = SharingConfig.parse(category);
            cfg.checkThreads(threads);
        } catch (IllegalArgumentException e) {
            throw new UserException("--category " + category + ": " + e.getMessage());
        }
        Device dev = Devices.byName(device);
        if (transport == Transport.shm && !dev.provider().equals("sim")) {
            throw new UserException("--transport shm: " + dev.name() + " cannot map the target's window into this process "
                    + "(only the simulator's ranks on one machine can); use --transport nic");
        }
        int depth = 256;
        EndpointOptions base = stream
                ? EndpointOptions.DEFAULTS.withFeatures(postlist, unsignaled, 0).withDepths(depth, 8).withBuffers(64, 64)
                : EndpointOptions.DEFAULTS.withFeatures(1, Math.min(unsignaled, 16), 0).withDepths(64, 8).withBuffers(64, 64);
        // Messages: receive slots that hold an active message's payload up to 64 KiB and a tagged message's up to
        // 8 KiB (rendezvous above), and 64 of them (credits are a quarter of the receives); a stream of slots of
        // up to 8 KiB gets more (streamRecvDepth). Atomics emulated on a device without RDMA atomics (sim:efa)
        // take receives too: 64 leave each thread 4 requests in flight to the other rank
        // (WorldEndpoints.emulationCredits).
        int slotBytes = p.test().active() ? Perftest.activeSlotBytes(size) : Perftest.tagSlotBytes(size);
        EndpointOptions opts = p.test().tagged()
                ? base.withDepths(stream ? depth : 64, stream && slotBytes <= Perftest.tagSlotBytes(Perftest.MAX_TAG_EAGER)
                        ? streamRecvDepth(slotBytes) : 64).withBuffers(64, slotBytes)
                : p.test().atomic() ? base.withDepths(stream ? depth : 64, 64) : base;
        if (Bootstrap.launched(System.getenv())) {
            try (World w = World.open()) {
                RankAgreement.check(w, spec, Set.of());
                if (w.size() != 2) {
                    throw new UserException("perftest runs between 2 ranks; launch it with -np 2 (this job has " + w.size() + ")");
                }
                Perftest.Result r = Perftest.run(w, dev, cfg, opts, p);
                if (w.rank() == 0) {
                    print(r, dev, w.size() + " processes");
                }
                return r.checked() ? 0 : 1;
            }
        }
        List<World> worlds = LocalWorld.create(2);
        AtomicReferenceArray<Object> out = new AtomicReferenceArray<>(2);
        List<Thread> ts = new ArrayList<>();
        for (World w : worlds) {
            ts.add(Thread.ofPlatform().name("rank-" + w.rank()).start(() -> {
                try {
                    out.set(w.rank(), Perftest.run(w, dev, cfg, opts, p));
                } catch (Throwable t) {
                    out.set(w.rank(), t);
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        for (int r = 0; r < 2; r++) {
            if (out.get(r) instanceof RuntimeException e) {
                throw e;
            }
            if (out.get(r) instanceof Throwable t) {
                throw new IllegalStateException("rank " + r + ": " + t, t);
            }
        }
        Perftest.Result r = (Perftest.Result) out.get(0);
        print(r, dev, "2 ranks in this process");
        return r.checked() ? 0 : 1;
    }

    private void print(Perftest.Result r, Device dev, String where) throws Exception {
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("test", r.test().label());
            m.put("device", dev.name());
            m.put("category", category);
            m.put("transport", transport.name());
            if (r.test().tagged()) { // active-message tests included
                m.put("rendezvous_threshold", rendezvousThreshold == null ? Perftest.eagerLimit(r.test(), r.size()) : rendezvousThreshold);
            }
            m.put("ranks", where);
            m.put("size", r.size());
            m.put("iterations", r.iterations());
            m.put("threads", r.threads());
            m.put("seconds", r.seconds());
            m.put(r.test().latency() ? "latency_p50_us" : "overhead_p50_us", r.p50Us());
            m.put(r.test().latency() ? "latency_average_us" : "overhead_average_us", r.averageUs());
            m.put(r.test().latency() ? "latency_overall_us" : "overhead_overall_us", r.overallUs());
            m.put("bandwidth_mb_s", r.bandwidthMBs());
            m.put("message_rate", r.messageRate());
            m.put("checked", r.checked());
            if (!r.checked()) {
                m.put("problem", r.detail());
            }
            Output.line(System.out, new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(m));
            return;
        }
        String rule = "+--------------+--------------+------------------------------+---------------------+-----------------------+";
        String cells = "+--------------+--------------+----------+---------+---------+----------+----------+-----------+-----------+";
        Output.line(System.out, "scalep perftest " + r.test().label() + " on " + dev.name() + " (" + category + "), " + where + ", "
                + r.threads() + " thread" + (r.threads() == 1 ? "" : "s") + ", " + r.size() + " bytes");
        Output.line(System.out, rule);
        Output.line(System.out, String.format("|              |              | %s |   bandwidth (MB/s)  |  message rate (msg/s) |",
                r.test().latency() ? "       latency (usec)       " : "       overhead (usec)      "));
        Output.line(System.out, cells);
        Output.line(System.out, "|    Stage     | # iterations | 50.0%ile | average | overall |  average |  overall |  average  |  overall  |");
        Output.line(System.out, cells);
        if (r.seconds() > 0) { // a run that failed before its timed part has no numbers to show
            Output.line(System.out, String.format(Locale.ROOT, "Final:    %18d %10.3f %9.3f %9.3f %10.2f %10.2f %11.0f %11.0f",
                    r.iterations(), r.p50Us(), r.averageUs(), r.overallUs(), r.bandwidthMBs(), r.bandwidthMBs(),
                    r.messageRate(), r.messageRate()));
        }
        if (!r.checked()) {
            Output.line(System.err, "perftest: " + r.detail());
        }
    }

    /** Receive-slot bytes a message stream's endpoint gets at most ({@link #streamRecvDepth}). */
    static final int STREAM_RECV_BYTES = 256 << 10;

    /**
     * Receive slots for a message stream ({@code tag_bw}, {@code ucp_am_bw}) of {@code slotBytes}-byte
     * slots: {@link #STREAM_RECV_BYTES} of them, at least 256 and at most 4096 (every simulated
     * device's {@code max_qp_wr} allows that many). The credits between a pair of slots, and with
     * them the inbox ring, are a quarter of that; a receiver stores its consumed count for a mapped
     * sender once a quarter of the ring was consumed. With a short ring the two threads take turns
     * waiting: at 256 slots (64 credits) a {@code tag_bw -s 8 --transport shm} receiver found its
     * inbox empty at about half of its looks and the sender waited for credits a quarter of its time
     * (8-byte messages, 20,000,000: 17.3 M msg/s at 256 slots, 20.0 at 1024, 21.4 at 4096). At 256
     * slots of 8 KiB a QP holds 2 MiB; larger slots get the 256 a stream always had.
     */
    static int streamRecvDepth(int slotBytes) {
        return Math.max(256, Math.min(4096, STREAM_RECV_BYTES / slotBytes));
    }
}
