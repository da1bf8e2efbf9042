package dev.scalep.endpoints;



/**
 * One rank of the window suite ({@link WindowSuite}) as a process: {@code WindowMain DEVICE LEVEL
 * THREADS} under a launcher ({@code mpirun -np 2 java ... WindowMain sim:mlx5 static 2}); each
 * rank prints {@code windowmain: rank R of P on DEVICE LEVEL: passed [scenarios]} and exits 0, or
 * the failure and exits 1. Runs on any device the ranks can open (rxe0/rxe1 in the VM too).
 */
public final class WindowMain {
    private WindowMain() {
    }

    public static void main(String[] args) throws Exception {
        SuiteMain.main("windowmain", "WindowMain", WindowSuite::runAll, args);
    }
}
