package dev.scalep.verbs.sim;

import dev.scalep.verbs.Errno;
import dev.scalep.verbs.ffm.Native;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A shared-memory file opened so that nobody can turn it against its user: {@code open(2)} with
 * {@code O_NOFOLLOW} (a symbolic link is refused, never followed) and, to create,
 * {@code O_CREAT|O_EXCL}; then {@code statx(2)} on the descriptor actually opened: a regular file
 * of this user, mode 0600, one link. Only then is a {@link FileChannel} made for it, through
 * {@code /proc/self/fd/N}, which names that same file and cannot be redirected. And the per-user
 * directory that holds the simulated NIC's files ({@link #userDir}).
 */
final class ShmFile {
    private static final int O_RDWR = 2;
    private static final int O_CREAT = 0100;
    private static final int O_EXCL = 0200;
    private static final int O_NOFOLLOW = System.getProperty("os.arch", "").contains("aarch64") ? 0100000 : 0400000;
    private static final int O_CLOEXEC = 02000000;
    private static final int AT_EMPTY_PATH = 0x1000;
    private static final int STATX_BASIC_STATS = 0x7ff;
    private static final int EEXIST = 17;
    private static final int ENOENT = 2;
    private static final int ELOOP = 40;
    private static final int S_IFMT = 0170000;
    private static final int S_IFREG = 0100000;

    static final Set<PosixFilePermission> OWNER_RW =
            EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
    static final Set<PosixFilePermission> OWNER_RWX = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);

    /** How many directory names {@link #userDir} tries before giving up (others may hold the first ones). */
    static final int DIR_CANDIDATES = 8;

    private static final class Libc {
        static final MethodHandle OPEN = Native.require(Native.LINKER.defaultLookup(), "open",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), Native.CAPTURE_ERRNO,
                Linker.Option.firstVariadicArg(2));
        static final MethodHandle STATX = Native.require(Native.LINKER.defaultLookup(), "statx",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS), Native.CAPTURE_ERRNO);
        static final MethodHandle CLOSE = Native.require(Native.LINKER.defaultLookup(), "close",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    }

    /** An opened file: its channel, whether this call created it, its size then, and its identity. */
    record Opened(FileChannel channel, boolean created, long size, Object fileKey) {
    }

    /** Why a file was refused: a one-line reason and the errno to report. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        final int errno;

        Refused(int errno, String why) {
            super(why, null, false, false);
            this.errno = errno;
        }
    }

    private ShmFile() {
    }

    /**
     * Open {@code p} read-write: create it (mode 0600) when {@code create} and it does not exist,
     * else open the existing file. Links are refused; the opened descriptor must be a regular file
     * of {@code uid}, mode 0600, with one link. {@code create} with {@code exclusive} fails on an
     * existing file.
     */
    static Opened open(Path p, boolean create, boolean exclusive, int uid) throws Refused, IOException {
        for (int attempt = 0; ; attempt++) {
            try {
                return openOnce(p, create, exclusive, uid);
            } catch (Unlinked e) {
                // A leaving process removed the file between our open and our check: not a hostile file.
                // To create, open the name again (a fresh file, or a successor's); else report it gone.
                if (!create || attempt >= 100) {
                    throw new IOException(p + " was removed while it was being opened", e);
                }
            }
        }
    }

    /** The file was unlinked after it was opened (link count 0 on the descriptor). */
    private static final class Unlinked extends IOException {
        private static final long serialVersionUID = 1L;

        Unlinked(Path p) {
            super(p + " has no link left", null);
        }
    }

    private static Opened openOnce(Path p, boolean create, boolean exclusive, int uid) throws Refused, IOException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = Native.callState(a);
            MemorySegment name = a.allocateFrom(p.toString());
            int base = O_RDWR | O_NOFOLLOW | O_CLOEXEC;
            boolean created = false;
            int fd = -1;
            for (int attempt = 0; fd < 0; attempt++) {
                if (create) {
                    fd = (int) Libc.OPEN.invokeExact(st, name, base | O_CREAT | O_EXCL, 0600);
                    created = fd >= 0;
                    if (fd >= 0 || Native.errno(st) != EEXIST || exclusive) {
                        break;
                    }
                }
                fd = (int) Libc.OPEN.invokeExact(st, name, base, 0);
                if (fd >= 0 || Native.errno(st) != ENOENT || !create || attempt > 100) {
                    break; // (ENOENT with create: removed between the two opens, try again)
                }
            }
            if (fd < 0) {
                int e = Native.errno(st);
                if (e == ELOOP) {
                    throw new Refused(Errno.EACCES, p + " is a symbolic link (refused, not followed)");
                }
                if (e == EEXIST) {
                    throw new Refused(Errno.EACCES, p + " already exists");
                }
                throw new IOException("open " + p + ": errno " + e);
            }
            try {
                MemorySegment sx = a.allocate(256, 8);
                int rc = (int) Libc.STATX.invokeExact(st, fd, a.allocateFrom(""), AT_EMPTY_PATH, STATX_BASIC_STATS, sx);
                if (rc != 0) {
                    throw new IOException("statx " + p + ": errno " + Native.errno(st));
                }
                long nlink = Integer.toUnsignedLong(sx.get(JAVA_INT, 16));
                int fileUid = sx.get(JAVA_INT, 20);
                int mode = sx.get(JAVA_SHORT, 28) & 0xffff;
                long size = sx.get(JAVA_LONG, 40);
                if ((mode & S_IFMT) != S_IFREG) {
                    throw new Refused(Errno.EACCES, p + " is not a regular file (mode " + Integer.toOctalString(mode) + ")");
                }
                if (nlink == 0 && fileUid == uid) {
                    throw new Unlinked(p);
                }
                if (fileUid != uid || (mode & 07777) != 0600 || nlink != 1) {
                    throw new Refused(Errno.EACCES, p + " is owned by uid " + fileUid + " with mode "
                            + Integer.toOctalString(mode & 07777) + " and " + nlink + " link(s); a shared file must be"
                            + " uid " + uid + "'s alone, mode 600 (rw-------), one link");
                }
                Path self = Path.of("/proc/self/fd", Integer.toString(fd));
                FileChannel ch = FileChannel.open(self, StandardOpenOption.READ, StandardOpenOption.WRITE);
                Object key;
                try {
                    key = Files.readAttributes(self, BasicFileAttributes.class).fileKey();
                } catch (IOException | RuntimeException e) {
                    ch.close();
                    throw e;
                }
                return new Opened(ch, created, size, key);
            } finally {
                int ignored = (int) Libc.CLOSE.invokeExact(fd);
            }
        } catch (Refused | IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The identity of the file now at {@code p} (not following a link), or null when none. */
    static Object keyAt(Path p) {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * This user's directory for the simulated NIC's files under {@code parent}: {@code scalep-<uid>},
     * created mode 0700. A name another user holds (or a link, or a file) is skipped for the next
     * candidate {@code scalep-<uid>.1} .. {@code .7}, so every process of the user picks the same
     * one and nobody else can place files in it.
     */
    static Path userDir(String dev, Path parent, int uid) {
        StringBuilder refused = new StringBuilder();
        for (int i = 0; i < DIR_CANDIDATES; i++) {
            Path d = parent.resolve(i == 0 ? "scalep-" + uid : "scalep-" + uid + "." + i);
            try {
                try {
                    Files.createDirectory(d, PosixFilePermissions.asFileAttribute(OWNER_RWX));
                } catch (FileAlreadyExistsException e) {
                    // check it below
                }
                PosixFileAttributes a = Files.readAttributes(d, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                int owner = (Integer) Files.getAttribute(d, "unix:uid", LinkOption.NOFOLLOW_LINKS);
                if (a.isDirectory() && !a.isSymbolicLink() && owner == uid) {
                    if (!a.permissions().equals(OWNER_RWX)) { // ours (a umask, a chmod): make it private
                        Files.setPosixFilePermissions(d, OWNER_RWX);
                    }
                    return d;
                }
                refused.append(refused.isEmpty() ? "" : "; ").append(d).append(a.isSymbolicLink() ? " is a link"
                        : !a.isDirectory() ? " is not a directory" : " belongs to uid " + owner);
            } catch (IOException | UnsupportedOperationException e) {
                refused.append(refused.isEmpty() ? "" : "; ").append(d).append(": ").append(e.getMessage());
            }
        }
        throw Fabric.fail(dev, Errno.EACCES, "no private directory for the simulated NIC's files under " + parent
                + " (" + refused + "); remove those or set -Dscalep.sim.shmDir to a directory of yours");
    }
}
