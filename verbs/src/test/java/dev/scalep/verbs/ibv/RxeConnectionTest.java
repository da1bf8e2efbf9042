package dev.scalep.verbs.ibv;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.GidEntry;
import dev.scalep.verbs.GidType;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.PortInfo;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.agrona.collections.Int2ObjectHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static dev.scalep.verbs.ibv.RxeVerbsTest.arena;
import static dev.scalep.verbs.ibv.RxeVerbsTest.c0;
import static dev.scalep.verbs.ibv.RxeVerbsTest.c1;
import static dev.scalep.verbs.ibv.RxeVerbsTest.dev0;
import static dev.scalep.verbs.ibv.RxeVerbsTest.dev1;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Connection attributes on SoftRoCE (the VM of {@code verbs/src/test/rxe/run}, veth MTU 9000, so
 * rxe's active MTU is 4096): the path MTU agreed between two processes and visible on the wire in
 * rxe's packet counters, GID and port selection with one-line errors, and the RC knobs as the
 * device holds them ({@code ibv_query_qp}). Skipped where no rxe devices exist.
 */
@Timeout(180)
class RxeConnectionTest {
    static final int MESSAGE = 10_000;

    /** The rxe0/rxe1 contexts and arena of {@link RxeVerbsTest} (skipped without rxe devices). */
    @BeforeAll
    static void open() {
        RxeVerbsTest.open();
    }

    @AfterAll
    static void close() {
        RxeVerbsTest.close();
    }

    record End(ProtectionDomain pd, CompletionQueue cq, QueuePair qp, MemoryRegion mr, MemorySegment buf) {
        void close() {
            qp.close();
            mr.close();
            cq.close();
            pd.close();
        }
    }

    static End end(Context c, ConnectionOptions o) {
        ProtectionDomain pd = c.allocPd();
        CompletionQueue cq = c.createCq(CqOptions.of(16));
        QueuePair qp = pd.createQp(QpInitAttr.of(QpType.RC, cq, 8).withConnection(o));
        MemorySegment buf = arena.allocate(16384, 4096);
        return new End(pd, cq, qp, pd.register(buf, Access.ALL_RDMA), buf);
    }

    /**
     * rxe's own count of packets a device sent (its hw_counters), read from sysfs. The kernel caches
     * hardware counters for a 10 ms lifespan, so the value is read after that has passed.
     */
    static long sentPackets(String dev) throws Exception {
        Thread.sleep(100);
        return Long.parseLong(Files.readString(
                Path.of("/sys/class/infiniband/" + dev + "/ports/1/hw_counters/sent_pkts")).trim());
    }

    /** Send a {@link #MESSAGE}-byte message from {@code a} (already connected) and return the packets rxe0 sent for it. */
    static long sendAndCount(End a, End b) throws Exception {
        try (SendWorkRequests s = new SendWorkRequests(1, 1); RecvWorkRequests r = new RecvWorkRequests(1, 1);
             WorkCompletions wc = new WorkCompletions(4)) {
            if (b != null) {
                r.sge(r.add(9), b.mr, 0, 16384);
                assertEquals(0, b.qp.postRecv(r));
            }
            for (int i = 0; i < MESSAGE; i++) {
                a.buf.set(JAVA_BYTE, i, (byte) (i * 31));
            }
            long before = sentPackets("rxe0");
            s.sge(s.add(1, Opcode.SEND, SendFlags.SIGNALED), a.mr, 0, MESSAGE);
            assertEquals(0, a.qp.postSend(s));
            assertEquals(1, RxeVerbsTest.pollN(a.cq, wc, 1));
            assertEquals(WcStatus.SUCCESS, wc.status(0), WcStatus.name(wc.status(0)));
            long sent = sentPackets("rxe0") - before;
            if (b != null) {
                assertEquals(1, RxeVerbsTest.pollN(b.cq, wc, 1));
                assertEquals(MESSAGE, wc.byteLen(0));
                assertEquals(a.buf.asSlice(0, MESSAGE).mismatch(b.buf.asSlice(0, MESSAGE)), -1L);
            }
            return sent;
        }
    }

    static void connect(End a, End b) {
        a.qp.connect(b.qp.address(), Access.ALL_RDMA, 7);
        b.qp.connect(a.qp.address(), Access.ALL_RDMA, 7);
    }

    @Test
    void portsShowStateMtuLinkLayerAndRoceV2Gids() {
        for (Device d : List.of(dev0, dev1)) {
            List<PortInfo> ports = d.ports();
            assertEquals(1, ports.size(), d + ": " + ports);
            PortInfo p = ports.getFirst();
            assertEquals("active", p.state());
            assertEquals("ethernet", p.linkLayer());
            assertEquals(4096, p.activeMtu(), "veth MTU 9000 gives rxe an active MTU of 4096");
            assertFalse(p.gids().isEmpty());
            assertTrue(p.gids().stream().allMatch(g -> g.type() == GidType.ROCE_V2), "rxe is RoCE v2 only: " + p);
            assertTrue(p.gids().stream().anyMatch(GidEntry::linkLocal), p.describeGids());
        }
    }

    @Test
    void gidSelectedByTypeOrIndexIsTheOneAddressed() {
        PortInfo p = dev0.ports().getFirst();
        GidEntry auto = ConnectionOptions.DEFAULTS.selectGid("t", "rxe0", p);
        End a = end(c0, ConnectionOptions.DEFAULTS.withGid(GidType.ROCE_V2, ConnectionOptions.AddressFamily.IPV6));
        GidEntry last = p.gids().getLast();
        End b = end(c0, ConnectionOptions.DEFAULTS.withGidIndex(last.index()));
        try {
            assertArrayEquals(auto.gid(), a.qp.address().gid());
            assertArrayEquals(last.gid(), b.qp.address().gid());
            connect(a, b); // both on rxe0: rxe loops the packets back
            assertEquals(auto.index(), ((IbvQp) a.qp).queryConnection().get("sgid_index"));
            assertEquals(last.index(), ((IbvQp) b.qp).queryConnection().get("sgid_index"));
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void invalidPortGidAndDepthsAreOneLineErrorsNamingWhatExists() {
        ProtectionDomain pd = c0.allocPd();
        CompletionQueue cq = c0.createCq(CqOptions.of(4));
        try {
            int tooDeep = c0.capabilities().maxQpInitRdAtom() + 1;
            Map<ConnectionOptions, String> cases = new LinkedHashMap<>();
            cases.put(ConnectionOptions.DEFAULTS.withPort(2), "rxe0 has port 1 only");
            cases.put(ConnectionOptions.DEFAULTS.withGidIndex(200), "GID index 200 is empty or beyond the table");
            cases.put(ConnectionOptions.DEFAULTS.withGid(GidType.IB, ConnectionOptions.AddressFamily.ANY),
                    "no ib any GID on rxe0 port 1");
            if (tooDeep <= 255) {
                cases.put(ConnectionOptions.DEFAULTS.withRdAtomic(tooDeep, 0), "max_qp_init_rd_atom");
            }
            for (var e : cases.entrySet()) {
                VerbsException x = assertThrows(VerbsException.class,
                        () -> pd.createQp(QpInitAttr.of(QpType.RC, cq, 4).withConnection(e.getKey())));
                assertTrue(x.getMessage().contains(e.getValue()), x.getMessage());
                assertTrue(x.getMessage().contains("rxe0"), x.getMessage());
                assertFalse(x.getMessage().contains("\n"), x.getMessage());
            }
            assertEquals(0, c0.resources().qps(), "nothing was created for a refused QP");
        } finally {
            cq.close();
            pd.close();
        }
    }

    @Test
    void knobsAreWhatTheDeviceHolds() throws Exception {
        ConnectionOptions o = ConnectionOptions.DEFAULTS.withTimers(12, 18, 5, 3).withRdAtomic(1, 2)
                .withRoute(0, 32, 17);
        End a = end(c0, o);
        End b = end(c1, ConnectionOptions.DEFAULTS.withRdAtomic(2, 1));
        try {
            a.qp.init(Access.ALL_RDMA);
            b.qp.init(Access.ALL_RDMA);
            a.qp.readyToReceive(b.qp.address());
            b.qp.readyToReceive(a.qp.address());
            a.qp.readyToSend(o.retryCount(), o.rnrRetry());
            b.qp.readyToSend(7, 7);
            Map<String, Integer> q = ((IbvQp) a.qp).queryConnection();
            assertEquals(12, q.get("min_rnr_timer"));
            assertEquals(18, q.get("timeout"));
            assertEquals(5, q.get("retry_cnt"));
            assertEquals(3, q.get("rnr_retry"));
            assertEquals(1, q.get("max_rd_atomic"));
            assertEquals(2, q.get("max_dest_rd_atomic"));
            assertEquals(32, q.get("traffic_class"));
            // On RoCE the kernel takes the hop limit from the IP route when it resolves the peer's
            // Ethernet address (ib_resolve_eth_dmac), whatever was asked; on InfiniBand it is ours.
            assertEquals(dev0.ports().getFirst().ethernet() ? 64 : 17, q.get("hop_limit"));
            assertEquals(1, q.get("port"));
            assertTrue(sendAndCount(a, b) > 0, "the connection moves data with these knobs");
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void packetsOnTheWireFollowTheAgreedMtu() throws Exception {
        End a = end(c0, ConnectionOptions.DEFAULTS);
        End b = end(c1, ConnectionOptions.DEFAULTS);
        End x = end(c0, ConnectionOptions.DEFAULTS);
        End y = end(c1, ConnectionOptions.DEFAULTS.withPathMtu(2048));
        try {
            connect(a, b);
            assertEquals(4096, a.qp.pathMtu());
            assertEquals(3, sendAndCount(a, b), "10000 bytes at MTU 4096");
            connect(x, y);
            assertEquals(2048, x.qp.pathMtu(), "the smaller side's MTU wins");
            assertEquals(2048, y.qp.pathMtu());
            assertEquals(5, sendAndCount(x, y), "10000 bytes at MTU 2048");
        } finally {
            a.close();
            b.close();
            x.close();
            y.close();
        }
    }

    /** The responder runs in another JVM ({@link RxePeer}) with path MTU 1024; this side leaves it automatic. */
    @Test
    void twoProcessesAgreeOnTheSmallerMtu() throws Exception {
        String cp = String.join(File.pathSeparator, location(RxePeer.class), location(QpAddress.class),
                location(Int2ObjectHashMap.class));
        Process peer = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m",
                "-cp", cp, RxePeer.class.getName(), "rxe1", "1024").redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        End a = end(c0, ConnectionOptions.DEFAULTS);
        try (BufferedReader in = new BufferedReader(new InputStreamReader(peer.getInputStream()));
             PrintWriter out = new PrintWriter(peer.getOutputStream(), true)) {
            String addr = in.readLine();
            assertNotNull(addr, "the peer process printed no address");
            assertTrue(addr.startsWith("ADDR "), addr);
            QpAddress remote = QpAddress.fromBytes(HexFormat.of().parseHex(addr.substring(5)));
            assertEquals(1024, remote.mtu(), "the peer advertises its MTU in the exchanged address");
            assertEquals(4096, a.qp.address().mtu());
            a.qp.connect(remote, Access.ALL_RDMA, 7);
            out.println("PEER " + HexFormat.of().formatHex(a.qp.address().toBytes()));
            assertEquals("READY 1024", in.readLine(), "the peer agreed on 1024");
            assertEquals(1024, a.qp.pathMtu(), "this side agreed on the peer's smaller MTU");
            assertEquals(10, sendAndCount(a, null), "10000 bytes at MTU 1024 are 10 packets");
            long sum = 0;
            for (int i = 0; i < MESSAGE; i++) {
                sum += (byte) (i * 31) & 0xff;
            }
            assertEquals("RECV 0 " + MESSAGE + " " + sum, in.readLine());
            assertTrue(peer.waitFor(60, TimeUnit.SECONDS), "the peer process ended");
            assertEquals(0, peer.exitValue());
        } finally {
            a.close();
            peer.destroyForcibly();
        }
    }

    private static String location(Class<?> c) throws Exception {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}
