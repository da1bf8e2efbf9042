package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.SplittableRandom;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fabric's isolation and hostile-memory rules, with two device objects of this JVM standing for
 * two processes (each has its own process entry, directories, ring and shared files): 0600 files
 * named by user, device and job, removed on close; jobs that cannot reach each other; unmappable
 * memory refused for remote access; closed processes unreachable; a scribbled segment answered with
 * error statuses or a clear exception, never a crash or a write outside a registered region.
 */
@Timeout(120)
class SimFabricTest {
    private static String job(String what) {
        return "test-fabric-" + what + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    }

    /** A device of this test: answers that never come time out after 300 ms. */
    private static SimDevice mlx5(String job) {
        return SimDevice.mlx5(job).retryTimeoutMillis(300);
    }

    private static Path segment(SimDevice d) {
        return Fabric.segmentPath(d.name(), "mlx5", d.job());
    }

    /** One side: context, PD, CQ, RC QP, 64 KiB of PD memory registered for RDMA. */
    static final class Side implements AutoCloseable {
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemorySegment mem;
        final MemoryRegion mr;

        Side(SimDevice d) {
            ctx = d.open();
            pd = ctx.allocPd();
            cq = ctx.createCq(CqOptions.of(256));
            qp = pd.createQp(QpInitAttr.of(QpType.RC, cq, 64));
            mem = pd.allocate(65536, 4096);
            mr = pd.register(mem, Access.ALL_RDMA);
        }

        int post(Opcode op, long off, int len, long raddr, int rkey) {
            try (SendWorkRequests w = new SendWorkRequests(1, 1)) {
                int i = w.add(7, op, SendFlags.SIGNALED);
                w.sge(i, mr, off, len);
                if (op.isRdma()) {
                    w.rdma(i, raddr, rkey);
                }
                return qp.postSend(w);
            }
        }

        /** The next completion's status (bounded wait), or -1 when none came. */
        int status() {
            try (WorkCompletions wc = new WorkCompletions(1)) {
                long deadline = System.nanoTime() + 20_000_000_000L;
                while (System.nanoTime() < deadline) {
                    int n = cq.poll(wc, 1);
                    if (n == 1) {
                        return wc.status(0);
                    }
                    if (n < 0) {
                        return n;
                    }
                    Thread.onSpinWait();
                }
            }
            return -1;
        }

        @Override
        public void close() {
            ctx.close();
        }
    }

    private static void connect(Side a, Side b) {
        a.qp.connect(b.qp.address(), Access.ALL_RDMA, 7);
        b.qp.connect(a.qp.address(), Access.ALL_RDMA, 7);
    }

    @Test
    void segmentIsTheUsersOnlyAndRemovedOnClose() throws IOException {
        SimDevice d = mlx5(job("close"));
        Path seg = segment(d);
        try (Side s = new Side(d)) {
            assertTrue(Files.exists(seg));
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(seg)));
            assertTrue(d.fabricSlot() > 0);
            assertTrue(Files.exists(Path.of(d.sharedFilePrefix() + "0")), "PD memory is a shared file");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(
                    Path.of(d.sharedFilePrefix() + "0"))));
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(seg.getParent())),
                    "in the user's private directory");
        }
        assertFalse(Files.exists(seg), "the last process removes the segment");
        assertEquals(0, CrossProcessTest.count(seg + "@"), "and every shared file");
    }

    @Test
    void aSegmentOthersCouldOpenIsRefused() throws IOException {
        SimDevice d = mlx5(job("mode"));
        Path seg = segment(d);
        Files.createFile(seg, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
        try {
            VerbsException e = assertThrows(VerbsException.class, d::open);
            assertEquals(Errno.EACCES, e.errno());
            assertTrue(e.getMessage().contains("ibv_open_device") && e.getMessage().contains("rw-------")
                    && e.getMessage().contains("SCALEP_JOB"),
                    e.getMessage());
        } finally {
            Files.deleteIfExists(seg);
        }
    }

    @Test
    void aDeregisteredTargetMrIsRefusedAtTheNextWriteAfterAStreamToIt() {
        for (boolean cross : new boolean[] {true, false}) { // the MR window of a peer, the cached MR in-process
            String job = job("dereg" + cross);
            SimDevice d = mlx5(job);
            try (Side a = new Side(cross ? mlx5(job) : d); Side b = new Side(d)) {
                connect(a, b);
                a.mem.set(JAVA_LONG_UNALIGNED, 0, 0x1122334455667788L);
                long base = b.mr.address();
                int rkey = b.mr.rkey();
                for (int k = 0; k < 3; k++) { // the initiator now caches the target MR
                    assertEquals(0, a.post(Opcode.RDMA_WRITE, 0, 8, base + 8L * k, rkey));
                    assertEquals(WcStatus.SUCCESS, a.status(), "cross=" + cross);
                    assertEquals(0x1122334455667788L, b.mem.get(JAVA_LONG_UNALIGNED, 8L * k));
                }
                b.mr.deregister();
                MemoryRegion again = b.pd.register(b.mem, Access.ALL_RDMA); // same memory, same directory slot
                assertNotEquals(rkey, again.rkey());
                assertEquals(0, a.post(Opcode.RDMA_WRITE, 0, 8, base + 64, rkey));
                assertEquals(WcStatus.REM_ACCESS_ERR, a.status(), "cross=" + cross);
                assertEquals(0L, b.mem.get(JAVA_LONG_UNALIGNED, 64), "nothing was written through the stale key");
            }
        }
    }

    /**
     * A liveness sweep that read a peer's owner word just before the peer left judges that owner,
     * not the word it reads again (0 then): the peer's process still runs, so when it joins again
     * (the same owner word) it is a peer, not one gone for good.
     */
    @Test
    void aPeerThatLeftAsTheSweepReadItIsNotGoneWhenItJoinsAgain() {
        String job = job("rejoin");
        Fabric a = Fabric.join("sim:mlx5", "mlx5", job);
        try {
            Fabric b = Fabric.join("sim:mlx5", "mlx5", job);
            int p = b.slot;
            long o = b.ownerOf(p);
            b.leave();
            assertEquals(0, a.ownerOf(p), "the entry is free once its process left");
            a.sweepEntry(p, o);
            Fabric c = Fabric.join("sim:mlx5", "mlx5", job);
            try {
                assertEquals(p, c.slot, "the freed entry is taken again");
                assertEquals(o, a.ownerOf(p), "by the same owner word");
                assertFalse(a.peerGone(p), "the process that joined again is a peer");
            } finally {
                c.leave();
            }
        } finally {
            a.leave();
        }
    }

    @Test
    void peersInOneProcessTakeTheInProcessPath() {
        SimDevice d = mlx5(job("local"));
        try (Side a = new Side(d); Side b = new Side(d); RecvWorkRequests r = new RecvWorkRequests(1, 1)) {
            connect(a, b);
            r.sge(r.add(1), b.mr, 0, 64);
            assertEquals(0, b.qp.postRecv(r));
            assertEquals(0, a.post(Opcode.SEND, 0, 64, 0, 0));
            assertEquals(WcStatus.SUCCESS, a.status());
            assertEquals(0, a.post(Opcode.RDMA_WRITE, 0, 8, b.mr.address() + 128, b.mr.rkey()));
            assertEquals(WcStatus.SUCCESS, a.status());
            assertEquals(WcStatus.SUCCESS, b.status());
            assertEquals(0, d.fabric().ownRing().producerPosition(), "nothing went through the fabric's ring");
        }
    }

    @Test
    void twoSidedWorkToAnotherProcessGoesThroughItsRing() {
        String job = job("ring");
        SimDevice db = mlx5(job);
        try (Side a = new Side(mlx5(job)); Side b = new Side(db); RecvWorkRequests r = new RecvWorkRequests(1, 1)) {
            connect(a, b);
            r.sge(r.add(1), b.mr, 0, 64);
            assertEquals(0, b.qp.postRecv(r));
            assertEquals(0, a.post(Opcode.SEND, 0, 64, 0, 0));
            assertEquals(WcStatus.SUCCESS, a.status());
            assertEquals(WcStatus.SUCCESS, b.status());
            assertTrue(db.fabric().ownRing().producerPosition() > 0, "the request crossed the target's ring");
        }
    }

    @Test
    void jobsDoNotReachEachOther() {
        try (Side a = new Side(mlx5(job("x"))); Side b = new Side(mlx5(job("y")))) {
            a.qp.init(Access.ALL_RDMA);
            VerbsException e = assertThrows(VerbsException.class, () -> a.qp.readyToReceive(b.qp.address()));
            assertTrue(e.getMessage().contains("ibv_modify_qp") && e.getMessage().contains("not on this fabric"),
                    e.getMessage());
            assertThrows(VerbsException.class, () -> a.pd.createAh(b.qp.address()));
        }
    }

    @Test
    void remoteAccessToUnmappableMemoryIsRefusedAtRegistration() {
        try (Side a = new Side(mlx5(job("reg"))); Arena arena = Arena.ofConfined()) {
            MemorySegment heapless = arena.allocate(4096, 64);
            VerbsException e = assertThrows(VerbsException.class, () -> a.pd.register(heapless, Access.ALL_RDMA));
            assertEquals(Errno.EINVAL, e.errno());
            assertTrue(e.getMessage().contains("ibv_reg_mr") && e.getMessage().contains("no other process can map"),
                    e.getMessage());
            a.pd.register(heapless, Access.LOCAL_WRITE).close(); // local access needs no sharing
        }
    }

    @Test
    void aClosedProcessIsUnreachable() {
        String job = job("closed");
        try (Side a = new Side(mlx5(job))) {
            Side b = new Side(mlx5(job));
            connect(a, b);
            assertEquals(0, a.post(Opcode.RDMA_WRITE, 0, 8, b.mr.address(), b.mr.rkey()));
            assertEquals(WcStatus.SUCCESS, a.status());
            b.close();
            assertEquals(0, a.post(Opcode.RDMA_WRITE, 0, 8, b.mr.address(), b.mr.rkey()));
            assertEquals(WcStatus.RETRY_EXC_ERR, a.status(), "its QP is gone from the directory");
        }
    }

    @Test
    void scribbledDirectoriesGiveErrorStatusesAndNoStrayWrites() throws IOException {
        String job = job("scribble");
        SimDevice db = mlx5(job);
        try (Side a = new Side(mlx5(job)); Side b = new Side(db);
             FileChannel ch = FileChannel.open(segment(db), StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena arena = Arena.ofConfined()) {
            MemorySegment fab = ch.map(FileChannel.MapMode.READ_WRITE, 0, FabricLayout.FILE_BYTES, arena);
            int p = db.fabricSlot();
            long mrEntry = FabricLayout.mrEntry(p, b.mr.rkey());
            // an MR entry claiming 1 TiB: a write past the shared file is refused, not performed
            fab.set(JAVA_LONG_UNALIGNED, mrEntry + FabricLayout.MR_LENGTH, 1L << 40);
            connect(a, b);
            assertEquals(0, a.post(Opcode.RDMA_WRITE, 0, 8, b.mr.address() + (1 << 20), b.mr.rkey()));
            assertEquals(WcStatus.REM_ACCESS_ERR, a.status());
            b.qp.reset();
            a.qp.reset();
            connect(a, b);
            // a file number no one created
            fab.set(JAVA_LONG_UNALIGNED, mrEntry + FabricLayout.MR_LENGTH, 65536);
            fab.set(JAVA_INT_UNALIGNED, mrEntry + FabricLayout.MR_FILE, 31_000);
            assertEquals(0, a.post(Opcode.RDMA_WRITE, 0, 8, b.mr.address(), b.mr.rkey()));
            assertEquals(WcStatus.REM_ACCESS_ERR, a.status());
            b.qp.reset();
            a.qp.reset();
            connect(a, b);
            // a QP state no QP has
            fab.set(JAVA_INT_UNALIGNED, FabricLayout.qpEntry(p, b.qp.qpNum()) + FabricLayout.QP_STATE, 77);
            assertEquals(0, a.post(Opcode.RDMA_WRITE, 0, 8, b.mr.address(), b.mr.rkey()));
            assertEquals(WcStatus.RETRY_EXC_ERR, a.status());
            for (long i = 0; i < 65536; i++) {
                assertEquals(0, b.mem.get(JAVA_BYTE, i), "nothing was written into the target");
            }
        }
    }

    @Test
    void randomScribblesOverAPeersAreaNeverCrash() throws IOException {
        String job = job("random");
        SimDevice db = mlx5(job);
        SplittableRandom rnd = new SplittableRandom(11);
        try (Side a = new Side(mlx5(job)); Side b = new Side(db);
             FileChannel ch = FileChannel.open(segment(db), StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena arena = Arena.ofConfined(); RecvWorkRequests r = new RecvWorkRequests(8, 1)) {
            MemorySegment fab = ch.map(FileChannel.MapMode.READ_WRITE, 0, FabricLayout.FILE_BYTES, arena);
            connect(a, b);
            for (int k = 0; k < 8; k++) {
                r.sge(r.add(k), b.mr, 1024L * k, 64);
            }
            assertEquals(0, b.qp.postRecv(r));
            long area = FabricLayout.area(db.fabricSlot());
            for (int round = 0; round < 20; round++) {
                for (int k = 0; k < 4000; k++) { // ring (trailer included), QP and MR directories
                    long at = area + rnd.nextLong(FabricLayout.AREA_BYTES - 8);
                    fab.set(JAVA_LONG_UNALIGNED, at, rnd.nextLong());
                }
                fab.set(JAVA_INT_UNALIGNED, FabricLayout.mrEntry(db.fabricSlot(), b.mr.rkey()), rnd.nextInt());
                Opcode op = Opcode.values()[rnd.nextInt(Opcode.values().length)];
                int rc = a.post(op, 0, 64, b.mr.address() + rnd.nextInt(65536), b.mr.rkey());
                if (rc == 0) {
                    int st = a.status();
                    assertNotEquals(-1, st, "every WR completes");
                    if (st != WcStatus.SUCCESS) {
                        a.qp.reset();
                        b.qp.reset();
                        connect(a, b);
                    }
                }
                try (WorkCompletions wc = new WorkCompletions(8)) {
                    b.cq.poll(wc, 8); // the target's polls drain a scribbled ring without crashing
                }
            }
        }
    }

    @Test
    void aRingScribbledFullEndsASendInRetryExceededNotAHang() throws IOException {
        String job = job("full");
        SimDevice db = mlx5(job);
        try (Side a = new Side(mlx5(job)); Side b = new Side(db);
             FileChannel ch = FileChannel.open(segment(db), StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena arena = Arena.ofConfined(); RecvWorkRequests r = new RecvWorkRequests(1, 1)) {
            MemorySegment fab = ch.map(FileChannel.MapMode.READ_WRITE, 0, FabricLayout.FILE_BYTES, arena);
            connect(a, b);
            r.sge(r.add(1), b.mr, 0, 64);
            assertEquals(0, b.qp.postRecv(r));
            long trailer = FabricLayout.area(db.fabricSlot()) + FabricLayout.RING_CAPACITY;
            long head = fab.get(JAVA_LONG_UNALIGNED, trailer + RingBufferDescriptor.HEAD_POSITION_OFFSET);
            // the producer position a full capacity ahead of the consumer, with nothing readable in between
            fab.set(JAVA_LONG_UNALIGNED, trailer + RingBufferDescriptor.TAIL_POSITION_OFFSET,
                    head + FabricLayout.RING_CAPACITY);
            assertEquals(0, a.post(Opcode.SEND, 0, 64, 0, 0));
            assertEquals(WcStatus.RETRY_EXC_ERR, a.status(), "within the retry timeout, not never");
        }
    }

    @Test
    void aCorruptHeaderIsAClearError() throws IOException {
        String job = job("header");
        SimDevice da = mlx5(job);
        try (Side a = new Side(da); FileChannel ch = FileChannel.open(segment(da), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[]{1, 2, 3, 4, 5, 6, 7, 8}), 0);
            VerbsException e = assertThrows(VerbsException.class, () -> mlx5(job).open());
            assertTrue(e.getMessage().contains("not a version"), e.getMessage());
        }
    }
}
