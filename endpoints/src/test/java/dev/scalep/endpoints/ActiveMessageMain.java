package dev.scalep.endpoints;

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
        SuiteMain.main("activemessagemain", "ActiveMessageMain", ActiveMessageSuite::runAll, args);
    }
}
