package dev.scalep.verbs.sim;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * The simulator's shared-file discipline for other files of the runtime that live beside its
 * segments (the counters file, {@code dev.scalep.verbs.counters}): the user's private directory,
 * the job name, opening a file with links refused and the opened descriptor checked
 * ({@link ShmFile}), and process liveness by pid, start time, pid namespace and lease, exactly as
 * the fabric judges its own processes. This package is not exported: only the verbs module (and
 * class-path code) reaches it.
 */
public final class ShmAccess {
    private ShmAccess() {
    }

    /** An opened file: its channel, whether this call created it, its size then, and its identity. */
    public record Opened(FileChannel channel, boolean created, long size, Object fileKey) {
    }

    /** A file refused as hostile (a link, another owner, a mode other than 0600, more than one link). */
    public static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String why) {
            super(why, null, false, false);
        }
    }

    /** The user's private directory (created 0700 when missing) under {@code -Dscalep.sim.shmDir} (default /dev/shm). */
    public static Path userDir() {
        return Fabric.userDir("counters");
    }

    /** The job name: {@code scalep.job}, {@code SCALEP_JOB}, the PMIx namespace, else {@code default}. */
    public static String defaultJob() {
        return Fabric.defaultJob();
    }

    /** {@code job} made safe for a file name, as the fabric's segments name it. */
    public static String sanitize(String job) {
        return Fabric.sanitize(job);
    }

    /** This process's uid. */
    public static int uid() {
        return Fabric.currentUid();
    }

    /** This process's owner word: pid in the high half, start time (clock ticks) in the low half. */
    public static long selfOwner() {
        return Fabric.selfOwner();
    }

    /** This process's pid namespace (0 when its pids cannot be checked in the /proc it sees). */
    public static long pidNamespace() {
        return Fabric.PID_NS;
    }

    /** CLOCK_MONOTONIC in milliseconds, the clock of leases. */
    public static long nowMillis() {
        return Fabric.nowMillis();
    }

    /** Whether the owner of {@code owner}/{@code pidNs}/{@code lease} still runs (the fabric's rule). */
    public static boolean alive(long owner, long pidNs, long lease) {
        return Fabric.alive(owner, pidNs, lease);
    }

    /** Open {@code p} read-write as {@link ShmFile#open} does: create (0600) or open; links and foreign files refused. */
    public static Opened open(Path p, boolean create, boolean exclusive) throws Refused, IOException {
        try {
            ShmFile.Opened o = ShmFile.open(p, create, exclusive, uid());
            return new Opened(o.channel(), o.created(), o.size(), o.fileKey());
        } catch (ShmFile.Refused r) {
            throw new Refused(r.getMessage());
        }
    }

    /** The identity of the file now at {@code p} (not following a link), or null when none. */
    public static Object keyAt(Path p) {
        return ShmFile.keyAt(p);
    }
}
