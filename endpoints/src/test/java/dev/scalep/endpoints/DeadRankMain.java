package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Devices;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * A rank that dies while the other waits for it: {@code mpirun -np 2 java ... DeadRankMain DEVICE
 * LEVEL}. Both ranks build two thread slots; rank 1 then halts (no close, no finalize: as a process
 * that crashed); on rank 0 slot 0 waits in a receive from rank 1 ({@link Messages#waitFor}) and
 * slot 1 in a {@link Collectives#barrier}. Rank 0 prints one line per slot, {@code deadrank: recv
 * ... after N ms} and {@code deadrank: barrier ... after N ms}, then halts too (closing would wait
 * for the dead rank).
 */
public final class DeadRankMain {
    private static final long SCRATCH = 64 * 1024;

    private DeadRankMain() {
    }

    public static void main(String[] args) throws Exception {
        World world = World.open();
        WorldEndpoints eps = WorldEndpoints.open(world, Devices.byName(args[0]), SharingConfig.parse(args[1]), 2,
                MessageSuite.OPTS);
        Window scratch = eps.allocateWindow(2 * SCRATCH);
        MemorySegment buf = eps.allocate(64);
        world.barrier();
        if (world.rank() == 1) {
            Thread.sleep(300); // rank 0's slots are waiting by now
            Runtime.getRuntime().halt(0);
        }
        String[] said = new String[2];
        Thread recv = Thread.ofPlatform().name("waits-in-recv").start(() -> {
            RankEndpoint ep = eps.acquire();
            Messages m = ep.messages();
            MessageStatus st = new MessageStatus();
            long t0 = System.nanoTime();
            int q = m.recv(1, 7, Messages.ALL_BITS, buf, 0, 8);
            boolean done = m.waitFor(q, st);
            said[0] = "recv from rank 1: " + (done ? st : "no completion in 60 s") + " after "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms";
        });
        Thread barrier = Thread.ofPlatform().name("waits-in-barrier").start(() -> {
            RankEndpoint ep = eps.acquire();
            Collectives c = new Collectives(ep, scratch, ep.index() * SCRATCH, SCRATCH);
            long t0 = System.nanoTime();
            String what;
            try {
                c.barrier();
                what = "barrier returned";
            } catch (RuntimeException e) {
                what = "barrier failed: " + e.getMessage();
            }
            said[1] = what + " after " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms";
        });
        recv.join(90_000);
        barrier.join(90_000);
        System.out.println("deadrank: " + said[0]);
        System.out.println("deadrank: " + said[1]);
        System.out.flush();
        Runtime.getRuntime().halt(0); // closing would wait for rank 1 at the world's barrier
    }
}
