package dev.scalep.endpoints;

import dev.scalep.policies.EffectivePolicy;
import dev.scalep.policies.EndpointClass;
import dev.scalep.policies.PolicyLoader;
import dev.scalep.policies.SharingConfig;
import dev.scalep.threading.SendPath;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.QpCounters;
import dev.scalep.verbs.ResourceUsage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import com.sun.management.ThreadMXBean;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each policy feature changes what reaches the device: doorbells, WQEs, inline WQEs and BlueFlame
 * writes counted by the QP, CQEs written into the CQ, receives posted per call. Printed numbers
 * (stdout) are the per-WR ratios.
 */
class PolicyFeaturesTest {
    static final int N = 1024;
    static final EndpointOptions BASE = EndpointOptions.DEFAULTS.withDepths(256, 16).withBuffers(4096, 256);

    record Run(QpCounters qp, long cqes, long wrs, EndpointManager a, EndpointManager b) {
        double doorbellsPerWr() {
            return (double) qp.doorbells() / wrs;
        }

        double cqesPerWr() {
            return (double) cqes / wrs;
        }
    }

    /** One thread, per-thread QP (static): {@code n} 16-byte writes, then drain; counters of the sender's QP and CQ. */
    static Run writes(String dev, EndpointOptions o, int n, boolean clobberAfterPost) {
        Device d = Devices.byName(dev);
        EndpointManager a = EndpointManager.open(d, SharingConfig.parse("static"), 1, o);
        EndpointManager b = EndpointManager.open(d, SharingConfig.parse("static"), 1, o);
        try {
            a.connect(b);
            Endpoint e = a.acquire();
            Completion c = new Completion();
            for (int m = 0; m < n; m++) {
                int off = (m % 64) * 16;
                e.sendBuffer().set(ValueLayout.JAVA_LONG, off, 0x5CA1E00000000000L | m);
                int rc;
                while ((rc = e.write(m, off, 16, off)) == SendPath.EAGAIN) {
                    while (e.poll(c)) {
                        assertTrue(c.ok(), c::toString);
                    }
                }
                assertEquals(0, rc);
                if (clobberAfterPost) {
                    e.sendBuffer().set(ValueLayout.JAVA_LONG, off, -1L);
                }
            }
            assertTrue(e.drain(20_000_000_000L), "drain");
            a.release(e);
            return new Run(e.qp().counters(), a.cqs.get(0).cqesWritten(), n, a, b);
        } catch (RuntimeException | Error x) {
            a.close();
            b.close();
            throw x;
        }
    }

    static void close(Run r) {
        r.a.close();
        r.b.close();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    @Timeout(60)
    void postlistCutsDoorbellsPerWr(String dev) {
        Run p1 = writes(dev, BASE.withFeatures(1, 1, 0), N, false);
        Run p32 = writes(dev, BASE.withFeatures(32, 1, 0), N, false);
        Run chained = writes(dev, BASE.withFeatures(32, 1, 0).withChained(256, 32), N, false);
        try {
            System.out.printf("%s doorbells/WR: p=1 %.4f, p=32 %.4f, p=32 chained %.4f%n", dev, p1.doorbellsPerWr(),
                    p32.doorbellsPerWr(), chained.doorbellsPerWr());
            assertEquals(N, p1.qp.wqes());
            assertEquals(1.0, p1.doorbellsPerWr(), 1e-9);
            assertEquals(N, p32.qp.wqes());
            assertEquals(N / 32, p32.qp.doorbells());
            assertEquals(N / 32, chained.qp.doorbells());
            assertEquals(256, chained.a.endpoint(0).chainPool());
        } finally {
            close(p1);
            close(p32);
            close(chained);
        }
    }

    @Test
    @Timeout(60)
    void unsignaledCutsCqesPerWr() {
        Run q1 = writes("sim:mlx5", BASE.withFeatures(32, 1, 0), N, false);
        Run q64 = writes("sim:mlx5", BASE.withFeatures(32, 64, 0), N, false);
        Run q64chained = writes("sim:mlx5", BASE.withFeatures(32, 64, 0).withChained(128, 32), N, false);
        try {
            System.out.printf("sim:mlx5 CQEs/WR: q=1 %.4f, q=64 %.4f, q=64 chained %.4f%n", q1.cqesPerWr(),
                    q64.cqesPerWr(), q64chained.cqesPerWr());
            assertEquals(N, q1.cqes);
            assertEquals(N / 64, q64.cqes);
            assertEquals(N / 64, q64chained.cqes);
            assertEquals(0, q64.a.endpoint(0).outstanding(), "every unsignaled WR retired by a later completion");
        } finally {
            close(q1);
            close(q64);
            close(q64chained);
        }
    }

    @Test
    @Timeout(60)
    void unsignaledIsSubstitutedOnEfa() {
        Run r = writes("sim:efa", BASE.withFeatures(32, 64, 0), 256, false);
        try {
            assertEquals(1, r.a.signalEvery());
            assertTrue(r.a.substitutions().stream().anyMatch(s -> s.setting().equals("signalEvery")));
            assertEquals(256, r.cqes, "every WR signaled on EFA");
        } finally {
            close(r);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    @Timeout(60)
    void inlineCopiesAtPostTime(String dev) {
        for (boolean chained : new boolean[]{false, true}) {
            // p = 1: each write reaches the device at once, so the buffer is reused right after the post.
            EndpointOptions o = BASE.withFeatures(1, 1, 32);
            if (chained) {
                o = o.withChained(64, 8);
            }
            // 64 distinct offsets only: check the last 64 writes, each clobbered right after its post.
            Run on = writes(dev, o, 64, true);
            Run off = writes(dev, BASE.withFeatures(1, 1, 0), 64, false);
            try {
                assertEquals(64, on.qp.inlineWqes(), "every 16-byte write inlined");
                assertEquals(0, off.qp.inlineWqes());
                Endpoint target = on.b.endpoint(0);
                for (int m = 0; m < 64; m++) {
                    assertEquals(0x5CA1E00000000000L | m, target.targetBuffer().get(ValueLayout.JAVA_LONG, m * 16L),
                            "write " + m + " delivers the bytes of post time");
                }
            } finally {
                close(on);
                close(off);
            }
        }
    }

    @Test
    @Timeout(60)
    void blueFlameOnlyForSinglePostsAndOnlyWhenOn() {
        var bfOn = BASE.context().withBlueFlame(true);
        Run single = writes("sim:mlx5", BASE.withFeatures(1, 1, 0).withContext(bfOn), 256, false);
        Run listed = writes("sim:mlx5", BASE.withFeatures(32, 1, 0).withContext(bfOn), 256, false);
        Run off = writes("sim:mlx5", BASE.withFeatures(1, 1, 0).withContext(bfOn.withBlueFlame(false)), 256, false);
        try {
            System.out.printf("sim:mlx5 BlueFlame writes/WR: p=1 on %.3f, p=32 on %.3f, p=1 off %.3f%n",
                    single.qp.blueFlameWrites() / 256.0, listed.qp.blueFlameWrites() / 256.0, off.qp.blueFlameWrites() / 256.0);
            assertEquals(256, single.qp.blueFlameWrites());
            assertEquals(0, listed.qp.blueFlameWrites(), "lists are DMA-read, never BlueFlame");
            assertEquals(0, off.qp.blueFlameWrites());
        } finally {
            close(single);
            close(listed);
            close(off);
        }
    }

    @Test
    @Timeout(60)
    void policyBlueFlameMapsToTheContext() {
        EndpointClass c = EndpointClass.defaults("x");
        var mlx5 = Devices.byName("sim:mlx5").capabilities();
        var efa = Devices.byName("sim:efa").capabilities();
        assertEquals(mlx5.blueFlame(), EndpointOptions.from(c, mlx5).context().blueFlame(), "auto = device default");
        assertFalse(EndpointOptions.from(c, efa).context().blueFlame(), "auto on EFA: none");
        EndpointClass off = new EndpointClass("y", c.sharing(), c.queueDepth(), c.postlist(), c.unsignaled(),
                c.inlineThreshold(), dev.scalep.policies.BlueFlame.OFF, c.chained(), c.sgeHeaderPayload(), c.srq(), c.cq(),
                c.srd(), c.onUnsupported());
        assertFalse(EndpointOptions.from(off, mlx5).context().blueFlame());
    }

    @Test
    @Timeout(60)
    void chainedPostsReuseThePoolWithoutAllocating() {
        EndpointOptions o = BASE.withFeatures(16, 16, 0).withChained(64, 16);
        Device d = Devices.byName("sim:mlx5");
        try (EndpointManager a = EndpointManager.open(d, SharingConfig.parse("static"), 1, o);
             EndpointManager b = EndpointManager.open(d, SharingConfig.parse("static"), 1, o)) {
            a.connect(b);
            Endpoint e = a.acquire();
            Completion c = new Completion();
            Set<Long> records = new HashSet<>();
            for (int m = 0; m < 640; m++) {
                post(e, c, m);
                records.add(e.lastRecordAddress());
            }
            // Chains of 16 written round-robin into a pool of 64 records end on records 15, 31, 47 and 63, again and again.
            assertEquals(4, records.size(), "640 posts in chains of 16 cycle through the 64 pool records: " + records);
            long lo = records.stream().mapToLong(Long::longValue).min().orElseThrow();
            long hi = records.stream().mapToLong(Long::longValue).max().orElseThrow();
            assertEquals(0, (hi - lo) % 48, "chain ends are 16 records apart: " + records);
            var mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
            long tid = Thread.currentThread().threadId();
            for (int m = 0; m < 100_000; m++) { // warm-up: the JIT compiles the post path (C2) before the count
                post(e, c, m);
            }
            long before = mx.getThreadAllocatedBytes(tid);
            int ops = 50_000;
            for (int m = 0; m < ops; m++) {
                post(e, c, m);
            }
            long allocated = mx.getThreadAllocatedBytes(tid) - before;
            System.out.printf("chained posts: %d bytes allocated over %d writes+polls (%.4f B/op), %.4f doorbells/WR%n",
                    allocated, ops, (double) allocated / ops, (double) e.qp().counters().doorbells() / e.qp().counters().wqes());
            assertTrue(allocated < 4096, "allocated " + allocated + " bytes over " + ops + " ops");
            assertTrue(e.drain(20_000_000_000L));
            a.release(e);
        }
    }

    private static void post(Endpoint e, Completion c, int m) {
        int rc;
        while ((rc = e.write(m, 0, 8, 0)) == SendPath.EAGAIN) {
            while (e.poll(c)) {
                if (!c.ok()) {
                    throw new AssertionError("error completion");
                }
            }
        }
        if (rc != 0) {
            throw new AssertionError("write rc " + rc);
        }
        while (e.poll(c)) {
            if (!c.ok()) {
                throw new AssertionError("error completion");
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    @Timeout(60)
    void headerAndPayloadGoAsTwoSges(String dev) {
        EndpointOptions o = BASE.withFeatures(4, 1, 0).withSgeHeaderPayload(true);
        Device d = Devices.byName(dev);
        try (EndpointManager a = EndpointManager.open(d, SharingConfig.parse("static"), 1, o);
             EndpointManager b = EndpointManager.open(d, SharingConfig.parse("static"), 1, o)) {
            a.connect(b);
            Endpoint e = a.acquire();
            Endpoint r = b.acquire();
            assertTrue(e.sgeHeaderPayload());
            byte[] header = "HDR:0123456789ab".getBytes();
            byte[] payload = new byte[48];
            for (int k = 0; k < payload.length; k++) {
                payload[k] = (byte) (100 + k);
            }
            MemorySegment.copy(header, 0, e.sendBuffer(), ValueLayout.JAVA_BYTE, 0, header.length);
            MemorySegment.copy(payload, 0, e.sendBuffer(), ValueLayout.JAVA_BYTE, 1024, payload.length);
            long wqes = e.qp().counters().wqes();
            assertEquals(0, e.writeGather(1, 0, 16, 1024, 48, 256));
            assertEquals(0, e.sendGather(2, 0, 16, 1024, 48));
            assertTrue(e.drain(20_000_000_000L));
            assertEquals(2, e.qp().counters().wqes() - wqes, "one WR per header+payload message");
            byte[] expect = new byte[64];
            System.arraycopy(header, 0, expect, 0, 16);
            System.arraycopy(payload, 0, expect, 16, 48);
            assertArrayEquals(expect, r.targetBuffer().asSlice(256, 64).toArray(ValueLayout.JAVA_BYTE), "write gathered");
            Completion c = new Completion();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!r.poll(c)) {
                assertTrue(System.nanoTime() < deadline, "receive arrives");
            }
            assertTrue(c.isRecv() && c.ok(), c::toString);
            assertEquals(64, c.byteLen());
            assertArrayEquals(expect, r.recvSlot((int) c.wrId()).asSlice(0, 64).toArray(ValueLayout.JAVA_BYTE), "send gathered");
            assertEquals(0, r.repost((int) c.wrId()));
            a.release(e);
            b.release(r);
        }
    }

    @Test
    @Timeout(60)
    void headerPayloadIsOffWhereItCannotApply() {
        Device d = Devices.byName("sim:mlx5");
        EndpointOptions o = BASE.withFeatures(4, 1, 0).withSgeHeaderPayload(true);
        try (EndpointManager a = EndpointManager.open(d, SharingConfig.parse("static,qp=shared:combining,cq=shared"), 2, o)) {
            assertTrue(a.substitutions().stream().anyMatch(s -> s.setting().equals("sge-header-payload")));
            assertEquals("false", a.applied().get("sge-header-payload"));
        }
        try (EndpointManager a = EndpointManager.open(d, SharingConfig.parse("static"), 1, BASE);
             EndpointManager b = EndpointManager.open(d, SharingConfig.parse("static"), 1, BASE)) {
            a.connect(b);
            Endpoint e = a.acquire();
            assertThrows(IllegalStateException.class, () -> e.sendGather(1, 0, 16, 64, 16));
            a.release(e);
        }
    }

    @Test
    @Timeout(60)
    void srqIsRefilledInBatches() {
        Device d = Devices.byName("sim:mlx5");
        SharingConfig cfg = SharingConfig.parse("static,srq=shared");
        EndpointOptions o = BASE.withDepths(64, 64).withFeatures(1, 1, 0).withSrq(64, 16, 8);
        try (EndpointManager a = EndpointManager.open(d, cfg, 1, o);
             EndpointManager b = EndpointManager.open(d, cfg, 1, o)) {
            a.connect(b);
            Endpoint s = a.acquire();
            Endpoint r = b.acquire();
            var srq = b.srqs.get(0);
            assertEquals(64, srq.posted());
            assertEquals(1, r.recvPostCalls(), "the initial stock is one postRecv call");
            Completion c = new Completion();
            int messages = 200;
            int minPosted = Integer.MAX_VALUE;
            for (int m = 0; m < messages; m++) {
                s.sendBuffer().set(ValueLayout.JAVA_INT, 0, m);
                int rc;
                while ((rc = s.send(m, 0, 4)) == SendPath.EAGAIN) {
                    s.poll(c);
                }
                assertEquals(0, rc);
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (!r.poll(c)) {
                    assertTrue(System.nanoTime() < deadline, "message " + m + " arrives");
                }
                assertTrue(c.isRecv() && c.ok());
                assertEquals(m, r.recvSlot((int) c.wrId()).get(ValueLayout.JAVA_INT, 0));
                minPosted = Math.min(minPosted, srq.posted());
                assertEquals(0, r.repost((int) c.wrId()));
                while (s.poll(c)) {
                    assertTrue(c.ok());
                }
            }
            long calls = r.recvPostCalls() - 1;
            long reposted = r.recvPosted() - 64;
            System.out.printf("SRQ refill: %d receives consumed, %d reposted in %d postRecv calls (%.1f per call), min posted %d%n",
                    messages, reposted, calls, (double) reposted / calls, minPosted);
            assertEquals(messages / 8, calls, "one call per batch of 8");
            assertEquals(8 * calls, reposted);
            assertEquals(messages - reposted, r.recvWaiting());
            assertTrue(minPosted >= 64 - 8, "refilled before falling below the threshold");
            assertTrue(s.drain(10_000_000_000L));
            a.release(s);
            b.release(r);
        }
    }

    @Test
    @Timeout(60)
    void srqLowWaterRefillsBelowTheBatch() {
        Device d = Devices.byName("sim:mlx5");
        SharingConfig cfg = SharingConfig.parse("static,srq=shared");
        // threshold 62 of 64: as soon as 3 receives are consumed, what is waiting goes back even though the batch is 32
        EndpointOptions o = BASE.withDepths(64, 64).withFeatures(1, 1, 0).withSrq(64, 62, 32);
        try (EndpointManager a = EndpointManager.open(d, cfg, 1, o);
             EndpointManager b = EndpointManager.open(d, cfg, 1, o)) {
            a.connect(b);
            Endpoint s = a.acquire();
            Endpoint r = b.acquire();
            Completion c = new Completion();
            for (int m = 0; m < 30; m++) {
                assertEquals(0, s.send(m, 0, 4));
                while (!r.poll(c)) {
                    Thread.onSpinWait();
                }
                r.repost((int) c.wrId());
                while (s.poll(c)) {
                    assertTrue(c.ok());
                }
            }
            assertEquals(10, r.recvPostCalls() - 1, "a refill of 3 whenever posted fell to 61");
            assertTrue(s.drain(10_000_000_000L));
            a.release(s);
            b.release(r);
        }
    }

    @Test
    @Timeout(60)
    void cqDepthAndModerationReachTheCq() throws Exception {
        Device d = Devices.byName("sim:mlx5");
        EndpointOptions o = BASE.withCq(4096, 16, 8);
        try (EndpointManager a = EndpointManager.open(d, SharingConfig.parse("static"), 2, o)) {
            for (CompletionQueue cq : a.cqs) {
                assertTrue(cq.depth() >= 4096);
                var f = cq.getClass().getDeclaredField("modCount");
                f.setAccessible(true);
                assertEquals(16, f.getInt(cq), "ibv_modify_cq count");
                var g = cq.getClass().getDeclaredField("modPeriodMicros");
                g.setAccessible(true);
                assertEquals(8, g.getInt(cq));
            }
            assertEquals("depth " + a.cqs.get(0).depth() + ", moderation 16/8us", a.applied().get("cq"));
        }
        // Smaller than the queues need: raised, and said so.
        try (EndpointManager a = EndpointManager.open(d, SharingConfig.parse("static"), 1, BASE.withCq(8, 0, 0))) {
            assertTrue(a.cqs.get(0).depth() >= 256 + 16);
            assertTrue(a.substitutions().stream().anyMatch(s -> s.setting().equals("cq.depth")), a.substitutions()::toString);
        }
    }

    /**
     * A CQ shared by all threads holds what one endpoint needs as written; with 4 threads the
     * endpoint layer must raise it. Under degrade that is done and listed; under fail it is refused
     * before any traffic and nothing stays allocated.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    void underFailTheRuntimeChangesNothing(String dev) {
        Device d = Devices.byName(dev);
        String yaml = "classes:\n  a: {sharing: mpi-threads, queue-depth: 256, postlist: 1, unsignaled: 1, inline: 0,"
                + " blueflame: off, cq: {depth: 512}, on-unsupported: %s}\n";
        EndpointClass degrade = PolicyLoader.parse("d.yaml", yaml.formatted("degrade")).effective(d).endpointClass("a");
        try (EndpointManager m = EndpointManager.open(d, degrade, 4)) {
            assertTrue(m.substitutions().stream().anyMatch(s -> s.setting().equals("cq.depth")), m.substitutions()::toString);
        }
        EndpointClass fail = PolicyLoader.parse("f.yaml", yaml.formatted("fail")).effective(d).endpointClass("a");
        ResourceUsage before = d.resources();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EndpointManager.open(d, fail, 4));
        assertTrue(e.getMessage().contains("class a (on-unsupported: fail) cannot run as written") && e.getMessage().contains("cq.depth: 512 ->"),
                e.getMessage());
        assertEquals(before, d.resources(), "closed before any traffic");
        try (EndpointManager one = EndpointManager.open(d, fail, 1)) { // one endpoint: exactly as written
            assertTrue(one.substitutions().isEmpty(), one.substitutions()::toString);
        }
    }

    /** The recommended catalog policy of each device, every class opened from the policy and used: messages land intact. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    @Timeout(120)
    void catalogPolicyAppliedEndToEnd(String dev) throws Exception {
        Device d = Devices.byName(dev);
        ResourceUsage base = d.resources();
        String name = dev.equals("sim:efa") ? "recommended-efa" : "recommended-mlx5";
        EffectivePolicy eff = PolicyLoader.loadCatalog(name).effective(d);
        int threads = 4;
        for (EndpointClass cls : eff.classes().values()) {
            try (EndpointManager a = EndpointManager.open(d, cls, threads);
                 EndpointManager b = EndpointManager.open(d, cls, threads)) {
                a.connect(b);
                var applied = a.applied();
                System.out.println(dev + " " + name + " class " + cls.name() + ": " + applied + " substitutions " + a.substitutions());
                assertEquals(Integer.toString(cls.queueDepth()), applied.get("queue-depth"));
                assertEquals(Integer.toString(a.signalEvery()), applied.get("unsignaled"));
                assertEquals(cls.inlineThreshold() == 0 ? "0" : Integer.toString(Math.min(cls.inlineThreshold(), d.capabilities().maxInline())),
                        applied.get("inline"));
                exchange(a, b, threads, cls.sgeHeaderPayload() && a.endpoint(0).sgeHeaderPayload());
                long wqes = 0;
                long doorbells = 0;
                for (var qp : a.qps) {
                    wqes += qp.counters().wqes();
                    doorbells += qp.counters().doorbells();
                }
                long cqes = 0;
                for (var cq : a.cqs) {
                    cqes += cq.cqesWritten();
                }
                System.out.printf("  %d WQEs, %.4f doorbells/WR, %.4f CQEs/WR, inline WQEs %d%n", wqes,
                        (double) doorbells / wqes, (double) cqes / wqes, a.qps.get(0).counters().inlineWqes());
                assertTrue(doorbells <= wqes);
                if (cls.postlist() > 1 && !d.capabilities().qpTypes().isEmpty()) {
                    assertTrue(doorbells < wqes, "postlist cut doorbells");
                }
            }
        }
        assertEquals(base, d.resources());
    }

    /** Every thread writes 300 tagged 16-byte values and sends 20 messages; the peer checks both. */
    private static void exchange(EndpointManager a, EndpointManager b, int threads, boolean gather) throws Exception {
        AtomicReference<Throwable> fail = new AtomicReference<>();
        boolean unordered = !a.device().capabilities().inOrder();
        var acquired = new CyclicBarrier(threads);
        var done = new CyclicBarrier(threads);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            ts.add(Thread.ofPlatform().name("pf-" + t).start(() -> {
                try {
                    Endpoint e = a.acquire();
                    acquired.await(20, TimeUnit.SECONDS);
                    int i = e.index();
                    Completion c = new Completion();
                    for (int m = 0; m < 300; m++) {
                        int off = (m % 64) * 16;
                        e.sendBuffer().set(ValueLayout.JAVA_LONG, off, ((long) i << 32) | m);
                        int rc;
                        while ((rc = gather ? e.writeGather(m, off, 8, off + 8, 8, off) : e.write(m, off, 16, off))
                                == SendPath.EAGAIN) {
                            while (e.poll(c)) {
                                if (!c.ok()) {
                                    throw new AssertionError(c.toString());
                                }
                            }
                        }
                        assertEquals(0, rc);
                        if (unordered && m % 64 == 63) {
                            // SRD places two writes to one address in either order (an inline write
                            // carries the bytes of its post): before a round writes the slots again, the
                            // last round's writes must be complete, or the check below may find the older
                            assertTrue(e.drain(20_000_000_000L), "drain after a round");
                        }
                    }
                    assertTrue(e.drain(20_000_000_000L), "drain");
                    done.await(20, TimeUnit.SECONDS);
                    a.release(e);
                } catch (Throwable x) {
                    fail.compareAndSet(null, x);
                    acquired.reset();
                    done.reset();
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        assertNull(fail.get(), () -> String.valueOf(fail.get()));
        for (int t = 0; t < threads; t++) {
            Endpoint target = b.endpoint(t);
            for (int k = 0; k < 64; k++) {
                // the last write to slot k was message m with m % 64 == k and m < 300
                int m = k + 64 * ((299 - k) / 64);
                assertEquals(((long) t << 32) | m, target.targetBuffer().get(ValueLayout.JAVA_LONG, k * 16L),
                        "peer " + t + " slot " + k);
            }
        }
    }
}
