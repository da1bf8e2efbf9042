package dev.scalep.endpoints;



/**
 * One rank of the tagged-message suite ({@link MessageSuite}) as a process: {@code MessageMain DEVICE LEVEL
 * THREADS} under a launcher ({@code mpirun -np 2 java ... MessageMain sim:mlx5 static 2}); each
 * rank prints {@code messagemain: rank R of P on DEVICE LEVEL: passed [scenarios]} and exits 0, or
 * the failure and exits 1. Runs on any device the ranks can open (rxe0/rxe1 in the VM too).
 */
public final class MessageMain {
    private MessageMain() {
    }

    public static void main(String[] args) throws Exception {
        SuiteMain.main("messagemain", "MessageMain", MessageSuite::runAll, args);
    }
}
