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
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.scalep.verbs.sim.FabricLayout.AREAS;
import static dev.scalep.verbs.sim.FabricLayout.AREA_BYTES;
import static dev.scalep.verbs.sim.FabricLayout.FILE_BYTES;
import static dev.scalep.verbs.sim.FabricLayout.MAGIC;
import static dev.scalep.verbs.sim.FabricLayout.MAX_PROCS;
import static dev.scalep.verbs.sim.FabricLayout.MR_SLOTS;
import static dev.scalep.verbs.sim.FabricLayout.PROC_EPOCH;
import static dev.scalep.verbs.sim.FabricLayout.PROC_LEASE;
import static dev.scalep.verbs.sim.FabricLayout.PROC_OWNER;
import static dev.scalep.verbs.sim.FabricLayout.PROC_PIDNS;
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
 * <p>Files live in the user's private directory ({@link ShmFile#userDir}, mode 0700): the segment
 * {@code <tag>-<job>} and each PD allocation {@code <tag>-<job>@p<slot>e<epoch>m<n>}; '@' never
 * occurs in a (sanitized) job name, so a job's files are named exactly, never by a prefix another
 * job shares. Every file is opened without following links and checked on the opened descriptor
 * ({@link ShmFile#open}) before it is grown, mapped or written.
 *
 * <p>Joining takes an exclusive file lock (and a JVM-wide monitor, since two devices of one JVM may
 * join the same fabric), reclaims the entries of processes that died, then claims a free entry with
 * a CAS on the owner word. A process is alive while its pid and start time say so when it shares
 * this process's pid namespace, and otherwise while it renews its lease ({@link #LEASE_MILLIS}):
 * pids of another namespace mean nothing here. Leaving clears this process's directories and entry
 * and deletes the file when no live process remains; a shutdown hook does the same (without
 * unmapping) when the JVM exits on SIGTERM or SIGINT.
 */
final class Fabric {
    static final String DIR = System.getProperty("scalep.sim.shmDir", "/dev/shm");
    /** A process of another pid namespace is dead once its lease is this old (ms). */
    static final long LEASE_MILLIS = Long.getLong("scalep.sim.leaseMillis", 10_000L);
    /** This process's pid namespace (inode), or 0 when /proc here does not show this process's pids. */
    static final long PID_NS = pidNamespace();
    private static final Pattern SEGMENT = Pattern.compile("(mlx5|efa)-[A-Za-z0-9._-]{1,64}");
    private static final Pattern FILE = Pattern.compile("@p([0-9]{1,2})e(-?[0-9]{1,10})m([0-9]{1,5})");
    private static final Set<Fabric> JOINED = ConcurrentHashMap.newKeySet();
    private static volatile boolean hooked;

    final String deviceName;
    final Path path;
    /** The directory of the user's shared-memory files. */
    final Path dir;
    /** Name of the segment file; every shared-memory file of this fabric is {@code base@p<slot>e<epoch>m<n>}. */
    final String base;
    final int uid;
    final int slot;
    final int epoch;
    final long owner;
    final UnsafeBuffer buffer;
    final MemorySegment segment;
    private final Arena arena;
    private final FileChannel channel;
    private final Object fileKey;
    private final ManyToOneRingBuffer[] rings = new ManyToOneRingBuffer[MAX_PROCS];
    private final long[] deadOwner = new long[MAX_PROCS];
    private volatile boolean closed;

    private Fabric(String deviceName, Path path, String base, int uid, FileChannel channel, Object fileKey,
                   Arena arena, MemorySegment segment, int slot, int epoch, long owner) {
        this.fileKey = fileKey;
        this.deviceName = deviceName;
        this.path = path;
        this.dir = path.getParent();
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

    /** The user's private directory for the simulated NIC's files (created 0700 when missing). */
    static Path userDir(String deviceName) {
        return ShmFile.userDir(deviceName, Path.of(DIR), currentUid());
    }

    /** The segment file of a device tag and job, in the user's private directory. */
    static Path segmentPath(String deviceName, String tag, String job) {
        return userDir(deviceName).resolve(tag + "-" + sanitize(job));
    }

    /** The name of allocation {@code fileNo} of process entry {@code p} in incarnation {@code epoch}. */
    static String fileName(String base, int p, int epoch, int fileNo) {
        return base + "@p" + p + "e" + epoch + "m" + fileNo;
    }

    /** Join (creating if needed) the fabric of this user, device tag and job. */
    static Fabric join(String deviceName, String tag, String job) {
        int uid = currentUid();
        Path path = segmentPath(deviceName, tag, job);
        String base = path.getFileName().toString();
        long me = selfOwner();
        synchronized (Fabric.class) {
            for (int attempt = 0; ; attempt++) {
                FileChannel ch = null;
                try {
                    ShmFile.Opened o = ShmFile.open(path, true, false, uid);
                    ch = o.channel();
                    FileLock lock = ch.lock();
                    if (!o.fileKey().equals(ShmFile.keyAt(path))) {
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
                        long size = ch.size(); // under the lock: a creator grows and initializes it under it
                        if (size != 0 && size != FILE_BYTES) {
                            throw foreign(deviceName, path, "has " + size + " bytes, not the " + FILE_BYTES
                                    + " of a version " + VERSION + " fabric segment");
                        }
                        if (size == 0) {
                            ch.write(ByteBuffer.wrap(new byte[1]), FILE_BYTES - 1);
                        }
                        Arena arena = Arena.ofShared();
                        MemorySegment seg = SharedMemory.plain(ch.map(FileChannel.MapMode.READ_WRITE, 0, FILE_BYTES, arena), arena);
                        UnsafeBuffer buf = new UnsafeBuffer(seg.address(), (int) FILE_BYTES);
                        try {
                            checkHeader(deviceName, path, buf);
                            reclaimDead(buf, path.getParent(), base, -1);
                            removeAbandoned(uid, path);
                            int slot = claim(buf, me);
                            if (slot < 0) {
                                throw fail(deviceName, Errno.ENOSPC, "fabric " + path + " has all "
                                        + (MAX_PROCS - 1) + " process entries in use by live processes");
                            }
                            int epoch = buf.getInt(procEntry(slot) + PROC_EPOCH) + 1;
                            buf.putIntVolatile(procEntry(slot) + PROC_EPOCH, epoch);
                            Fabric f = new Fabric(deviceName, path, base, uid, ch, o.fileKey(), arena, seg, slot, epoch, me);
                            hookExit();
                            JOINED.add(f);
                            return f;
                        } catch (RuntimeException e) {
                            arena.close();
                            throw e;
                        }
                    }
                } catch (ShmFile.Refused e) {
                    closeQuietly(ch);
                    throw foreign(deviceName, path, e);
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

    /** A file at the segment's name that is not this user's fabric segment: name it and the way out. */
    static VerbsException foreign(String dev, Path p, ShmFile.Refused why) {
        return fail(dev, why.errno, why.getMessage() + "; not used. Remove it, or choose another job name with "
                + "SCALEP_JOB=<name> (or -Dscalep.job)");
    }

    static VerbsException foreign(String dev, Path p, String why) {
        return fail(dev, Errno.EACCES, p + " " + why + "; not used. Remove it, or choose another job name with "
                + "SCALEP_JOB=<name> (or -Dscalep.job)");
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
            throw foreign(dev, p, "is not a version " + VERSION
                    + " fabric segment (corrupt, or written by another scalep version)");
        }
    }

    private static int claim(UnsafeBuffer b, long me) {
        for (int p = 1; p < MAX_PROCS; p++) {
            int e = procEntry(p);
            if (b.getLongVolatile(e + PROC_OWNER) != 0) {
                continue;
            }
            // The namespace and the lease go in before the owner too: a liveness sweep or a reclaim in
            // another process that read the new owner with the fields of no owner (namespace 0, lease 0)
            // judged the joining process dead (a peer gone for good: RETRY_EXC_ERR on every request).
            b.putLong(e + PROC_PIDNS, PID_NS);
            b.putLongVolatile(e + PROC_LEASE, nowMillis());
            if (b.compareAndSetLong(e + PROC_OWNER, 0, me)) {
                b.putLong(e + PROC_PIDNS, PID_NS); // again: a process that lost the race may have written its own
                b.putLongVolatile(e + PROC_LEASE, nowMillis());
                b.setMemory(area(p) + QP_DIR, AREA_BYTES - QP_DIR, (byte) 0);
                b.setMemory(area(p), RING_BYTES, (byte) 0);
                return p;
            }
        }
        return -1;
    }

    /** Free the entries of processes that are gone (but never {@code keep}): zero their areas, delete their files. */
    private static void reclaimDead(UnsafeBuffer b, Path dir, String base, int keep) {
        for (int p = 1; p < MAX_PROCS; p++) {
            int e = procEntry(p);
            long o = b.getLongVolatile(e + PROC_OWNER);
            if (p != keep && o != 0 && !alive(o, b.getLong(e + PROC_PIDNS), b.getLongVolatile(e + PROC_LEASE))
                    && b.compareAndSetLong(e + PROC_OWNER, o, 0)) {
                b.setMemory(area(p) + QP_DIR, AREA_BYTES - QP_DIR, (byte) 0);
                deleteFiles(dir, base, p, b.getIntVolatile(e + PROC_EPOCH));
            }
        }
    }

    /**
     * Delete the other fabrics of this user in which no process lives any more (every owner gone),
     * with their shared files: what processes that were killed left under job names no one opens
     * again. A fabric being joined or left (file locked) is skipped; so is anything that is not
     * exactly a segment's name.
     */
    private static void removeAbandoned(int uid, Path mine) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(mine.getParent())) {
            for (Path f : ds) {
                String n = f.getFileName().toString();
                if (!f.equals(mine) && SEGMENT.matcher(n).matches()) {
                    removeIfAbandoned(f, n, uid);
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // best effort
        }
    }

    /**
     * Delete f (and its shared files) when it is a fabric segment of this user (checked on the
     * opened descriptor, links refused) whose process table names no live process; under f's lock,
     * so a process joining it meanwhile opens a fresh one.
     */
    private static void removeIfAbandoned(Path f, String name, int uid) {
        ShmFile.Opened o;
        try {
            o = ShmFile.open(f, false, false, uid);
        } catch (ShmFile.Refused | IOException | RuntimeException e) {
            return; // not ours to judge: leave it
        }
        try (FileChannel ch = o.channel(); FileLock lock = ch.tryLock()) {
            if (lock == null || ch.size() != FILE_BYTES || !o.fileKey().equals(ShmFile.keyAt(f))) {
                return;
            }
            ByteBuffer b = ByteBuffer.allocate(AREAS).order(ByteOrder.nativeOrder());
            while (b.hasRemaining() && ch.read(b, b.position()) > 0) {
                // read the header and the process table
            }
            if (b.hasRemaining() || b.getLong(0) != MAGIC || b.getInt(8) != VERSION) {
                return;
            }
            for (int p = 1; p < MAX_PROCS; p++) {
                int e = procEntry(p);
                long ow = b.getLong(e + PROC_OWNER);
                if (ow != 0 && alive(ow, b.getLong(e + PROC_PIDNS), b.getLong(e + PROC_LEASE))) {
                    return;
                }
            }
            deleteFiles(f.getParent(), name, -1, 0);
            Files.deleteIfExists(f);
        } catch (IOException | RuntimeException e) {
            // not ours to judge: leave it
        }
    }

    /**
     * Delete the shared files of fabric {@code base} in {@code dir}: those of process entry {@code p}
     * in incarnation {@code epoch}, or all of them when p is -1. Names are matched exactly.
     */
    static void deleteFiles(Path dir, String base, int p, int epoch) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path f : ds) {
                String n = f.getFileName().toString();
                if (n.length() > base.length() && n.startsWith(base) && n.charAt(base.length()) == '@') {
                    Matcher m = FILE.matcher(n).region(base.length(), n.length());
                    if (m.matches() && (p < 0 || Integer.parseInt(m.group(1)) == p
                            && Integer.parseInt(m.group(2)) == epoch)) {
                        Files.deleteIfExists(f);
                    }
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // best effort: what remains is reclaimed at the next open
        }
    }

    /** This process as an owner word: pid in the high half, low 32 bits of its start time below. */
    static long selfOwner() {
        long pid = ProcessHandle.current().pid();
        return pid << 32 | (statField(Path.of("/proc/self/stat"), 19) & 0xffffffffL);
    }

    /** CLOCK_MONOTONIC in milliseconds (one clock for every pid namespace of the machine). */
    static long nowMillis() {
        return System.nanoTime() / 1_000_000L;
    }

    /**
     * The inode of this process's pid namespace, or 0 when this process's pids cannot be checked in
     * the /proc it sees (a pid namespace entered without mounting its own /proc).
     */
    static long pidNamespace() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            if (Long.parseLong(stat.substring(0, stat.indexOf(' '))) != ProcessHandle.current().pid()) {
                return 0;
            }
            String link = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString(); // pid:[4026531836]
            return Long.parseLong(link.substring(link.indexOf('[') + 1, link.indexOf(']')));
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Field {@code k} after the command of a /proc stat file (19: start time in ticks), or -1 when absent. */
    private static long statField(Path stat, int k) {
        try {
            String s = Files.readString(stat);
            int close = s.lastIndexOf(')');
            String[] f = s.substring(close + 2).split(" ");
            return Long.parseLong(f[k]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Field 22 of /proc/pid/stat (clock ticks since boot), or -1 when the process does not exist. */
    static long startTime(long pid) {
        return statField(Path.of("/proc", Long.toString(pid), "stat"), 19);
    }

    /**
     * Whether the owner of a process entry still runs: in this pid namespace (and a /proc that shows
     * it), the same pid with the same start time; in another one, a lease renewed within
     * {@link #LEASE_MILLIS}.
     */
    static boolean alive(long owner, long pidNs, long lease) {
        if (owner == 0) {
            return false;
        }
        if (pidNs != 0 && pidNs == PID_NS) {
            long pid = owner >>> 32;
            if (pid <= 0) {
                return false;
            }
            long st = startTime(pid);
            return st >= 0 && (st & 0xffffffffL) == (owner & 0xffffffffL);
        }
        long age = nowMillis() - lease;
        return age < LEASE_MILLIS && age > -LEASE_MILLIS;
    }

    /** Whether the owner of entry p (as this segment shows it now) still runs. */
    private boolean entryAlive(int p) {
        int e = procEntry(p);
        return alive(buffer.getLongVolatile(e + PROC_OWNER), buffer.getLong(e + PROC_PIDNS),
                buffer.getLongVolatile(e + PROC_LEASE));
    }

    /** One shutdown hook per JVM: on exit (SIGTERM, SIGINT, System.exit) every joined fabric is released. */
    private static void hookExit() {
        if (!hooked) {
            hooked = true;
            try {
                Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("scalep-fabric-exit").unstarted(() -> {
                    for (Fabric f : JOINED) {
                        f.releaseAtExit();
                    }
                }));
            } catch (IllegalStateException alreadyExiting) {
                // the JVM is exiting: nothing to add
            }
        }
    }

    /** The inbound ring of process p (1..MAX_PROCS-1). */
    ManyToOneRingBuffer ring(int p) {
        return rings[p];
    }

    ManyToOneRingBuffer ownRing() {
        return rings[slot];
    }

    /**
     * Process p's lease: the CLOCK_MONOTONIC milliseconds of its agent's last liveness sweep (every
     * 50 ms while it runs); p is range-checked by the caller.
     */
    long leaseOf(int p) {
        return buffer.getLongVolatile(procEntry(p) + PROC_LEASE);
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

    /** Liveness sweep (agent thread): renew this process's lease, mark the peers that are gone. */
    void sweepLiveness() {
        buffer.putLongOrdered(procEntry(slot) + PROC_LEASE, nowMillis());
        for (int p = 1; p < MAX_PROCS; p++) {
            if (p == slot) {
                continue;
            }
            sweepEntry(p, ownerOf(p));
        }
    }

    /**
     * Judge entry p's owner {@code o} as the sweep read it: mark it dead (gone for good) when that
     * process no longer runs. The judgment is of {@code o} itself, never of the owner word read
     * again: a peer that leaves between the two reads shows owner 0, which is no process, and its
     * owner would be marked dead although it runs; when it joins again (same pid, same start time:
     * the same owner word) every request to it would fail with RETRY_EXC_ERR. The kernels' warm-up
     * passes leave and join again once per pass, and one such race failed a two-rank stencil.
     */
    void sweepEntry(int p, long o) {
        int e = procEntry(p);
        if (o != 0 && deadOwner[p] != o
                && !alive(o, buffer.getLong(e + PROC_PIDNS), buffer.getLongVolatile(e + PROC_LEASE))) {
            deadOwner[p] = o;
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
            JOINED.remove(this);
            try (FileLock lock = channel.lock()) {
                buffer.setMemory(area(slot) + QP_DIR, AREA_BYTES - QP_DIR, (byte) 0);
                release();
            } catch (IOException ignored) {
                // the segment stays; the next open reclaims it
            } finally {
                arena.close();
                closeQuietly(channel);
            }
        }
    }

    /** Under the file lock: free this entry, delete this process's files and, when no one lives, the segment. */
    private void release() throws IOException {
        buffer.compareAndSetLong(procEntry(slot) + PROC_OWNER, owner, 0);
        deleteFiles(dir, base, slot, epoch);
        reclaimDead(buffer, dir, base, slot);
        boolean anyone = false;
        for (int p = 1; p < MAX_PROCS && !anyone; p++) {
            anyone = p != slot && entryAlive(p);
        }
        if (!anyone && fileKey.equals(ShmFile.keyAt(path))) { // not a successor's file
            Files.deleteIfExists(path);
        }
    }

    /**
     * The JVM exits (shutdown hook): release the entry and delete the files as {@link #leave} does,
     * but leave the mapping alone (other threads may still touch it until the JVM halts). The lock
     * is tried for a bounded time; without it the next open reclaims the entry.
     */
    void releaseAtExit() {
        if (closed) {
            return;
        }
        long deadline = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() - deadline < 0) {
            try (FileLock lock = channel.tryLock()) {
                if (lock != null) {
                    if (!closed) {
                        release();
                    }
                    return;
                }
            } catch (OverlappingFileLockException busy) {
                // a thread of this JVM holds it (joining or leaving): try again
            } catch (IOException | RuntimeException e) {
                return;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    @Override
    public String toString() {
        return path + " (process entry " + slot + ", epoch " + epoch + ")";
    }
}
