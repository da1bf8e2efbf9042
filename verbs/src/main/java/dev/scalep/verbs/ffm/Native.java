package dev.scalep.verbs.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Linker plumbing shared by the raw bindings: {@code errno} capture, symbol lookup in a library
 * loaded into {@link Arena#global()} (never unloaded), and the few libc calls the runtime needs
 * ({@code setenv}, {@code poll}). Thread-safe: handles are immutable.
 */
public final class Native {
    private Native() {
    }

    public static final Linker LINKER = Linker.nativeLinker();
    /** Layout of the call state that {@link #CAPTURE_ERRNO} fills. */
    public static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    /** Capture {@code errno} right after the call, before the JVM can overwrite it. */
    public static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    /**
     * The memory of {@code s} as a segment of {@code scope}: alive only while both the memory and
     * {@code scope} are, so that a layer above can end its own accesses (closing {@code scope})
     * before the memory is freed. A restricted operation, done here because this module is the one
     * with native access; the caller keeps the view within the memory's lifetime.
     */
    public static MemorySegment view(MemorySegment s, Arena scope) {
        return s.reinterpret(scope, null);
    }

    /** A call-state segment for one {@code errno}-capturing call. */
    public static MemorySegment callState(Arena arena) {
        return arena.allocate(CALL_STATE);
    }

    /** The {@code errno} a capturing call stored in {@code state}. */
    public static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    /** A library loaded for the life of the process; throws {@link IllegalArgumentException} when absent. */
    public static SymbolLookup library(String soname) {
        return SymbolLookup.libraryLookup(soname, Arena.global());
    }

    /** A bound downcall handle for an exported symbol, or empty when the library lacks it. */
    public static Optional<MethodHandle> bind(SymbolLookup lib, String symbol, FunctionDescriptor fd,
                                              Linker.Option... options) {
        return lib.find(symbol).map(a -> LINKER.downcallHandle(a, fd, options));
    }

    /** A bound downcall handle that must exist. */
    public static MethodHandle require(SymbolLookup lib, String symbol, FunctionDescriptor fd,
                                       Linker.Option... options) {
        return bind(lib, symbol, fd, options).orElseThrow(
                () -> new IllegalStateException("symbol " + symbol + " not found"));
    }

    private static final class Libc {
        static final SymbolLookup C = LINKER.defaultLookup();
        static final MethodHandle SETENV = require(C, "setenv",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
        static final MethodHandle POLL = require(C, "poll",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), // nfds_t is unsigned long
                CAPTURE_ERRNO);
        static final MethodHandle FCNTL = require(C, "fcntl",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), CAPTURE_ERRNO,
                Linker.Option.firstVariadicArg(2));
    }

    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 04000;

    /** Set {@code O_NONBLOCK} on {@code fd} ({@code fcntl}); 0 or errno. */
    public static int setNonBlocking(int fd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = callState(a);
            int fl = (int) Libc.FCNTL.invokeExact(st, fd, F_GETFL, 0);
            if (fl < 0) {
                return errno(st);
            }
            int rc = (int) Libc.FCNTL.invokeExact(st, fd, F_SETFL, fl | O_NONBLOCK);
            return rc < 0 ? errno(st) : 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code setenv(name, value, 1)} in the process environment that native libraries read with
     * {@code getenv} (Java's {@code System.getenv} is a copy and does not see it). Returns 0 or errno.
     */
    public static int setenv(String name, String value) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = callState(a);
            int rc = (int) Libc.SETENV.invokeExact(st, a.allocateFrom(name), a.allocateFrom(value), 1);
            return rc == 0 ? 0 : errno(st);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code poll} on one file descriptor for {@code POLLIN}: 1 when readable, 0 on timeout, or a
     * negative errno. {@code timeoutMillis} -1 waits forever.
     */
    public static int pollIn(int fd, int timeoutMillis) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pfd = a.allocate(8, 4); // struct pollfd { int fd; short events; short revents; }
            pfd.set(JAVA_INT, 0, fd);
            pfd.set(ValueLayout.JAVA_SHORT, 4, (short) 1); // POLLIN
            MemorySegment st = callState(a);
            int rc = (int) Libc.POLL.invokeExact(st, pfd, 1L, timeoutMillis);
            return rc < 0 ? -errno(st) : rc;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Rethrow what a downcall threw: runtime exceptions and errors as they are. */
    public static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(t);
    }
}
