package dev.scalep.spmd.ffm;

import dev.scalep.verbs.ffm.Native;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * libc {@code read}/{@code write}/{@code close} on a raw file descriptor, bound through FFM. A PMI
 * launcher hands its ranks a socket as an inherited descriptor number ({@code PMI_FD}); Java
 * cannot open it by path ({@code /proc/self/fd/N} on a socket fails with ENXIO), so the wire
 * client reads and writes the number itself. Each call retries on EINTR and returns the byte count
 * or a negative errno.
 */
public final class Fd {
    private Fd() {
    }

    /** {@code EINTR}. */
    public static final int EINTR = 4;

    private static final class H {
        static final MethodHandle READ = Native.require(Native.LINKER.defaultLookup(), "read",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), Native.CAPTURE_ERRNO);
        static final MethodHandle WRITE = Native.require(Native.LINKER.defaultLookup(), "write",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), Native.CAPTURE_ERRNO);
        static final MethodHandle CLOSE = Native.require(Native.LINKER.defaultLookup(), "close",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT), Native.CAPTURE_ERRNO);
    }

    /**
     * {@code read(fd, buf, buf.byteSize())}: the bytes read (0 at end of stream) or a negative errno.
     * {@code state} is a call-state segment ({@link Native#callState}).
     */
    public static long read(int fd, MemorySegment buf, MemorySegment state) {
        try {
            while (true) {
                long n = (long) H.READ.invokeExact(state, fd, buf, buf.byteSize());
                if (n >= 0) {
                    return n;
                }
                int errno = Native.errno(state);
                if (errno != EINTR) {
                    return -errno;
                }
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code write} all of {@code buf}: its size, or a negative errno. */
    public static long writeAll(int fd, MemorySegment buf, MemorySegment state) {
        try {
            long off = 0;
            while (off < buf.byteSize()) {
                MemorySegment rest = buf.asSlice(off);
                long n = (long) H.WRITE.invokeExact(state, fd, rest, rest.byteSize());
                if (n < 0) {
                    int errno = Native.errno(state);
                    if (errno == EINTR) {
                        continue;
                    }
                    return -errno;
                }
                off += n;
            }
            return off;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code close(fd)}: 0 or a negative errno. */
    public static int close(int fd, MemorySegment state) {
        try {
            int rc = (int) H.CLOSE.invokeExact(state, fd);
            return rc == 0 ? 0 : -Native.errno(state);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
