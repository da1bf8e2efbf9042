package dev.scalep.cli;

import dev.scalep.bench.Warmup;
import dev.scalep.bench.kernels.Dgemm;
import dev.scalep.bench.kernels.Gups;
import dev.scalep.bench.kernels.IntegerSort;
import dev.scalep.bench.kernels.KernelSupport;
import dev.scalep.bench.kernels.Stencil;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.Output;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import com.sun.management.OperatingSystemMXBean;

/** {@code scalep kernel}: the application kernels (global-array DGEMM, 5-point stencil, GUPS, NAS IS) per sharing level. */
@Command(name = "kernel", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run an application kernel over endpoints at each sharing level, verify its result and report the rate.",
                "dgemm: client threads read tiles of A and B from a server manager and write tiles of C (rate in GFLOP/s).",
                "stencil: 5-point Jacobi with row strips and halo exchange with both neighbours (rate in Mcell/s).",
                "gups: HPC Challenge RandomAccess on a table of 2^size words spread over the ranks' windows, four updates "
                        + "per word, each a remote compare-and-swap XOR (--variant atomic, exact) or a get and a put "
                        + "(--variant get-put, up to 1%% wrong words allowed) (rate in GUP/s).",
                "sort: NAS Parallel Benchmarks Integer Sort over tagged messages and collectives: keys from NAS's generator, "
                        + "bucket counts allreduced, keys sent with an alltoall by counts, each rank's keys counting-sorted; "
                        + "each thread slot index sorts its part of the keys across the ranks (rate in Mkeys/s).",
                "Exit status 1 when any result does not verify."},
        footer = {"", "Examples:",
                "  scalep kernel dgemm --threads 4 --size 256 \\",
                "      --categories mpi-everywhere,static,mpi-threads",
                "  scalep kernel stencil --device sim:efa --threads 4 --iterations 200",
                "  mpirun -np 2 ./scalep kernel gups --threads 2 --size 20 --variant get-put",
                "  mpirun -np 2 ./scalep kernel stencil --threads 2",
                "  mpirun -np 2 ./scalep kernel sort --threads 2 --class W"})
final class KernelCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "KERNEL", description = "dgemm, stencil, gups or sort.")
    String kernel;

    @Option(names = "--device", paramLabel = "NAME", description = "Device (default: ${DEFAULT-VALUE}).")
    String device = Devices.DEFAULT;

    @Option(names = "--threads", paramLabel = "N", description = "Threads (default ${DEFAULT-VALUE}).")
    int threads = 4;

    @Option(names = "--categories", paramLabel = "LEVELS",
            description = "Sharing levels: category names separated by commas, or axes forms separated by ';' "
                    + "(default: mpi-everywhere,2x-dynamic,dynamic,shared-dynamic,static,mpi-threads).")
    List<String> categories = List.of("mpi-everywhere,2x-dynamic,dynamic,shared-dynamic,static,mpi-threads");

    @Option(names = "--size", paramLabel = "N", description = "Matrix order (dgemm, default 128), grid side (stencil, "
            + "default 256) or log2 of the table's words (gups, default 20).")
    Integer size;

    @Option(names = "--class", paramLabel = "C", description = "sort: NAS problem class S (2^16 keys below 2^11, the "
            + "default), W (2^20 below 2^16), A (2^23 below 2^19) or B (2^25 below 2^21).")
    String sortClass;

    @Option(names = "--tile", paramLabel = "T", description = "dgemm tile side (default ${DEFAULT-VALUE}); must divide --size.")
    int tile = 32;

    /**
     * Stencil iterations each level runs untimed before the first timed run: enough for the
     * per-iteration method to reach C2 (a few thousand calls) whatever the order of the levels.
     */
    static final int WARM_ITERATIONS = 1500;
    /** At most this many warm-up passes (a tiny --iterations would otherwise mean thousands of runs). */
    static final int MAX_WARM_PASSES = 15;
    /** Untimed passes over the levels for DGEMM, whose inner kernel is a method called per tile. */
    static final int WARM_PASSES = 3;
    /** Untimed passes over the levels for sort (each pass sorts {@code IntegerSort.ITERATIONS} times a level). */
    static final int SORT_WARM_PASSES = 5;

    @Option(names = "--iterations", paramLabel = "N", description = "stencil iterations (default ${DEFAULT-VALUE}).")
    int iterations = 100;

    @Option(names = "--variant", paramLabel = "V", description = "gups update: atomic (default) or get-put.")
    String variant = "atomic";

    @Option(names = "--transport", paramLabel = "nic|shm", description = "gups and sort: through the endpoints (nic, "
            + "the default) or, where the device maps every rank's memory into this process (the simulator), through the "
            + "mapping (shm): gups's table with the CPU's atomic instructions and copies, sort's messages written straight "
            + "into the peers' inboxes.")
    String transport = "nic";

    @Option(names = "--warmup", paramLabel = "N", description = "Untimed passes over every level before the timed run "
            + "(default: dgemm 3, gups 15, sort 5, stencil enough passes of --iterations for 1500 iterations a level, at most 15). "
            + "0 times the first run: for correctness checks where rates do not matter (a slow emulated machine).")
    Integer warmup;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    private Gups.Variant gupsVariant = Gups.Variant.ATOMIC;
    private IntegerSort.Size sortSize = IntegerSort.Size.S;

    @Override
    public Integer call() throws Exception {
        String k = kernel.toLowerCase(Locale.ROOT);
        if (!k.equals("dgemm") && !k.equals("stencil") && !k.equals("gups") && !k.equals("sort")) {
            throw new UserException("unknown kernel '" + kernel + "'; use dgemm, stencil, gups or sort");
        }
        boolean dgemm = k.equals("dgemm");
        boolean gups = k.equals("gups");
        boolean sort = k.equals("sort");
        Checks.refuseUnless(spec, "--class", sort, "only sort has NAS classes");
        Checks.refuseUnless(spec, "--size", !sort, "sort's size is its NAS class: use --class");
        Checks.refuseUnless(spec, "--tile", dgemm, "only dgemm has tiles");
        Checks.refuseUnless(spec, "--iterations", k.equals("stencil"), "only stencil iterates; use --size");
        Checks.refuseUnless(spec, "--variant", gups, "only gups has variants");
        Checks.refuseUnless(spec, "--transport", gups || sort, "only gups and sort have a shared-memory path");
        if (!transport.equals("nic") && !transport.equals("shm")) {
            throw new UserException("--transport " + transport + ": use nic or shm");
        }
        Checks.range("--threads", threads, 1, 1024, "");
        if (warmup != null) {
            Checks.range("--warmup", warmup, 0, 100, "untimed passes over the levels");
        }
        int n = size != null ? size : (dgemm ? 128 : gups ? 20 : 256);
        if (sort) {
            try {
                sortSize = sortClass == null ? IntegerSort.Size.S : IntegerSort.Size.parse(sortClass);
            } catch (IllegalArgumentException e) {
                throw new UserException("--class: " + e.getMessage());
            }
            fits("--class " + sortSize.name(), IntegerSort.nativeBytes(sortSize, threads), IntegerSort.heapBytes(sortSize, threads));
        } else if (gups) {
            try {
                gupsVariant = Gups.Variant.parse(variant);
            } catch (IllegalArgumentException e) {
                throw new UserException("--variant: " + e.getMessage());
            }
            Checks.range("--size", n, 0, 30, "log2 of the table's words; 30 is 8 GiB of table");
            fits("--size " + n, 8L << n, 8L << n);
        } else if (dgemm) {
            Checks.range("--size", n, 1, 2048, "the matrix order; 2048 is 17 GFLOP per level, minutes in Java");
            Checks.range("--tile", tile, 1, n, "at most --size " + n + (size == null ? ", the default" : ""));
            if (n % tile != 0) {
                throw new UserException("--tile " + tile + " must divide --size " + n + (size == null ? " (the default)" : ""));
            }
            // Per endpoint three regions of 2 n^2 doubles, on both sides; A, B, C and the reference on the heap.
            long nn = (long) n * n * Double.BYTES;
            fits("--size " + n, 2L * threads * 3 * 2 * nn, 4 * nn + 3L * threads * tile * tile * Double.BYTES);
        } else {
            Checks.range("--size", n, threads + 2, 16384, "the grid side: an interior row for each of "
                    + threads + " threads, plus two boundary rows");
            Checks.range("--iterations", iterations, 0, 1_000_000, "");
            long nn = (long) n * n * Double.BYTES;
            fits("--size " + n, 2L * threads * 3 * (2L * n * Double.BYTES + 64), 3 * nn);
        }
        Device dev = Devices.byName(device);
        if (transport.equals("shm") && !dev.provider().equals("sim")) {
            throw new UserException("--transport shm: " + dev.name() + " cannot map another rank's memory into this process "
                    + "(only the simulator's ranks on one machine can); use --transport nic");
        }
        Map<String, SharingConfig> levels = KernelSupport.levels(categories);
        for (Map.Entry<String, SharingConfig> e : levels.entrySet()) {
            try {
                e.getValue().checkThreads(threads);
            } catch (IllegalArgumentException ex) {
                throw new UserException("--categories " + e.getKey() + " with --threads " + threads + ": " + ex.getMessage());
            }
        }
        try (World w = World.open()) {
            RankAgreement.check(w, spec, Set.of());
            try {
                if (gups) {
                    Gups.checkSize(n, w.size());
                } else if (sort) {
                    IntegerSort.checkSize(sortSize, w.size(), threads);
                }
            } catch (IllegalArgumentException e) {
                throw new UserException(e.getMessage());
            }
            boolean lead = w.rank() == 0;
            String ranks = w.size() == 1 ? "" : w.size() + " ranks x ";
            if (lead) {
                Output.line(System.out, "scalep kernel " + k + " on " + dev.name() + ": " + ranks + threads + " threads, "
                        + (k.equals("dgemm") ? "n=" + n + " tile=" + Math.min(tile, n)
                        + (w.size() > 1 ? ", matrices on rank 0, clients on ranks 1.." + (w.size() - 1) : "")
                        : gups ? "table of 2^" + n + " words, " + gupsVariant.label() + " updates"
                        + (transport.equals("shm") ? ", mapped (--transport shm)" : "")
                        : sort ? "NAS IS " + sortSize.label() + (transport.equals("shm") ? ", mapped (--transport shm)" : "")
                        : n + "x" + n + " grid, " + iterations + " iterations"));
            }
            boolean allOk = true;
            // Untimed passes over every level first, until each has run WARM_ITERATIONS stencil iterations
            // (DGEMM: WARM_PASSES), then wait for the compilers: the per-iteration code is then compiled
            // for all levels before any is timed, and no level pays for the JIT of the one before it.
            int passes = warmup != null ? warmup : k.equals("dgemm") ? WARM_PASSES : sort ? SORT_WARM_PASSES
                    : (int) Math.min(MAX_WARM_PASSES, Math.max(1, (WARM_ITERATIONS + iterations - 1) / Math.max(1, iterations)));
            StringBuilder warm = new StringBuilder("warming up " + levels.size() + " levels ");
            for (int pass = 0; pass < passes; pass++) {
                for (Map.Entry<String, SharingConfig> e : levels.entrySet()) {
                    KernelSupport.Result r = run(w, k, dev, e.getKey(), e.getValue(), n);
                    if (!r.verified()) {
                        allOk = false; // the exit status says so, and this line says why
                        if (lead) {
                            Output.line(System.out, warmUpFailure(pass, passes, r));
                        }
                    }
                }
                warm.append('.');
            }
            if (passes > 0) {
                Warmup.awaitJitQuiet(); // the compilers' queue from the warm-up would otherwise take a core from the first level
            }
            if (lead) {
                Output.line(System.out, passes > 0 ? warm + " done" : "no warm-up (--warmup 0): the rates include the JIT's work");
                Output.line(System.out, String.format("%-34s %8s %10s %-8s %12s  %s", "LEVEL", "RANKSxT", "SECONDS", "", "RDMA OPS/S", "VERIFIED"));
            }
            for (Map.Entry<String, SharingConfig> e : levels.entrySet()) {
                KernelSupport.Result r = run(w, k, dev, e.getKey(), e.getValue(), n);
                allOk &= r.verified();
                if (lead) {
                    Output.line(System.out, String.format(gups ? "%-34s %8s %10.4f %8.5f %-8s %12.0f  %s"
                                    : "%-34s %8s %10.4f %8.3f %-8s %12.0f  %s", e.getKey(),
                            r.ranks() + "x" + r.threads(), r.seconds(), r.rate(), r.rateUnit(), r.opsPerSec(),
                            r.verified() ? "verified" : "FAILED: " + r.detail()));
                    if (r.notes() != null && !r.notes().isEmpty()) {
                        Output.line(System.out, "    substituted: " + r.notes());
                    }
                }
            }
            return allOk ? 0 : 1;
        }
    }

    /**
     * The line rank 0 prints for an untimed warm-up pass whose result did not verify: the run
     * fails (exit 1) even when every timed pass verifies, and without this line nothing would
     * say why.
     */
    static String warmUpFailure(int pass, int passes, KernelSupport.Result r) {
        return "warm-up pass " + (pass + 1) + " of " + passes + ", " + r.level() + " (" + r.ranks() + "x" + r.threads()
                + "): FAILED: " + r.detail();
    }

    private KernelSupport.Result run(World w, String k, Device dev, String label, SharingConfig cfg, int n)
            throws InterruptedException {
        return switch (k) {
            case "dgemm" -> Dgemm.run(w, dev, label, cfg, threads, n, Math.min(tile, n));
            case "gups" -> Gups.run(w, dev, label, cfg, threads, n, gupsVariant, transport.equals("shm"));
            case "sort" -> IntegerSort.run(w, dev, label, cfg, threads, sortSize, transport.equals("shm"));
            default -> Stencil.run(w, dev, label, cfg, threads, n, iterations);
        };
    }

    /**
     * Refuse a size whose registered (native) or heap memory would not fit: native at most half of
     * the machine's physical memory, heap at most the JVM's maximum heap.
     */
    private static void fits(String what, long nativeBytes, long heapBytes) {
        long physical = physicalMemory();
        if (physical > 0 && nativeBytes > physical / 2) {
            throw new UserException(what + " needs about " + SweepCommand.bytes(nativeBytes) + " of registered memory, more than half of this "
                    + "machine's " + SweepCommand.bytes(physical) + "; use a smaller --size or fewer --threads");
        }
        long heap = Runtime.getRuntime().maxMemory();
        if (heapBytes > heap * 3 / 4) {
            throw new UserException(what + " needs about " + SweepCommand.bytes(heapBytes) + " of Java heap, more than 3/4 of the "
                    + SweepCommand.bytes(heap) + " this JVM may use; use a smaller --size");
        }
    }

    private static long physicalMemory() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return 0;
    }
}
