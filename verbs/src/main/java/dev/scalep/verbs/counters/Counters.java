package dev.scalep.verbs.counters;

import dev.scalep.verbs.sim.ShmAccess;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The process's runtime counters: Agrona {@link AtomicCounter}s allocated by a
 * {@link CountersManager} over this process's {@link CountersFile}, so that {@code scalep stat} (or
 * any reader of the file) sees them live. The file is created with the first group of counters,
 * in the user's private directory for the job ({@link ShmAccess#defaultJob}), and deleted when the
 * process exits (a shutdown hook) or {@link #closeFile()} is called; a daemon thread renews its
 * lease every second. When the file cannot be made (no shared-memory directory) or is full, groups
 * get private counters instead, which count the same but are not visible outside.
 *
 * <p>{@link #ENABLED} ({@code -Dscalep.counters}, default true) is read once into a constant: the
 * data path guards every increment with it, so with counters off the compiler removes them.
 * Counters are written by one thread at a time (the holder of what the counted object already
 * serialises: an endpoint's owner, a QP's lock or combiner role, a CQ's poll role) with plain
 * stores into a local group's block ({@link #localGroup}, {@link LocalCounter#add}), whose lines
 * hold one object's counters only, so two threads never share a counter's cache line unless they
 * already share the object it counts; the file's records are copies.
 */
public final class Counters {
    /** Whether the data path counts ({@code -Dscalep.counters=false} turns it off). */
    public static final boolean ENABLED = !"false".equalsIgnoreCase(System.getProperty("scalep.counters", "true"));
    /** Counters in the process's file ({@code -Dscalep.counters.capacity}, default 4096). */
    static final int CAPACITY = Integer.getInteger("scalep.counters.capacity", 4096);
    /** Type ids of the counted objects (Agrona counter type ids). */
    public static final int TYPE_ENDPOINT = 7001;
    public static final int TYPE_QP = 7002;
    public static final int TYPE_CQ = 7003;

    /** A cache line's bytes: the unit a local group's block is laid out in ({@link #localGroup}). */
    public static final int LINE = 64;
    /**
     * Milliseconds between the publisher's copies of local groups into the file; the lease is
     * renewed every {@link #LEASE_TICKS} of them.
     */
    static final long PUBLISH_MILLIS = 100;
    static final int LEASE_TICKS = 10;

    private static final System.Logger LOG = System.getLogger(Counters.class.getName());
    /** The local groups whose copies are in the file: the publisher refreshes them. */
    private static final List<CounterGroup> PUBLISHED = new ArrayList<>();
    private static CountersFile file;
    private static final Map<String, AtomicCounter> CLOSED_TOTALS = new HashMap<>();
    private static boolean failed;
    private static int liveGroups;
    private static Thread leaseThread;
    private static boolean hooked;
    private static int rank = -1;
    private static int size = -1;

    private Counters() {
    }

    /**
     * A group of counters named {@code object + " " + names[i]}: in this process's file when it can
     * be made and has room, else private. Control path; thread-safe.
     */
    public static synchronized CounterGroup group(int typeId, String object, String... names) {
        return group(typeId, object, names, null, null);
    }

    /** A group in the file when it has room, else private; local ({@code block} not null) or not. */
    private static CounterGroup group(int typeId, String object, String[] names, UnsafeBuffer block,
                                      LocalCounter[] local) {
        CountersFile f = ENABLED ? file() : null;
        if (f != null && f.manager().available() >= names.length) {
            AtomicCounter[] cs = new AtomicCounter[names.length];
            for (int i = 0; i < names.length; i++) {
                cs[i] = f.manager().newCounter(object + " " + names[i], typeId);
            }
            liveGroups++;
            return new CounterGroup(typeId, object, names, cs, f, block, local);
        }
        return new CounterGroup(typeId, object, names, privateCounters(typeId, object, names), null, block, local);
    }

    /**
     * A group like {@link #group} whose data path counts in a block of this process's memory,
     * counter {@code i} in cache line {@code lineOf[i]} (at most {@value #LINE} / 8 to a line, in
     * the order given), so that a thread taking the counted object over from another (a shared
     * QP's lock, a CQ's poll role) moves the lines its counters share rather than a line per
     * counter, as Agrona's 128-byte records would. The file's counters are copies, refreshed by the
     * publisher thread every {@value #PUBLISH_MILLIS} ms and when the group closes; {@link
     * CounterGroup#value} reads the block. Control path; thread-safe.
     */
    public static synchronized CounterGroup localGroup(int typeId, String object, String[] names, int[] lineOf) {
        if (lineOf.length != names.length) {
            throw new IllegalArgumentException(object + ": " + names.length + " names, " + lineOf.length + " lines");
        }
        int lines = 0;
        for (int l : lineOf) {
            if (l < 0) {
                throw new IllegalArgumentException(object + ": line " + l);
            }
            lines = Math.max(lines, l + 1);
        }
        int[] used = new int[lines];
        int[] offset = new int[names.length];
        for (int i = 0; i < names.length; i++) {
            int l = lineOf[i];
            if (used[l] == LINE / Long.BYTES) {
                throw new IllegalArgumentException(object + ": more than " + LINE / Long.BYTES + " counters in line " + l);
            }
            offset[i] = l * LINE + Long.BYTES * used[l]++;
        }
        // Direct memory owned by the group's counters, as privateCounters' is: a late increment after
        // close still lands in memory that exists, and the block goes when its last counter does.
        UnsafeBuffer block = new UnsafeBuffer(BufferUtil.allocateDirectAligned(lines * LINE, LINE));
        LocalCounter[] local = new LocalCounter[names.length];
        for (int i = 0; i < names.length; i++) {
            local[i] = new LocalCounter(block, offset[i]);
        }
        CounterGroup g = group(typeId, object, names, block, local);
        if (g.shared()) {
            PUBLISHED.add(g);
        }
        return g;
    }

    /**
     * Copy every local group's values into the file now (the publisher thread does so every
     * {@value #PUBLISH_MILLIS} ms): for a reader of the file that must see what this process
     * counted up to here.
     */
    public static synchronized void publish() {
        for (CounterGroup g : PUBLISHED) {
            g.publish();
        }
    }

    static AtomicCounter[] privateCounters(int typeId, String object, String... names) {
        int n = names.length;
        // Direct and aligned: Agrona's AtomicCounter checks its buffer's alignment and prints a warning for
        // every counter over a byte[] (which the JVM does not promise to align by 8). The memory is plain
        // JVM memory like the array it replaces, kept by the counters that use it, so a late increment
        // never reaches freed memory.
        CountersManager m = new CountersManager(
                new UnsafeBuffer(BufferUtil.allocateDirectAligned(n * CountersReader.METADATA_LENGTH, CountersReader.METADATA_LENGTH)),
                new UnsafeBuffer(BufferUtil.allocateDirectAligned(n * CountersReader.COUNTER_LENGTH, CountersReader.COUNTER_LENGTH)),
                StandardCharsets.US_ASCII);
        AtomicCounter[] cs = new AtomicCounter[n];
        for (int i = 0; i < n; i++) {
            cs[i] = m.newCounter(object + " " + names[i], typeId);
        }
        return cs;
    }

    /** Free a group's counters (their records are reused by the next group). */
    static synchronized void free(CounterGroup g, CountersFile owner) {
        if (owner == null) {
            return;
        }
        PUBLISHED.remove(g);
        for (int i = 0; i < g.size(); i++) {
            if (owner == file) {
                closedTotal(g.typeId(), g.name(i)).getAndAddOrdered(g.value(i));
            }
            g.counter(i).close(); // frees its record in the manager
        }
        liveGroups--;
        if (owner != file && liveGroups == 0) {
            owner.close(); // a file already deleted by closeFile(): unmap it once its last group is gone
        }
    }

    /**
     * The file's counter that accumulates the final values of closed objects of a type and name
     * ({@code closed.<ep|qp|cq> <name>}), so that a reader's totals over live and closed objects
     * never go back when an object closes and rates stay meaningful while a program opens and
     * closes endpoints. Created on first use; the caller holds the class lock.
     */
    private static AtomicCounter closedTotal(int typeId, String name) {
        String key = typeId + " " + name;
        AtomicCounter c = CLOSED_TOTALS.get(key);
        if (c == null) {
            String kind = switch (typeId) {
                case TYPE_ENDPOINT -> "ep";
                case TYPE_QP -> "qp";
                case TYPE_CQ -> "cq";
                default -> Integer.toString(typeId);
            };
            c = file.manager().available() > 0 ? file.manager().newCounter("closed." + kind + " " + name, typeId)
                    : privateCounters(typeId, "closed." + kind, name)[0];
            CLOSED_TOTALS.put(key, c);
        }
        return c;
    }

    /** This process's file, created on first use; null when counting is off or the file cannot be made. */
    private static CountersFile file() {
        if (file == null && !failed) {
            try {
                file = CountersFile.create(ShmAccess.userDir(), ShmAccess.defaultJob(), CAPACITY);
                if (rank >= 0) {
                    file.describe(rank, size);
                }
                startLease();
                hookExit();
            } catch (IOException | RuntimeException e) {
                failed = true;
                LOG.log(Level.WARNING, "scalep counters stay in this process (no counters file: " + e.getMessage() + ")");
            }
        }
        return file;
    }

    /** The path of this process's counters file, or null when there is none (yet). */
    public static synchronized Path path() {
        return file == null ? null : file.path();
    }

    /** Create the file now if it does not exist yet (so a reader sees the process before its first endpoint). */
    public static synchronized Path open() {
        CountersFile f = ENABLED ? file() : null;
        return f == null ? null : f.path();
    }

    /** Record this process's rank among {@code size} ranks of its job (shown by {@code scalep stat}). */
    public static synchronized void describe(int rank, int size) {
        Counters.rank = rank;
        Counters.size = size;
        if (file != null) {
            file.describe(rank, size);
        }
    }

    /**
     * Delete this process's file now (the next group creates a new one). Groups still open keep
     * counting into the deleted file's mapping, which is unmapped when the last of them is closed.
     */
    public static synchronized void closeFile() {
        CountersFile f = file;
        if (f == null) {
            return;
        }
        file = null;
        failed = false;
        CLOSED_TOTALS.clear();
        stopLease();
        if (liveGroups == 0) {
            f.close();
        } else {
            f.delete();
        }
    }

    private static void startLease() {
        Thread t = Thread.ofPlatform().daemon().name("scalep-counters").unstarted(() -> {
            for (long tick = 1; !Thread.currentThread().isInterrupted(); tick++) {
                try {
                    Thread.sleep(PUBLISH_MILLIS);
                } catch (InterruptedException e) {
                    return;
                }
                synchronized (Counters.class) {
                    publish();
                    if (file != null && tick % LEASE_TICKS == 0) {
                        file.renewLease();
                    }
                }
            }
        });
        t.start();
        leaseThread = t;
    }

    private static void stopLease() {
        Thread t = leaseThread;
        leaseThread = null;
        if (t != null) {
            t.interrupt();
        }
    }

    /** One shutdown hook per JVM: the file is deleted (not unmapped: threads may still count) on exit. */
    private static void hookExit() {
        if (!hooked) {
            hooked = true;
            try {
                Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("scalep-counters-exit").unstarted(() -> {
                    synchronized (Counters.class) {
                        if (file != null) {
                            file.delete();
                        }
                    }
                }));
            } catch (IllegalStateException alreadyExiting) {
                // exiting: the next process reclaims the file
            }
        }
    }
}
