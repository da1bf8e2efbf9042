package dev.scalep.endpoints;

import dev.scalep.endpoints.Collectives.ReduceOp;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Devices;

/**
 * A timing loop (not a test): {@code CollectiveLatencyMain DEVICE LEVEL ITERS} under a launcher
 * runs allreduce SUM of one long (8 B) and of 8192 longs (64 KiB), and the per-slot barrier, on
 * thread slot 0 of every rank, and rank 0 prints the mean latency of each after a warm-up. A
 * level ending in {@code +mapped} sends the messages through the mapped mailboxes
 * ({@link WorldEndpoints#mapMessages}).
 */
public final class CollectiveLatencyMain {
    private CollectiveLatencyMain() {
    }

    public static void main(String[] args) throws Exception {
        String device = args.length > 0 ? args[0] : "sim:mlx5";
        String level = args.length > 1 ? args[1] : "mpi-everywhere";
        int iters = args.length > 2 ? Integer.parseInt(args[2]) : 2000;
        try (World world = World.open();
             WorldEndpoints eps = MessageSuite.open(world, Devices.byName(device), level, 1, MessageSuite.OPTS);
             Window scratch = eps.allocateWindow(256 * 1024);
             RankEndpoint ep = eps.acquire()) {
            Collectives c = new Collectives(ep, scratch, 0, 256 * 1024);
            for (int n : new int[]{1, 8192}) {
                long[] v = new long[n];
                int reps = n == 1 ? iters : Math.max(10, iters / 10);
                for (int i = 0; i < reps / 2; i++) {
                    c.allreduce(v, 0, n, ReduceOp.SUM);
                }
                c.barrier();
                long t0 = System.nanoTime();
                for (int i = 0; i < reps; i++) {
                    c.allreduce(v, 0, n, ReduceOp.SUM);
                }
                long dt = System.nanoTime() - t0;
                if (world.rank() == 0) {
                    System.out.printf("allreduce %s %s P=%d %6d B: %.2f us (%d iterations)%n", device, level,
                            world.size(), 8 * n, dt / 1e3 / reps, reps);
                }
            }
            long t0 = System.nanoTime();
            for (int i = 0; i < iters; i++) {
                c.barrier();
            }
            if (world.rank() == 0) {
                System.out.printf("barrier   %s %s P=%d: %.2f us%n", device, level, world.size(),
                        (System.nanoTime() - t0) / 1e3 / iters);
            }
            ep.barrier();
        }
    }
}
