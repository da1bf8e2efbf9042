package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two JVMs on one simulated NIC: this test's JVM and a child JVM ({@link FabricPeer}) join the same
 * fabric job and exchange only what real peers exchange (QP address bytes, MR address and rkey).
 * Both personalities: RC on sim:mlx5, SRD on sim:efa.
 */
@Timeout(120)
class CrossProcessTest {
    private static final HexFormat HEX = HexFormat.of();

    /** The child JVM and its command pipe. */
    static final class Child implements AutoCloseable {
        final Process process;
        final PrintStream in;
        final BufferedReader out;
        final QpAddress address;
        final long mrAddress;
        final int rkey;
        final String filePrefix;

        Child(String personality, String job, String... launcher) throws IOException {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> cmd = new ArrayList<>(List.of(launcher));
            cmd.addAll(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                    System.getProperty("java.class.path"), FabricPeer.class.getName(), personality, job));
            process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            in = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            String[] a = expect("ADDR").split(" ");
            address = QpAddress.fromBytes(HEX.parseHex(a[1]));
            mrAddress = Long.parseLong(a[2]);
            rkey = Integer.parseInt(a[3]);
            filePrefix = a[4];
        }

        String expect(String prefix) throws IOException {
            String l = out.readLine();
            assertTrue(l != null && l.startsWith(prefix), "child answered " + l + ", expected " + prefix);
            return l;
        }

        void command(String c) throws IOException {
            in.println(c);
            expect("OK");
        }

        List<long[]> poll(int n) throws IOException {
            in.println("POLL " + n);
            List<long[]> wcs = new ArrayList<>();
            for (String l; !(l = out.readLine()).equals("OK"); ) {
                String[] f = l.split(" ");
                long[] w = new long[5];
                for (int i = 0; i < 5; i++) {
                    w[i] = Long.parseLong(f[i + 1]);
                }
                wcs.add(w);
            }
            return wcs;
        }

        byte[] dump(long off, int len) throws IOException {
            in.println("DUMP " + off + " " + len);
            return HEX.parseHex(expect("DATA").substring(5));
        }

        @Override
        public void close() throws Exception {
            if (process.isAlive()) {
                in.println("EXIT");
                process.waitFor(20, TimeUnit.SECONDS);
            }
            process.destroyForcibly().waitFor();
        }
    }

    /** This JVM's end. */
    static final class Local implements AutoCloseable {
        final SimDevice dev;
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemorySegment mem;
        final MemoryRegion mr;
        final boolean efa;
        AddressHandle ah;
        QpAddress peer;

        Local(String personality, String job) {
            this(FabricPeer.device(personality, job));
        }

        Local(SimDevice device) {
            dev = device;
            efa = dev.isEfa();
            ctx = dev.open();
            pd = ctx.allocPd();
            cq = ctx.createCq(CqOptions.of(256).withExtended(efa));
            qp = pd.createQp(QpInitAttr.of(efa ? QpType.SRD : QpType.RC, cq, 64).withSges(1, 1));
            mem = pd.allocate(FabricPeer.MEM, 4096);
            mr = pd.register(mem, Access.ALL_RDMA);
        }

        void connect(Child c) throws IOException {
            peer = c.address;
            qp.init(Access.ALL_RDMA);
            qp.readyToReceive(efa ? null : peer);
            qp.readyToSend(7, 7);
            if (efa) {
                ah = pd.createAh(peer);
            }
            c.command("CONNECT " + HEX.formatHex(qp.address().toBytes()));
        }

        int add(SendWorkRequests w, long id, Opcode op, int flags, long off, int len, long raddr, int rkey) {
            int i = w.add(id, op, flags);
            w.sge(i, mr, off, len);
            if (!efa) {
                if (op.isRdma()) {
                    w.rdma(i, raddr, rkey);
                }
            } else if (op.isRdma()) {
                w.srdRdma(i, ah, peer.qpn(), QueuePair.QKEY, raddr, rkey);
            } else {
                w.ud(i, ah, peer.qpn(), QueuePair.QKEY);
            }
            return i;
        }

        List<long[]> poll(int n) {
            List<long[]> got = new ArrayList<>();
            long deadline = System.nanoTime() + 30_000_000_000L;
            try (WorkCompletions wc = new WorkCompletions(16)) {
                while (got.size() < n && System.nanoTime() < deadline) {
                    int r = cq.poll(wc, Math.min(16, n - got.size()));
                    for (int i = 0; i < r; i++) {
                        got.add(new long[]{wc.wrId(i), wc.status(i), wc.opcode(i), wc.byteLen(i)});
                    }
                    if (r <= 0) {
                        Thread.onSpinWait();
                    }
                }
            }
            assertEquals(n, got.size(), "completions within 30 s");
            return got;
        }

        @Override
        public void close() {
            ctx.close();
        }
    }

    static String job(String what) {
        return "test-xproc-" + what + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    }

    static void fill(MemorySegment m, long off, int len, int seed) {
        for (int i = 0; i < len; i++) {
            m.set(JAVA_BYTE, off + i, (byte) (seed + i * 7));
        }
    }

    static byte[] pattern(int len, int seed) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = (byte) (seed + i * 7);
        }
        return b;
    }

    @ParameterizedTest
    @ValueSource(strings = {"mlx5", "efa"})
    void everyOperationBetweenTwoJvms(String personality) throws Exception {
        String job = job("ops");
        try (Child c = new Child(personality, job); Local l = new Local(personality, job);
             SendWorkRequests w = new SendWorkRequests(20, 1)) {
            l.connect(c);
            c.command("RECV 2 64");
            fill(l.mem, 0, 64, 1);
            fill(l.mem, 64, 64, 2);
            fill(l.mem, 128, 32, 3);
            l.add(w, 1, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 64, c.mrAddress, c.rkey);
            l.add(w, 2, Opcode.SEND_WITH_IMM, SendFlags.SIGNALED, 64, 64, 0, 0);
            w.imm(1, 77);
            l.add(w, 3, Opcode.RDMA_WRITE_WITH_IMM, SendFlags.SIGNALED, 128, 32, c.mrAddress + 128, c.rkey);
            w.imm(2, 0x1234);
            assertEquals(0, l.qp.postSend(w));
            for (long[] wc : l.poll(3)) {
                assertEquals(WcStatus.SUCCESS, (int) wc[1], "wr " + wc[0]);
            }
            List<long[]> rx = c.poll(2);
            assertEquals(2, rx.size());
            for (long[] wc : rx) {
                assertEquals(WcStatus.SUCCESS, (int) wc[1]);
                if (wc[2] == WcOpcode.RECV_RDMA_WITH_IMM) {
                    assertEquals(32, wc[3]);
                    assertEquals(0x1234, (int) wc[4]);
                } else {
                    assertEquals(WcOpcode.RECV, (int) wc[2]);
                    assertEquals(64, wc[3]);
                    assertEquals(77, (int) wc[4]);
                    assertArrayEquals(pattern(64, 2), c.dump(FabricPeer.MEM / 2 + wc[0] * 64, 64), "send payload");
                }
            }
            assertArrayEquals(pattern(64, 1), c.dump(0, 64), "RDMA write landed in the other process");
            assertArrayEquals(pattern(32, 3), c.dump(128, 32), "write-with-immediate landed");

            c.command("FILL 4096 64 5");
            w.clear();
            l.add(w, 4, Opcode.RDMA_READ, SendFlags.SIGNALED, 8192, 64, c.mrAddress + 4096, c.rkey);
            assertEquals(0, l.qp.postSend(w));
            assertEquals(WcStatus.SUCCESS, (int) l.poll(1).get(0)[1]);
            assertArrayEquals(pattern(64, 5), l.mem.asSlice(8192, 64).toArray(JAVA_BYTE), "RDMA read");

            if (!l.efa) { // postlist of 16 unsignaled 8-byte writes and one signaled
                w.clear();
                for (int k = 0; k < 17; k++) {
                    l.add(w, 10 + k, Opcode.RDMA_WRITE, k == 16 ? SendFlags.SIGNALED : 0, 8L * k, 8,
                            c.mrAddress + 16384 + 8L * k, c.rkey);
                }
                assertEquals(0, l.qp.postSend(w));
                long[] wc = l.poll(1).get(0);
                assertEquals(26, wc[0]);
                assertEquals(WcStatus.SUCCESS, (int) wc[1]);
                assertEquals(0, l.qp.outstandingSends());
                assertArrayEquals(l.mem.asSlice(0, 136).toArray(JAVA_BYTE), c.dump(16384, 136));
            }
            w.clear(); // a bad rkey is the peer's answer, not a crash
            l.add(w, 5, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 8, c.mrAddress, c.rkey ^ 0x40);
            assertEquals(0, l.qp.postSend(w));
            assertEquals(WcStatus.REM_ACCESS_ERR, (int) l.poll(1).get(0)[1]);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mlx5", "efa"})
    void killedPeerCompletesOutstandingWorkWithRetryExceeded(String personality) throws Exception {
        String job = job("kill");
        try (Child c = new Child(personality, job); Local l = new Local(personality, job);
             SendWorkRequests w = new SendWorkRequests(4, 1)) {
            l.connect(c);
            l.add(w, 1, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0, 0); // no receive posted: waits (rnr 7)
            l.add(w, 2, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0, 0);
            assertEquals(0, l.qp.postSend(w));
            try (WorkCompletions wc = new WorkCompletions(4)) {
                assertEquals(0, l.cq.poll(wc, 4), "nothing completes while the peer lives");
            }
            String prefix = c.filePrefix;
            assertTrue(count(prefix) > 0, "the child's shared memory exists");
            c.process.destroyForcibly(); // SIGKILL
            c.process.waitFor();
            List<long[]> got = l.poll(2);
            long[] first = got.stream().filter(x -> x[0] == 1).findFirst().orElseThrow();
            long[] second = got.stream().filter(x -> x[0] == 2).findFirst().orElseThrow();
            if (l.efa) { // out of order: either may be the one that fails; the other fails or is flushed
                assertTrue(first[1] == WcStatus.RETRY_EXC_ERR || second[1] == WcStatus.RETRY_EXC_ERR, "RETRY_EXC_ERR");
                assertTrue(first[1] != WcStatus.SUCCESS && second[1] != WcStatus.SUCCESS);
            } else {
                assertEquals(WcStatus.RETRY_EXC_ERR, (int) first[1], "the send at the head");
                assertEquals(WcStatus.WR_FLUSH_ERR, (int) second[1], "the rest flushed");
            }
            assertEquals(QpState.ERR, l.qp.state());
            try (Local again = new Local(personality, job)) { // joins: the dead child's entry is reclaimed
                assertEquals(0, count(prefix), "segments of the dead process reclaimed at the next open");
            }
        }
    }

    /**
     * A peer process the host does not run for longer than the retry timeout (here stopped with
     * SIGSTOP for four of them) is slow, not lost: its NIC renews no lease and takes nothing from
     * its ring meanwhile, so the sends wait and complete once it runs again. Before, an overloaded
     * machine that left a rank without CPU for 4 s failed its peers' sends with RETRY_EXC_ERR and
     * moved their QPs to ERR (a rendezvous's completion message lost, the tagged messages stalled).
     */
    @ParameterizedTest
    @ValueSource(strings = {"mlx5", "efa"})
    void aPeerTheHostDoesNotRunForLongerThanTheRetryTimeoutIsSlowNotLost(String personality) throws Exception {
        String job = job("stopped");
        long retryMillis = 300;
        try (Child c = new Child(personality, job);
             Local l = new Local(FabricPeer.device(personality, job).retryTimeoutMillis(retryMillis));
             SendWorkRequests w = new SendWorkRequests(4, 1)) {
            l.connect(c);
            c.command("RECV 2 64");
            fill(l.mem, 0, 64, 7);
            fill(l.mem, 64, 64, 8);
            signal("STOP", c.process.pid());
            try {
                awaitStopped(c.process.pid()); // the precondition: no thread of the peer runs once the sends go
                l.add(w, 1, Opcode.SEND, SendFlags.SIGNALED, 0, 64, 0, 0);
                l.add(w, 2, Opcode.SEND, SendFlags.SIGNALED, 64, 64, 0, 0);
                assertEquals(0, l.qp.postSend(w));
                try (WorkCompletions wc = new WorkCompletions(4)) {
                    for (long end = System.nanoTime() + 4 * retryMillis * 1_000_000L; System.nanoTime() < end; ) {
                        int n = l.cq.poll(wc, 4);
                        assertEquals(0, n, () -> "nothing completes while the peer is stopped; got status "
                                + WcStatus.name(wc.status(0)));
                        Thread.sleep(1);
                    }
                }
                assertEquals(QpState.RTS, l.qp.state());
            } finally {
                signal("CONT", c.process.pid());
            }
            for (long[] wc : l.poll(2)) {
                assertEquals(WcStatus.SUCCESS, (int) wc[1], "wr " + wc[0] + " once the peer runs again");
            }
            List<long[]> rx = c.poll(2);
            assertEquals(2, rx.size());
            for (long[] wc : rx) {
                assertEquals(WcStatus.SUCCESS, (int) wc[1]);
            }
            List<byte[]> got = List.of(c.dump(FabricPeer.MEM / 2, 64), c.dump(FabricPeer.MEM / 2 + 64, 64));
            assertTrue(got.stream().anyMatch(b -> Arrays.equals(b, pattern(64, 7)))
                    && got.stream().anyMatch(b -> Arrays.equals(b, pattern(64, 8))), "both payloads arrived");
        }
    }

    /**
     * Wait until every thread of process {@code pid} is stopped (state T in its
     * {@code /proc/PID/task/TID/stat}): {@code kill} returns once the signal is sent, and a loaded
     * machine may run a thread of the target a little longer.
     */
    private static void awaitStopped(long pid) throws Exception {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (;;) {
            boolean all = true;
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(tasks)) {
                for (Path t : ds) {
                    String stat;
                    try {
                        stat = Files.readString(t.resolve("stat"));
                    } catch (IOException gone) { // the thread ended between the listing and the read
                        continue;
                    }
                    char state = stat.charAt(stat.lastIndexOf(')') + 2); // the field after "(comm)"
                    all &= state == 'T' || state == 't';
                }
            }
            if (all) {
                return;
            }
            assertTrue(System.nanoTime() < deadline, "process " + pid + " did not stop within 10 s of SIGSTOP");
            Thread.sleep(1);
        }
    }

    private static void signal(String sig, long pid) throws Exception {
        Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start();
        assertEquals(0, k.waitFor(), "kill -" + sig + " " + pid);
    }

    @Test
    void aFabricWhoseProcessesAllDiedIsRemovedByTheNextOpenOfAnyJob() throws Exception {
        String job = job("abandoned");
        Path segment;
        try (Child c = new Child("mlx5", job)) {
            segment = segmentOf(c.filePrefix);
            assertTrue(Files.exists(segment));
            c.process.destroyForcibly(); // SIGKILL: nobody closes it
            c.process.waitFor();
            assertTrue(Files.exists(segment));
            try (Local other = new Local("mlx5", job("other"))) {
                assertFalse(Files.exists(segment), "abandoned fabric removed");
                assertEquals(0, count(c.filePrefix), "with its shared files");
            }
        }
    }

    /** The fabric segment of a process whose shared files start with {@code filePrefix}. */
    static Path segmentOf(String filePrefix) {
        return Path.of(filePrefix.substring(0, filePrefix.lastIndexOf('@')));
    }

    /** How many files exist whose path starts with {@code pathPrefix}. */
    static int count(String pathPrefix) throws IOException {
        Path p = Path.of(pathPrefix);
        int n = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(p.getParent(), p.getFileName() + "*")) {
            for (Path ignored : ds) {
                n++;
            }
        }
        return n;
    }
}
