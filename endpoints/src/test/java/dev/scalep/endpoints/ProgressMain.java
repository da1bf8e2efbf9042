package dev.scalep.endpoints;

/**
 * One rank of the attentiveness suite ({@link ProgressSuite}) as a process: {@code ProgressMain
 * DEVICE LEVEL THREADS} under a launcher; each rank prints {@code progressmain: rank R of P on
 * DEVICE LEVEL: passed [scenarios]} and exits 0, or the failure and exits 1.
 */
public final class ProgressMain {
    private ProgressMain() {
    }

    public static void main(String[] args) throws Exception {
        SuiteMain.main("progressmain", "ProgressMain", ProgressSuite::runAll, args);
    }
}
