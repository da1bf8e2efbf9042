package dev.scalep.endpoints;



/**
 * One rank of the collectives suite ({@link CollectiveSuite}) as a process: {@code CollectiveMain DEVICE LEVEL
 * THREADS} under a launcher ({@code mpirun -np 2 java ... CollectiveMain sim:mlx5 static 2}); each
 * rank prints {@code collectivemain: rank R of P on DEVICE LEVEL: passed [scenarios]} and exits 0, or
 * the failure and exits 1. Runs on any device the ranks can open (rxe0/rxe1 in the VM too).
 */
public final class CollectiveMain {
    private CollectiveMain() {
    }

    public static void main(String[] args) throws Exception {
        SuiteMain.main("collectivemain", "CollectiveMain", CollectiveSuite::runAll, args);
    }
}
