package dev.scalep.cli;

import dev.scalep.bench.kernels.Dgemm;
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

import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code scalep kernel}: the application kernels (global-array DGEMM, 5-point stencil) per sharing level. */
@Command(name = "kernel", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run an application kernel over endpoints at each sharing level, verify its result and report the rate.",
                "dgemm: client threads read tiles of A and B from a server manager and write tiles of C (rate in GFLOP/s).",
                "stencil: 5-point Jacobi with row strips and halo exchange with both neighbours (rate in Mcell/s).",
                "Exit status 1 when any result does not verify."},
        footer = {"", "Examples:",
                "  scalep kernel dgemm --threads 4 --categories mpi-everywhere,static,mpi-threads --size 256",
                "  scalep kernel stencil --device sim:efa --threads 4 --iterations 200",
                "  mpirun -np 2 ./scalep kernel stencil --threads 2   (2 ranks x 2 threads; rank 0 prints)"})
final class KernelCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "KERNEL", description = "dgemm or stencil.")
    String kernel;

    @Option(names = "--device", paramLabel = "NAME", description = "Device (default: ${DEFAULT-VALUE}).")
    String device = Devices.DEFAULT;

    @Option(names = "--threads", paramLabel = "N", description = "Threads (default ${DEFAULT-VALUE}).")
    int threads = 4;

    @Option(names = "--categories", paramLabel = "LEVELS",
            description = "Sharing levels: category names separated by commas, or axes forms separated by ';' "
                    + "(default: mpi-everywhere,2x-dynamic,dynamic,shared-dynamic,static,mpi-threads).")
    List<String> categories = List.of("mpi-everywhere,2x-dynamic,dynamic,shared-dynamic,static,mpi-threads");

    @Option(names = "--size", paramLabel = "N", description = "Matrix order (dgemm, default 128) or grid side (stencil, default 256).")
    Integer size;

    @Option(names = "--tile", paramLabel = "T", description = "dgemm tile side (default ${DEFAULT-VALUE}); must divide --size.")
    int tile = 32;

    @Option(names = "--iterations", paramLabel = "N", description = "stencil iterations (default ${DEFAULT-VALUE}).")
    int iterations = 100;

    @Override
    public Integer call() throws Exception {
        String k = kernel.toLowerCase(java.util.Locale.ROOT);
        if (!k.equals("dgemm") && !k.equals("stencil")) {
            throw new UserException("unknown kernel '" + kernel + "'; use dgemm or stencil");
        }
        if (threads < 1 || threads > 1024) {
            throw new UserException("--threads must be in 1..1024: " + threads);
        }
        if (tile < 1) {
            throw new UserException("--tile must be >= 1: " + tile);
        }
        Device dev = Devices.byName(device);
        Map<String, SharingConfig> levels = KernelSupport.levels(categories);
        int n = size != null ? size : (k.equals("dgemm") ? 128 : 256);
        try (World w = World.open()) {
            boolean lead = w.rank() == 0;
            String ranks = w.size() == 1 ? "" : w.size() + " ranks x ";
            if (lead) {
                Output.line(System.out, "scalep kernel " + k + " on " + dev.name() + ": " + ranks + threads + " threads, "
                        + (k.equals("dgemm") ? "n=" + n + " tile=" + Math.min(tile, n)
                        + (w.size() > 1 ? ", matrices on rank 0, clients on ranks 1.." + (w.size() - 1) : "")
                        : n + "x" + n + " grid, " + iterations + " iterations"));
                Output.line(System.out, String.format("%-34s %8s %10s %-8s %12s  %s", "LEVEL", "RANKSxT", "SECONDS", "", "RDMA OPS/S", "VERIFIED"));
            }
            boolean allOk = true;
            // One untimed run per level first, so that the first level measured does not pay for the JIT.
            for (Map.Entry<String, SharingConfig> e : levels.entrySet()) {
                allOk &= run(w, k, dev, e.getKey(), e.getValue(), n).verified();
            }
            for (Map.Entry<String, SharingConfig> e : levels.entrySet()) {
                KernelSupport.Result r = run(w, k, dev, e.getKey(), e.getValue(), n);
                allOk &= r.verified();
                if (lead) {
                    Output.line(System.out, String.format("%-34s %8s %10.4f %8.3f %-8s %12.0f  %s", e.getKey(),
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

    private KernelSupport.Result run(World w, String k, Device dev, String label, SharingConfig cfg, int n)
            throws InterruptedException {
        return k.equals("dgemm")
                ? Dgemm.run(w, dev, label, cfg, threads, n, Math.min(tile, n))
                : Stencil.run(w, dev, label, cfg, threads, n, iterations);
    }
}
