package dev.scalep.verbs.sim;

import dev.scalep.verbs.Errno;
import dev.scalep.verbs.VerbsException;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

import static dev.scalep.verbs.sim.FabricLayout.AREAS;
import static dev.scalep.verbs.sim.FabricLayout.AREA_BYTES;
import static dev.scalep.verbs.sim.FabricLayout.FILE_BYTES;
import static dev.scalep.verbs.sim.FabricLayout.MAGIC;
import static dev.scalep.verbs.sim.FabricLayout.MAX_PROCS;
import static dev.scalep.verbs.sim.FabricLayout.MR_SLOTS;
import static dev.scalep.verbs.sim.FabricLayout.PROC_EPOCH;
import static dev.scalep.verbs.sim.FabricLayout.PROC_OWNER;
import static dev.scalep.verbs.sim.FabricLayout.QP_DIR;
import static dev.scalep.verbs.sim.FabricLayout.QP_SLOTS;
import static dev.scalep.verbs.sim.FabricLayout.RING_BYTES;
import static dev.scalep.verbs.sim.FabricLayout.RING_CAPACITY;
import static dev.scalep.verbs.sim.FabricLayout.VERSION;
import static dev.scalep.verbs.sim.FabricLayout.area;
import static dev.scalep.verbs.sim.FabricLayout.procEntry;

/**
 * One process's membership in a fabric segment ({@link FabricLayout}): the mapped file, this
 * process's entry in the process table, every process's inbound ring, and the lifecycle rules.
 *
 * <p>Joining takes an exclusive file lock (and a JVM-wide monitor, since two devices of one JVM may
 * join the same fabric), checks that the file is the caller's and mode 0600, reclaims the entries of
 * processes that died (owner pid gone or started at another time; their areas are zeroed and their
 * shared memory files deleted), then claims a free entry with a CAS on the owner word. Leaving
 * clears this process's directories and entry and deletes the file when no live process remains.
 */
final class Fabric {
    static final String DIR = System.getProperty("scalep.sim.shmDir", "/dev/shm");
    private static final Set<PosixFilePermission> OWNER_RW =
            EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);

    final String deviceName;
    final Path path;
    /** Prefix of every shared-memory file of this fabric (allocations: {@code base-p<slot>e<epoch>-m<n>}). */
    final String base;
    final int uid;
    final int slot;
    final int epoch;
    final long owner;
    final UnsafeBuffer buffer;
    final MemorySegment segment;
    private final Arena arena;
    private final FileChannel channel;
    private final ManyToOneRingBuffer[] rings = new ManyToOneRingBuffer[MAX_PROCS];
    private final long[] deadOwner = new long[MAX_PROCS];
    private volatile boolean closed;

    private Fabric(String deviceName, Path path, String base, int uid, FileChannel channel, Arena arena,
                   MemorySegment segment, int slot, int epoch, long owner) {
        this.deviceName = deviceName;
        this.path = path;
        this.base = base;
        this.uid = uid;
        this.channel = channel;
        this.arena = arena;
        this.segment = segment;
        this.buffer = new UnsafeBuffer(segment.address(), (int) segment.byteSize());
        this.slot = slot;
        this.epoch = epoch;
        this.owner = owner;
        for (int p = 1; p < MAX_PROCS; p++) {
            rings[p] = new ManyToOneRingBuffer(new UnsafeBuffer(segment.address() + area(p), RING_BYTES));
        }
    }

    /** The job name: {@code scalep.job}, {@code SCALEP_JOB}, the PMIx namespace, else {@code default}. */
    static String defaultJob() {
        String j = System.getProperty("scalep.job");
        if (j == null || j.isEmpty()) {
            j = System.getenv("SCALEP_JOB");
        }
        if (j == null || j.isEmpty()) {
            j = System.getenv("PMIX_NAMESPACE");
        }
        return j == null || j.isEmpty() ? "default" : j;
    }

    /** A job name made safe for a file name (letters, digits, '.', '_', '-'; at most 64 chars). */
    static String sanitize(String job) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < job.length() && b.length() < 64; i++) {
            char c = job.charAt(i);
            b.append(Character.isLetterOrDigit(c) && c < 128 || c == '.' || c == '_' || c == '-' ? c : '_');
        }
        return b.isEmpty() ? "default" : b.toString();
    }

    static int currentUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException e) {
            return 0;
        }
    }

    /** Join (creating if needed) the fabric of this user, device tag and job. */
    static Fabric join(String deviceName, String tag, String job) {
        int uid = currentUid();
        String base = "scalep-" + uid + "-" + tag + "-" + sanitize(job);
        Path path = Path.of(DIR, base);
        long me = selfOwner();
        synchronized (Fabric.class) {
            for (int attempt = 0; ; attempt++) {
                FileChannel ch = null;
                try {
                    ch = FileChannel.open(path, Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ,
                            StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(OWNER_RW));
                    Object key = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
                    FileLock lock = ch.lock();
                    if (!Files.exists(path) || !key.equals(Files.readAttributes(path,
                            BasicFileAttributes.class).fileKey())) {
                        // Unlinked by a leaving process between open and lock: open again. The lock is
                        // released before its channel closes (releasing it after throws ClosedChannelException).
                        lock.release();
                        ch.close();
                        if (attempt > 100) {
                            throw fail(deviceName, Errno.EAGAIN, path + " keeps being replaced");
                        }
                        continue;
                    }
                    try (lock) {
                        checkOwner(deviceName, path, uid);
                        if (ch.size() < FILE_BYTES) {
                            ch.write(ByteBuffer.wrap(new byte[1]), FILE_BYTES - 1);
                        }
                        Arena arena = Arena.ofShared();
                        MemorySegment seg = ch.map(FileChannel.MapMode.READ_WRITE, 0, FILE_BYTES, arena);
                        UnsafeBuffer buf = new UnsafeBuffer(seg.address(), (int) FILE_BYTES);
                        try {
                            checkHeader(deviceName, path, buf);
                            reclaimDead(buf, base);
                            removeAbandoned(uid, path);
                            int slot = claim(buf, me);
                            if (slot < 0) {
                                throw fail(deviceName, Errno.ENOSPC, "fabric " + path + " has all "
                                        + (MAX_PROCS - 1) + " process entries in use by live processes");
                            }
                            int epoch = buf.getInt(procEntry(slot) + PROC_EPOCH) + 1;
                            buf.putIntVolatile(procEntry(slot) + PROC_EPOCH, epoch);
                            return new Fabric(deviceName, path, base, uid, ch, arena, seg, slot, epoch, me);
                        } catch (RuntimeException e) {
                            arena.close();
                            throw e;
                        }
                    }
                } catch (NoSuchFileException e) {
                    // Unlinked by the last process leaving between our open and a look at the path: the
                    // next open creates a fresh file.
                    closeQuietly(ch);
                    if (attempt > 100) {
                        throw fail(deviceName, Errno.EAGAIN, path + " keeps being removed: " + e);
                    }
                } catch (IOException e) {
                    closeQuietly(ch);
                    throw fail(deviceName, Errno.EIO, "cannot open fabric segment " + path + ": " + e);
                } catch (RuntimeException e) {
                    closeQuietly(ch);
                    throw e;
                }
            }
        }
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // nothing to do
            }
        }
    }

    static VerbsException fail(String dev, int errno, String why) {
        return new VerbsException("ibv_open_device", errno, dev, why);
    }

    /** The file must belong to this user and be readable and writable by it alone. */
    static void checkOwner(String dev, Path p, int uid) throws IOException {
        int fileUid = (Integer) Files.getAttribute(p, "unix:uid");
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
        if (fileUid != uid || !perms.equals(OWNER_RW)) {
            throw fail(dev, Errno.EACCES, p + " is owned by uid " + fileUid + " with mode "
                    + PosixFilePermissions.toString(perms) + "; a fabric segment must be uid " + uid + "'s, rw-------");
        }
    }

    private static void checkHeader(String dev, Path p, UnsafeBuffer b) {
        if (b.compareAndSetLong(0, 0, MAGIC)) {
            b.putInt(8, VERSION);
            b.putInt(12, MAX_PROCS);
            b.putInt(16, RING_CAPACITY);
            b.putInt(20, QP_SLOTS);
            b.putInt(24, MR_SLOTS);
            return;
        }
        if (b.getLongVolatile(0) != MAGIC || b.getInt(8) != VERSION || b.getInt(12) != MAX_PROCS
                || b.getInt(16) != RING_CAPACITY || b.getInt(20) != QP_SLOTS || b.getInt(24) != MR_SLOTS) {
            throw fail(dev, Errno.EIO, p + " is not a version " + VERSION
                    + " fabric segment (corrupt, or written by another scalep version); remove it");
        }
    }

    private static int claim(UnsafeBuffer b, long me) {
        for (int p = 1; p < MAX_PROCS; p++) {
            int e = procEntry(p);
            if (b.getLongVolatile(e + PROC_OWNER) == 0 && b.compareAndSetLong(e + PROC_OWNER, 0, me)) {
                b.setMemory(area(p) + QP_DIR, AREA_BYTES - QP_DIR, (byte) 0);
                b.setMemory(area(p), RING_BYTES, (byte) 0);
                return p;
            }
        }
        return -1;
    }

    /** Free the entries of processes that are gone: zero their areas, delete their files. */
    private static void reclaimDead(UnsafeBuffer b, String base) {
        for (int p = 1; p < MAX_PROCS; p++) {
            long o = b.getLongVolatile(procEntry(p) + PROC_OWNER);
            if (o != 0 && !alive(o) && b.compareAndSetLong(procEntry(p) + PROC_OWNER, o, 0)) {
                b.setMemory(area(p) + QP_DIR, AREA_BYTES - QP_DIR, (byte) 0);
                deleteFiles(base + "-p" + p + "e");
            }
        }
    }

    /**
     * Delete the other fabrics of this user in which no process lives any more (every owner gone),
     * with their shared files: what processes that were killed left under job names no one opens
     * again. A fabric being joined or left (file locked) is skipped.
     */
    private static void removeAbandoned(int uid, Path mine) {
        String prefix = "scalep-" + uid + "-";
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of(DIR), prefix + "*")) {
            for (Path f : ds) {
                String n = f.getFileName().toString();
                if (!f.equals(mine) && !n.matches(".*-p[0-9]+e[0-9]+-m[0-9]+")) {
                    removeIfAbandoned(f, n);
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // best effort
        }
    }

    /**
     * Delete f (and its shared files) when it is a fabric segment (our magic) whose process table
     * names no live process; under f's lock, so a process joining it meanwhile opens a fresh one.
     */
    private static void removeIfAbandoned(Path f, String name) {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE);
             FileLock lock = ch.tryLock()) {
            if (lock == null || ch.size() < AREAS) {
                return;
            }
            ByteBuffer b = ByteBuffer.allocate(AREAS).order(ByteOrder.nativeOrder());
            while (b.hasRemaining() && ch.read(b, b.position()) > 0) {
                // read the header and the process table
            }
            if (b.hasRemaining() || b.getLong(0) != MAGIC) {
                return;
            }
            for (int p = 1; p < MAX_PROCS; p++) {
                long o = b.getLong(procEntry(p) + PROC_OWNER);
                if (o != 0 && alive(o)) {
                    return;
                }
            }
            deleteFiles(name + "-p");
            Files.deleteIfExists(f);
        } catch (IOException | RuntimeException e) {
            // not ours to judge: leave it
        }
    }

    static void deleteFiles(String prefix) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of(DIR), prefix + "*")) {
            for (Path f : ds) {
                Files.deleteIfExists(f);
            }
        } catch (IOException ignored) {
            // best effort: what remains is reclaimed at the next open
        }
    }

    /** This process as an owner word: pid in the high half, low 32 bits of its start time below. */
    static long selfOwner() {
        long pid = ProcessHandle.current().pid();
        return pid << 32 | (startTime(pid) & 0xffffffffL);
    }

    /** Field 22 of /proc/pid/stat (clock ticks since boot), or -1 when the process does not exist. */
    static long startTime(long pid) {
        try {
            String s = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            int close = s.lastIndexOf(')');
            String[] f = s.substring(close + 2).split(" ");
            return Long.parseLong(f[19]);
        } catch (NoSuchFileException e) {
            return -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Whether the process named by an owner word still runs (same pid, same start time). */
    static boolean alive(long owner) {
        long pid = owner >>> 32;
        if (pid <= 0) {
            return false;
        }
        long st = startTime(pid);
        return st >= 0 && (st & 0xffffffffL) == (owner & 0xffffffffL);
    }

    /** The inbound ring of process p (1..MAX_PROCS-1). */
    ManyToOneRingBuffer ring(int p) {
        return rings[p];
    }

    ManyToOneRingBuffer ownRing() {
        return rings[slot];
    }

    /** Owner word of process p (0 = free); p is range-checked by the caller. */
    long ownerOf(int p) {
        return buffer.getLongVolatile(procEntry(p) + PROC_OWNER);
    }

    int epochOf(int p) {
        return buffer.getIntVolatile(procEntry(p) + PROC_EPOCH);
    }

    /** Whether process p is known dead or gone (liveness sweep result, or entry freed/reclaimed). */
    boolean peerGone(int p) {
        long o = ownerOf(p);
        return o == 0 || deadOwner[p] == o;
    }

    /** Liveness sweep (agent thread): mark the peers whose process no longer runs. */
    void sweepLiveness() {
        for (int p = 1; p < MAX_PROCS; p++) {
            if (p == slot) {
                continue;
            }
            long o = ownerOf(p);
            if (o != 0 && deadOwner[p] != o && o != owner && !alive(o)) {
                deadOwner[p] = o;
            }
        }
    }

    boolean isClosed() {
        return closed;
    }

    /** Leave: clear this process's directories and entry; delete the file when no live process remains. */
    void leave() {
        synchronized (Fabric.class) {
            if (closed) {
                return;
            }
            closed = true;
            try (FileLock lock = channel.lock()) {
                buffer.setMemory(area(slot) + QP_DIR, AREA_BYTES - QP_DIR, (byte) 0);
                buffer.compareAndSetLong(procEntry(slot) + PROC_OWNER, owner, 0);
                deleteFiles(base + "-p" + slot + "e");
                reclaimDead(buffer, base);
                boolean anyone = false;
                for (int p = 1; p < MAX_PROCS && !anyone; p++) {
                    long o = ownerOf(p);
                    anyone = o != 0 && alive(o);
                }
                if (!anyone) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException ignored) {
                // the segment stays; the next open reclaims it
            } finally {
                arena.close();
                closeQuietly(channel);
            }
        }
    }

    @Override
    public String toString() {
        return path + " (process entry " + slot + ", epoch " + epoch + ")";
    }
}
