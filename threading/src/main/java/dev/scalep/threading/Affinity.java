package dev.scalep.threading;

import dev.scalep.verbs.ffm.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;

/**
 * Binds the calling thread to one CPU with {@code sched_setaffinity(2)}, bound through the verbs
 * module's linker plumbing ({@link Native}: native access is granted to that module only).
 * Never throws for a refusal (EPERM in a container, EINVAL for a CPU outside the allowed set, a
 * non-Linux OS): the result says what happened and why, so callers can report it and go on.
 * Thread-safe; pinning applies to the calling thread only.
 */
public final class Affinity {
    /** Outcome of a pin request. */
    public record Result(boolean pinned, int cpu, int errno, String detail) {
        @Override
        public String toString() {
            return detail;
        }
    }

    private static final int CPU_SET_BYTES = 128; // glibc cpu_set_t: 1024 bits
    private static final MethodHandle SET;
    private static final MethodHandle GET;
    private static final String UNAVAILABLE;

    static {
        MethodHandle set = null;
        MethodHandle get = null;
        String why = null;
        try {
            if (!System.getProperty("os.name", "").toLowerCase().contains("linux")) {
                why = "thread pinning needs Linux sched_setaffinity; this is " + System.getProperty("os.name");
            } else {
                FunctionDescriptor fd = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);
                set = Native.require(Native.LINKER.defaultLookup(), "sched_setaffinity", fd, Native.CAPTURE_ERRNO);
                get = Native.require(Native.LINKER.defaultLookup(), "sched_getaffinity", fd, Native.CAPTURE_ERRNO);
            }
        } catch (RuntimeException | LinkageError e) {
            why = "thread pinning unavailable: " + e.getMessage();
            set = null;
            get = null;
        }
        SET = set;
        GET = get;
        UNAVAILABLE = why;
    }

    private Affinity() {
    }

    /** Whether pinning can be attempted here at all (Linux with native access enabled). */
    public static boolean available() {
        return SET != null;
    }

    /** Pin the calling thread to {@code cpu}. */
    public static Result pin(int cpu) {
        if (SET == null) {
            return new Result(false, cpu, 0, UNAVAILABLE);
        }
        if (cpu < 0 || cpu >= CPU_SET_BYTES * 8) {
            return new Result(false, cpu, 22, "cpu " + cpu + " out of range 0.." + (CPU_SET_BYTES * 8 - 1));
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(CPU_SET_BYTES, 8);
            mask.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            MemorySegment st = Native.callState(arena);
            int rc = (int) SET.invokeExact(st, 0, (long) CPU_SET_BYTES, mask);
            if (rc == 0) {
                return new Result(true, cpu, 0, "thread " + Thread.currentThread().getName() + " pinned to cpu " + cpu);
            }
            int err = Native.errno(st);
            String why = switch (err) {
                case 1 -> "EPERM: not permitted to change this thread's affinity (container or seccomp policy)";
                case 22 -> "EINVAL: cpu " + cpu + " is not in this process's allowed set " + allowedDescription(arena);
                case 3 -> "ESRCH: no such thread";
                default -> "errno " + err;
            };
            return new Result(false, cpu, err, "sched_setaffinity(cpu " + cpu + ") failed: " + why + "; running unpinned");
        } catch (Throwable t) {
            return new Result(false, cpu, 0, "sched_setaffinity(cpu " + cpu + ") failed: " + t + "; running unpinned");
        }
    }

    /** The CPUs the calling thread may run on, or an empty array when unknown. */
    public static int[] allowed() {
        if (GET == null) {
            return new int[0];
        }
        try (Arena arena = Arena.ofConfined()) {
            return allowed(arena);
        }
    }

    private static int[] allowed(Arena arena) {
        try {
            MemorySegment mask = arena.allocate(CPU_SET_BYTES, 8);
            MemorySegment st = Native.callState(arena);
            int rc = (int) GET.invokeExact(st, 0, (long) CPU_SET_BYTES, mask);
            if (rc != 0) {
                return new int[0];
            }
            int n = 0;
            int[] tmp = new int[CPU_SET_BYTES * 8];
            for (int c = 0; c < CPU_SET_BYTES * 8; c++) {
                if ((mask.get(ValueLayout.JAVA_BYTE, c / 8) & (1 << (c % 8))) != 0) {
                    tmp[n++] = c;
                }
            }
            return Arrays.copyOf(tmp, n);
        } catch (Throwable t) {
            return new int[0];
        }
    }

    private static String allowedDescription(Arena arena) {
        return Arrays.toString(allowed(arena));
    }
}
