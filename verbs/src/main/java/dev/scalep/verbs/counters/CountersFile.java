package dev.scalep.verbs.counters;

import dev.scalep.verbs.sim.ShmAccess;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One process's counters file, the way Aeron's CnC file carries a media driver's counters: a
 * header (magic, version, capacity, the owner's pid and start time, pid namespace and lease, its
 * rank in the job, the job's name), then Agrona's {@link CountersManager} metadata and values
 * buffers. The file is {@code stat-<job>@<pid>} (or {@code @<pid>.1} .. {@code .7} when a process of
 * another pid namespace holds that name) in the user's private directory beside the simulated
 * NIC's segments, created 0600 with {@code O_CREAT|O_EXCL|O_NOFOLLOW} and checked on the opened
 * descriptor ({@link ShmAccess#open}); names are matched whole, never by prefix. {@link #close}
 * deletes it (when the file at its name is still the one it created); a file whose process died is
 * deleted by the next process that creates one ({@link #reclaim}), judged alive by the fabric's rule
 * (pid and start time in the same pid namespace, else a lease renewed every second).
 */
public final class CountersFile implements AutoCloseable {
    /** "SCALEPST" in the first eight bytes. */
    static final long MAGIC = 0x5453504c4143534cL;
    static final int VERSION = 1;
    static final int HEADER = 256;
    static final int OFF_MAGIC = 0;
    static final int OFF_VERSION = 8;
    static final int OFF_CAPACITY = 12;
    static final int OFF_OWNER = 16;
    static final int OFF_PIDNS = 24;
    static final int OFF_LEASE = 32;
    static final int OFF_RANK = 40;
    static final int OFF_SIZE = 44;
    static final int OFF_STARTED = 48;
    static final int OFF_JOB_LENGTH = 56;
    static final int OFF_JOB = 64;
    static final int MAX_JOB = 64;
    /** Most counters a file may declare (a larger capacity in a header is refused as garbage). */
    static final int MAX_CAPACITY = 1 << 16;
    /** Names of counters files, any job: {@code stat-<job>@<pid>} or {@code stat-<job>@<pid>.<k>}. */
    private static final Pattern NAME = Pattern.compile("stat-([A-Za-z0-9._-]{1,64})@([0-9]{1,10})(\\.[1-7])?");
    private static final int SUFFIXES = 8;

    private final Path path;
    private final Object fileKey;
    private final Arena arena;
    private final UnsafeBuffer header;
    private final CountersManager manager;
    private boolean closed;

    private CountersFile(Path path, Object fileKey, Arena arena, MemorySegment map, int capacity) {
        this.path = path;
        this.fileKey = fileKey;
        this.arena = arena;
        this.header = new UnsafeBuffer(map.address(), HEADER);
        long meta = (long) capacity * CountersReader.METADATA_LENGTH;
        long values = (long) capacity * CountersReader.COUNTER_LENGTH;
        this.manager = new CountersManager(new UnsafeBuffer(map.address() + HEADER, (int) meta),
                new UnsafeBuffer(map.address() + HEADER + meta, (int) values), StandardCharsets.US_ASCII);
    }

    /** File length for {@code capacity} counters. */
    static long bytes(int capacity) {
        return HEADER + (long) capacity * (CountersReader.METADATA_LENGTH + CountersReader.COUNTER_LENGTH);
    }

    /**
     * Create this process's counters file for {@code job} in {@code dir}, first deleting the files
     * of dead processes there (any job). Throws IOException when no name could be taken or the
     * file not be written.
     */
    public static CountersFile create(Path dir, String job, int capacity) throws IOException {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("capacity must be in 1.." + MAX_CAPACITY + ": " + capacity);
        }
        String safe = ShmAccess.sanitize(job);
        reclaim(dir);
        long pid = ProcessHandle.current().pid();
        StringBuilder refused = new StringBuilder();
        for (int k = 0; k < SUFFIXES; k++) {
            Path p = dir.resolve("stat-" + safe + "@" + pid + (k == 0 ? "" : "." + k));
            ShmAccess.Opened o;
            try {
                o = ShmAccess.open(p, true, true);
            } catch (ShmAccess.Refused r) {
                // the name is taken: by a dead process (reclaim it and try the name again) or a live one
                if (removeIfDead(p)) {
                    k--;
                } else {
                    refused.append(refused.isEmpty() ? "" : "; ").append(r.getMessage());
                }
                continue;
            }
            return initialise(p, o, safe, capacity);
        }
        throw new IOException("no counters file name free in " + dir + " (" + refused + ")");
    }

    private static CountersFile initialise(Path p, ShmAccess.Opened o, String job, int capacity) throws IOException {
        long length = bytes(capacity);
        Arena arena = Arena.ofShared();
        try (FileChannel ch = o.channel()) {
            ch.truncate(0);
            ch.write(ByteBuffer.wrap(new byte[1]), length - 1); // grow (tmpfs: sparse until touched)
            MemorySegment map = ch.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
            CountersFile f = new CountersFile(p, o.fileKey(), arena, map, capacity);
            UnsafeBuffer h = f.header;
            h.putInt(OFF_VERSION, VERSION);
            h.putInt(OFF_CAPACITY, capacity);
            h.putLong(OFF_OWNER, ShmAccess.selfOwner());
            h.putLong(OFF_PIDNS, ShmAccess.pidNamespace());
            h.putLong(OFF_LEASE, ShmAccess.nowMillis());
            h.putInt(OFF_RANK, -1);
            h.putInt(OFF_SIZE, -1);
            h.putLong(OFF_STARTED, System.currentTimeMillis());
            byte[] name = job.getBytes(StandardCharsets.US_ASCII);
            int n = Math.min(name.length, MAX_JOB);
            h.putBytes(OFF_JOB, name, 0, n);
            h.putInt(OFF_JOB_LENGTH, n);
            h.putLongVolatile(OFF_MAGIC, MAGIC); // last: a reader that sees the magic sees the header
            return f;
        } catch (IOException | RuntimeException e) {
            arena.close();
            deleteIfSame(p, o.fileKey());
            throw e;
        }
    }

    /** The manager that allocates this file's counters (not thread-safe: its owner serialises calls). */
    public CountersManager manager() {
        return manager;
    }

    public Path path() {
        return path;
    }

    /** Renew the lease that tells processes of other pid namespaces this one is alive. */
    public void renewLease() {
        if (!closed) {
            header.putLongVolatile(OFF_LEASE, ShmAccess.nowMillis());
        }
    }

    /** Record this process's rank in a job of {@code size} ranks (shown by {@code scalep stat}). */
    public void describe(int rank, int size) {
        if (!closed) {
            header.putIntVolatile(OFF_SIZE, size);
            header.putIntVolatile(OFF_RANK, rank);
        }
    }

    /** Delete the file (if the name still holds the file this process created), keeping the mapping. */
    public void delete() {
        deleteIfSame(path, fileKey);
    }

    /** Delete the file and unmap it; every counter of {@link #manager()} must be out of use. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        delete();
        arena.close();
    }

    private static void deleteIfSame(Path p, Object key) {
        try {
            if (key != null && key.equals(ShmAccess.keyAt(p))) {
                Files.deleteIfExists(p);
            }
        } catch (IOException ignored) {
            // the next process's reclaim removes it
        }
    }

    // ------------------------------------------------------------------ readers

    /** One counter as a reader saw it. */
    public record Counter(int id, int typeId, String label, long value) {
        /** The object the counter belongs to (the label up to its first space). */
        public String object() {
            int s = label.indexOf(' ');
            return s < 0 ? label : label.substring(0, s);
        }

        /** The counter's name (the label after its first space). */
        public String name() {
            int s = label.indexOf(' ');
            return s < 0 ? "" : label.substring(s + 1);
        }
    }

    /** A process's counters at one instant: its file, pid, rank and size (-1 unknown), job, liveness, counters. */
    public record Snapshot(Path path, long pid, int rank, int size, String job, boolean alive, long startedMillis,
                           long nanoTime, List<Counter> counters) {
    }

    /** The counters files of {@code job} in {@code dir}, by exact name, sorted by name. */
    public static List<Path> list(Path dir, String job) {
        String safe = ShmAccess.sanitize(job);
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path f : ds) {
                Matcher m = NAME.matcher(f.getFileName().toString());
                if (m.matches() && m.group(1).equals(safe)) {
                    out.add(f);
                }
            }
        } catch (IOException ignored) {
            // no directory: no processes
        }
        out.sort(null);
        return out;
    }

    /**
     * Read the file at {@code p}: opened as every shared file is (links refused, owner, mode and
     * link count checked on the descriptor), its header checked (magic, version, a capacity whose
     * length is exactly the file's), then the allocated counters copied out. Returns null for a file
     * still being created (no magic yet).
     */
    public static Snapshot read(Path p) throws IOException, ShmAccess.Refused {
        ShmAccess.Opened o = ShmAccess.open(p, false, false);
        try (FileChannel ch = o.channel(); Arena arena = Arena.ofConfined()) {
            long size = ch.size();
            if (size < HEADER) {
                return null;
            }
            ByteBuffer hb = ByteBuffer.allocate(HEADER).order(ByteOrder.nativeOrder());
            while (hb.hasRemaining() && ch.read(hb, hb.position()) > 0) {
                // read the header
            }
            if (hb.getLong(OFF_MAGIC) == 0) {
                return null;
            }
            int capacity = hb.getInt(OFF_CAPACITY);
            if (hb.getLong(OFF_MAGIC) != MAGIC || hb.getInt(OFF_VERSION) != VERSION || capacity < 1
                    || capacity > MAX_CAPACITY || size != bytes(capacity)) {
                throw new IOException(p + " is not a scalep counters file of version " + VERSION
                        + " (magic, version or size differ)");
            }
            MemorySegment map = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            UnsafeBuffer h = new UnsafeBuffer(map.address(), HEADER);
            long meta = (long) capacity * CountersReader.METADATA_LENGTH;
            long values = (long) capacity * CountersReader.COUNTER_LENGTH;
            CountersReader reader = new CountersReader(new UnsafeBuffer(map.address() + HEADER, (int) meta),
                    new UnsafeBuffer(map.address() + HEADER + meta, (int) values), StandardCharsets.US_ASCII);
            long owner = h.getLongVolatile(OFF_OWNER);
            boolean alive = ShmAccess.alive(owner, h.getLong(OFF_PIDNS), h.getLongVolatile(OFF_LEASE));
            int jobLength = Math.clamp(h.getInt(OFF_JOB_LENGTH), 0, MAX_JOB);
            String job = h.getStringWithoutLengthAscii(OFF_JOB, jobLength);
            List<Counter> counters = new ArrayList<>();
            long now = System.nanoTime();
            reader.forEach((id, typeId, key, label) -> counters.add(new Counter(id, typeId, label,
                    reader.getCounterValue(id))));
            return new Snapshot(p, owner >>> 32, h.getIntVolatile(OFF_RANK), h.getIntVolatile(OFF_SIZE), job, alive,
                    h.getLong(OFF_STARTED), now, counters);
        } finally {
            o.channel().close();
        }
    }

    /** Delete the counters files in {@code dir} (any job) whose process is gone; returns how many. */
    public static int reclaim(Path dir) {
        int n = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path f : ds) {
                if (NAME.matcher(f.getFileName().toString()).matches() && removeIfDead(f)) {
                    n++;
                }
            }
        } catch (IOException ignored) {
            // nothing to reclaim
        }
        return n;
    }

    /** Delete {@code f} when it is this user's checked counters file whose owner is not alive. */
    private static boolean removeIfDead(Path f) {
        ShmAccess.Opened o;
        try {
            o = ShmAccess.open(f, false, false);
        } catch (ShmAccess.Refused | IOException | RuntimeException e) {
            return false; // not ours to judge
        }
        try (FileChannel ch = o.channel()) {
            if (ch.size() < HEADER) {
                return false; // being created
            }
            ByteBuffer hb = ByteBuffer.allocate(HEADER).order(ByteOrder.nativeOrder());
            while (hb.hasRemaining() && ch.read(hb, hb.position()) > 0) {
                // read the header
            }
            if (hb.getLong(OFF_MAGIC) != MAGIC || hb.getInt(OFF_VERSION) != VERSION) {
                return false;
            }
            if (ShmAccess.alive(hb.getLong(OFF_OWNER), hb.getLong(OFF_PIDNS), hb.getLong(OFF_LEASE))) {
                return false;
            }
            if (!o.fileKey().equals(ShmAccess.keyAt(f))) {
                return false;
            }
            Files.deleteIfExists(f);
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
