package dev.scalep.verbs.sim;

import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A fabric process's life seen from another process, with real processes: one in a second pid
 * namespace ({@code unshare --pid --fork}, sharing {@code /dev/shm}) is alive while it renews its
 * lease, whatever its pid means here, and reclaimed once it stops; one ended by SIGTERM or SIGINT
 * leaves neither its entry nor its files behind.
 */
@Timeout(180)
class ProcessLifecycleTest {
    private static boolean canUnshare() {
        try {
            Process p = new ProcessBuilder("unshare", "--pid", "--fork", "true").redirectErrorStream(true).start();
            return p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** One RDMA write from here into the child's memory; its completion status. */
    private static int write(CrossProcessTest.Local l, CrossProcessTest.Child c) {
        try (SendWorkRequests w = new SendWorkRequests(1, 1)) {
            l.add(w, 1, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 8, c.mrAddress, c.rkey);
            assertEquals(0, l.qp.postSend(w));
            return (int) l.poll(1).get(0)[1];
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"--fork", "--mount-proc"})
    void aProcessInAnotherPidNamespaceIsAliveWhileItRenewsItsLease(String proc) throws Exception {
        assumeTrue(canUnshare(), "needs unshare --pid (root or user namespaces)");
        String job = CrossProcessTest.job("pidns");
        String[] launcher = proc.equals("--fork") ? new String[]{"unshare", "--pid", "--fork", "--kill-child"}
                : new String[]{"unshare", "--pid", "--fork", "--kill-child", "--mount-proc"};
        try (CrossProcessTest.Child c = new CrossProcessTest.Child("mlx5", job, launcher);
             CrossProcessTest.Local l = new CrossProcessTest.Local("mlx5", job)) { // joins: reclaims the dead
            assertTrue(CrossProcessTest.count(c.filePrefix) > 0, "the other namespace's process was not reclaimed");
            l.connect(c);
            // the agent's liveness sweeps run every 50 ms: for ten rounds of them it stays alive
            for (int k = 0; k < 10; k++) {
                assertEquals(WcStatus.SUCCESS, write(l, c), "write " + k + " to the process in another namespace");
                Thread.sleep(100);
            }
            try (CrossProcessTest.Local other = new CrossProcessTest.Local("mlx5", CrossProcessTest.job("o"))) {
                assertTrue(Files.exists(CrossProcessTest.segmentOf(c.filePrefix)), "nor its fabric removed");
            }
            // SIGKILL to the JVM in the other namespace itself (Process.destroyForcibly on unshare would also close
            // the child's stdin, which it reads as "exit": a clean close racing the kill), then to unshare
            List<ProcessHandle> inside = c.process.toHandle().descendants().toList();
            assertFalse(inside.isEmpty(), "unshare runs the peer's JVM");
            for (ProcessHandle h : inside) {
                h.destroyForcibly();
                h.onExit().get(30, TimeUnit.SECONDS);
            }
            c.process.toHandle().destroyForcibly();
            c.process.waitFor();
            // dead once its lease lapses: outstanding work ends in an error status, its files go
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Fabric.LEASE_MILLIS * 3);
            int status = WcStatus.SUCCESS;
            while (status == WcStatus.SUCCESS && System.nanoTime() - deadline < 0) {
                status = write(l, c);
                Thread.sleep(200);
            }
            assertEquals(WcStatus.RETRY_EXC_ERR, status, "the lapsed peer is gone");
            try (CrossProcessTest.Local again = new CrossProcessTest.Local("mlx5", job)) {
                assertEquals(0, CrossProcessTest.count(c.filePrefix), "its files reclaimed at the next open");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"TERM", "INT"})
    void aProcessEndedBySignalLeavesNothingBehind(String signal) throws Exception {
        String job = CrossProcessTest.job("sig" + signal);
        try (CrossProcessTest.Child c = new CrossProcessTest.Child("mlx5", job)) {
            Path seg = CrossProcessTest.segmentOf(c.filePrefix);
            assertTrue(Files.exists(seg) && CrossProcessTest.count(c.filePrefix) > 0);
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(c.process.pid())).start();
            assertEquals(0, kill.waitFor());
            boolean ended = c.process.waitFor(30, TimeUnit.SECONDS);
            if (!ended && signal.equals("INT")) {
                assumeTrue(!sigintIgnored(), "SIGINT is ignored in this process tree (started in the background)");
            }
            assertTrue(ended, "the child exits on SIG" + signal);
            assertEquals(0, CrossProcessTest.count(c.filePrefix), "its shared files are removed");
            assertFalse(Files.exists(seg), "and, being the last process, the segment");
        }
    }

    /** Whether this JVM was started with SIGINT ignored (children inherit it). */
    private static boolean sigintIgnored() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (l.startsWith("SigIgn:")) {
                return (Long.parseLong(l.substring(7).trim(), 16) & 2) != 0;
            }
        }
        return false;
    }
}
