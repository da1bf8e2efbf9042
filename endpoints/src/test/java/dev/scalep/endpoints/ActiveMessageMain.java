package dev.scalep.endpoints;

import dev.scalep.spmd.World;
import dev.scalep.verbs.Devices;

import java.util.List;

/**
 * One rank of the active-message suite ({@link ActiveMessageSuite}) as a process: {@code ActiveMessageMain DEVICE LEVEL
 * THREADS} under a launcher ({@code mpirun -np 2 java ... ActiveMessageMain sim:mlx5 static 2}); each
 * rank prints {@code activemessagemain: rank R of P on DEVICE LEVEL: passed [scenarios]} and exits 0, or
 * the failure and exits 1. Runs on any device the ranks can open (rxe0/rxe1 in the VM too).
 */
public final class ActiveMessageMain {
    private ActiveMessageMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: ActiveMessageMain DEVICE LEVEL THREADS");
            System.exit(2);
        }
        int status = 0;
        try (World world = World.open()) {
            try {
                List<String> ran = ActiveMessageSuite.runAll(world, Devices.byName(args[0]), args[1], Integer.parseInt(args[2]));
                System.out.println("activemessagemain: rank " + world.rank() + " of " + world.size() + " on " + args[0] + " "
                        + args[1] + ": passed " + ran);
            } catch (Throwable t) {
                System.out.println("activemessagemain: rank " + world.rank() + " FAILED: " + t);
                t.printStackTrace(System.out);
                status = 1;
            }
        }
        System.out.flush();
        System.exit(status);
    }
}
