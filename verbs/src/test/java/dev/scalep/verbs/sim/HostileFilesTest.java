package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.WcStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The simulated NIC's shared files against a hostile or careless local user: links planted at the
 * names a job will use, garbage and foreign files, another job whose name extends this one's, a
 * planted segment carrying the magic, and names others took first. Nothing is followed, grown,
 * written or deleted that is not this user's own file of this job; a refusal is one line naming the
 * file and how to choose another job name.
 */
@Timeout(120)
class HostileFilesTest {
    private static final byte[] PRECIOUS = "precious bytes of the victim\n".getBytes(StandardCharsets.UTF_8);

    private static String job(String what) {
        return "test-hostile-" + what + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    }

    private static Path segment(String job) {
        return segment("mlx5", job);
    }

    private static Path segment(String personality, String job) {
        return Fabric.segmentPath("sim:" + personality, personality, job);
    }

    private static void assertOneLineNaming(VerbsException e, Path file) {
        String m = e.getMessage();
        assertEquals(Errno.EACCES, e.errno(), m);
        assertTrue(m.contains(file.toString()) && m.contains("SCALEP_JOB") && !m.contains("\n"), m);
    }

    private static Path victim(Path dir) throws IOException {
        Path v = dir.resolve("victim");
        Files.write(v, PRECIOUS);
        Files.setPosixFilePermissions(v, PosixFilePermissions.fromString("rw-------"));
        return v;
    }

    @ParameterizedTest
    @ValueSource(strings = {"mlx5", "efa"})
    void aLinkAtTheSegmentsNameIsRefusedAndItsTargetNeitherGrownNorWritten(String personality, @TempDir Path tmp)
            throws IOException {
        String job = job("link");
        Path seg = segment(personality, job);
        Path v = victim(tmp);
        Files.createSymbolicLink(seg, v);
        try {
            VerbsException e = assertThrows(VerbsException.class, () -> FabricPeer.device(personality, job).open());
            assertOneLineNaming(e, seg);
            assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
            assertArrayEquals(PRECIOUS, Files.readAllBytes(v), "the link's target is untouched");
            assertTrue(Files.isSymbolicLink(seg), "and the link, not scalep's, is left where it was");
        } finally {
            Files.deleteIfExists(seg);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mlx5", "efa"})
    void aGarbageFileIsRefusedBeforeItIsGrown(String personality) throws IOException {
        String job = job("garbage");
        Path seg = segment(personality, job);
        Files.write(seg, PRECIOUS);
        Files.setPosixFilePermissions(seg, PosixFilePermissions.fromString("rw-------"));
        try {
            VerbsException e = assertThrows(VerbsException.class, () -> FabricPeer.device(personality, job).open());
            assertOneLineNaming(e, seg);
            assertArrayEquals(PRECIOUS, Files.readAllBytes(seg), "not grown, not written");
        } finally {
            Files.deleteIfExists(seg);
        }
    }

    @Test
    void aHardLinkToAnotherFileIsRefused() throws IOException {
        String job = job("hardlink");
        Path seg = segment(job);
        Path v = victim(Files.createTempDirectory(seg.getParent(), "victim-"));
        Files.createLink(seg, v);
        try {
            VerbsException e = assertThrows(VerbsException.class, () -> SimDevice.mlx5(job).open());
            assertOneLineNaming(e, seg);
            assertArrayEquals(PRECIOUS, Files.readAllBytes(v));
        } finally {
            Files.deleteIfExists(seg);
            Files.deleteIfExists(v);
            Files.deleteIfExists(v.getParent());
        }
    }

    @Test
    void anotherUsersFileIsRefusedNamingItAndHowToChooseAnotherJob() throws IOException {
        assumeTrue(Fabric.currentUid() == 0, "needs root to give a file to another user");
        String job = job("foreign");
        Path seg = segment(job);
        Files.createFile(seg, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.setAttribute(seg, "unix:uid", 65534);
        try {
            VerbsException e = assertThrows(VerbsException.class, () -> SimDevice.mlx5(job).open());
            assertOneLineNaming(e, seg);
            assertTrue(e.getMessage().contains("uid 65534"), e.getMessage());
        } finally {
            Files.deleteIfExists(seg);
        }
    }

    @Test
    void aPeersAllocationReplacedByALinkIsNeverMapped(@TempDir Path tmp) throws IOException {
        String job = job("peerlink");
        Path v = victim(tmp);
        SimDevice db = SimDevice.mlx5(job).retryTimeoutMillis(300);
        try (SimFabricTest.Side a = new SimFabricTest.Side(SimDevice.mlx5(job).retryTimeoutMillis(300));
             SimFabricTest.Side b = new SimFabricTest.Side(db)) {
            Path file = Path.of(db.sharedFilePrefix() + "0");
            assertTrue(Files.exists(file));
            Files.delete(file); // b keeps its mapping; the name now points elsewhere
            Files.createSymbolicLink(file, v);
            a.qp.connect(b.qp.address(), Access.ALL_RDMA, 7);
            b.qp.connect(a.qp.address(), Access.ALL_RDMA, 7);
            a.mem.set(JAVA_LONG_UNALIGNED, 0, 0x4141414141414141L);
            assertEquals(0, a.post(Opcode.RDMA_WRITE, 0, 8, b.mr.address(), b.mr.rkey()));
            assertEquals(WcStatus.REM_ACCESS_ERR, a.status(), "the link is not followed");
            assertArrayEquals(PRECIOUS, Files.readAllBytes(v), "nothing written through it");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mlx5", "efa"})
    void reclaimingAJobNeverDeletesTheFilesOfAJobWhoseNameItPrefixes(String personality) throws Exception {
        String job = job("a");
        try (CrossProcessTest.Local prod = new CrossProcessTest.Local(personality, job + "-prod");
             CrossProcessTest.Child dead = new CrossProcessTest.Child(personality, job)) {
            Path prodFile = Path.of(prod.dev.sharedFilePrefix() + "0");
            Path deadSeg = CrossProcessTest.segmentOf(dead.filePrefix);
            assertTrue(Files.exists(prodFile) && Files.exists(deadSeg));
            dead.process.destroyForcibly(); // SIGKILL: job a is abandoned
            dead.process.waitFor();
            try (CrossProcessTest.Local other = new CrossProcessTest.Local(personality, job("other"))) {
                assertFalse(Files.exists(deadSeg), "the abandoned job is reclaimed");
                assertEquals(0, CrossProcessTest.count(dead.filePrefix), "with its files");
                assertTrue(Files.exists(prodFile), "the live job a-prod keeps its memory");
            }
            if (personality.equals("mlx5")) {
                assertLives(prod, job + "-prod");
            }
        }
    }

    @Test
    void aPlantedSegmentWithTheMagicDeletesNothingOfALiveJob() throws Exception {
        String job = job("planted");
        try (CrossProcessTest.Local prod = new CrossProcessTest.Local("mlx5", job + "-prod")) {
            Path prodFile = Path.of(prod.dev.sharedFilePrefix() + "0");
            Path planted = segment(job);
            try (FileChannel ch = FileChannel.open(planted, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                ByteBuffer h = ByteBuffer.allocate(32).order(ByteOrder.nativeOrder());
                h.putLong(FabricLayout.MAGIC).putInt(FabricLayout.VERSION).putInt(FabricLayout.MAX_PROCS)
                        .putInt(FabricLayout.RING_CAPACITY).putInt(FabricLayout.QP_SLOTS).putInt(FabricLayout.MR_SLOTS);
                ch.write(h.flip(), 0);
                ch.write(ByteBuffer.wrap(new byte[1]), FabricLayout.FILE_BYTES - 1);
            }
            Files.setPosixFilePermissions(planted, PosixFilePermissions.fromString("rw-------"));
            try (CrossProcessTest.Local other = new CrossProcessTest.Local("mlx5", job("other"))) {
                assertTrue(Files.exists(prodFile), "the live job keeps its memory");
            } finally {
                Files.deleteIfExists(planted);
            }
            assertLives(prod, job + "-prod");
        }
    }

    /** A job still works: another process-side of it writes into its memory. */
    private static void assertLives(CrossProcessTest.Local l, String job) {
        try (SimFabricTest.Side s = new SimFabricTest.Side(SimDevice.mlx5(job).retryTimeoutMillis(300));
             SendWorkRequests w = new SendWorkRequests(1, 1)) {
            l.qp.init(Access.ALL_RDMA);
            s.qp.connect(l.qp.address(), Access.ALL_RDMA, 7);
            l.qp.readyToReceive(s.qp.address());
            l.qp.readyToSend(7, 7);
            s.mem.set(JAVA_LONG_UNALIGNED, 0, 0x5151515151515151L);
            int i = w.add(1, Opcode.RDMA_WRITE, SendFlags.SIGNALED);
            w.sge(i, s.mr, 0, 8);
            w.rdma(i, l.mr.address() + 64, l.mr.rkey());
            assertEquals(0, s.qp.postSend(w));
            assertEquals(WcStatus.SUCCESS, s.status());
            assertEquals(0x5151515151515151L, l.mem.get(JAVA_LONG_UNALIGNED, 64));
        }
    }

    @Test
    void theUsersDirectorySkipsNamesOthersTookFirst(@TempDir Path parent) throws IOException {
        int uid = Fabric.currentUid();
        Path elsewhere = Files.createDirectory(parent.resolve("elsewhere"));
        Files.createSymbolicLink(parent.resolve("scalep-" + uid), elsewhere);
        Files.write(parent.resolve("scalep-" + uid + ".1"), PRECIOUS);
        Path d = ShmFile.userDir("sim:mlx5", parent, uid);
        assertEquals(parent.resolve("scalep-" + uid + ".2"), d);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(d)));
        assertEquals(d, ShmFile.userDir("sim:mlx5", parent, uid), "every process of the user picks the same one");
        try (var ls = Files.list(elsewhere)) {
            assertEquals(0, ls.count(), "nothing created through the link");
        }
        for (int i = 2; i < ShmFile.DIR_CANDIDATES; i++) {
            Path c = parent.resolve("scalep-" + uid + "." + i);
            Files.deleteIfExists(c);
            Files.createSymbolicLink(c, elsewhere);
        }
        VerbsException e = assertThrows(VerbsException.class, () -> ShmFile.userDir("sim:mlx5", parent, uid));
        assertTrue(e.getMessage().contains("scalep.sim.shmDir") && !e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void anAllocationNameTakenByALinkFailsTheAllocationOnly(@TempDir Path tmp) throws IOException {
        String job = job("alloclink");
        Path v = victim(tmp);
        SimDevice d = SimDevice.mlx5(job).retryTimeoutMillis(300);
        try (SimFabricTest.Side s = new SimFabricTest.Side(d)) {
            Path next = Path.of(d.sharedFilePrefix() + "1");
            Files.createSymbolicLink(next, v);
            VerbsException e = assertThrows(VerbsException.class, () -> s.pd.allocate(4096, 4096));
            assertTrue(e.getMessage().contains(next.toString()), e.getMessage());
            assertArrayEquals(PRECIOUS, Files.readAllBytes(v));
            MemorySegment m = s.pd.allocate(4096, 4096); // the next number is free
            assertEquals(4096, m.byteSize());
            Files.delete(next);
        }
    }
}
