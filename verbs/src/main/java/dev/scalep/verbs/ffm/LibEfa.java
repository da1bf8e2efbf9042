package dev.scalep.verbs.ffm;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static dev.scalep.verbs.ffm.Native.CAPTURE_ERRNO;
import static dev.scalep.verbs.ffm.Native.rethrow;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Downcalls into {@code libefa.so.1} (the EFA direct-verbs API, {@code infiniband/efadv.h}), loaded
 * on first use and kept for the life of the process. Thread-safe.
 */
public final class LibEfa {
    public static final String SONAME = "libefa.so.1";

    private static final class Holder {
        static final LibEfa INSTANCE;
        static final String FAILURE;
        static {
            LibEfa lib = null;
            String failure = null;
            try {
                lib = new LibEfa();
            } catch (IllegalArgumentException | IllegalStateException e) {
                failure = "loading " + SONAME + " failed: " + e.getMessage();
            }
            INSTANCE = lib;
            FAILURE = failure;
        }
    }

    /** The library, or {@code null} when it cannot be loaded ({@link #loadFailure()}). */
    public static LibEfa get() {
        return Holder.INSTANCE;
    }

    public static String loadFailure() {
        return Holder.FAILURE;
    }

    private final MethodHandle queryDevice;
    private final MethodHandle createQpEx;

    private LibEfa() {
        var lib = Native.library(SONAME);
        queryDevice = Native.require(lib, "efadv_query_device",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        createQpEx = Native.require(lib, "efadv_create_qp_ex",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
    }

    /** {@code efadv_query_device(ctx, attr, sizeof attr)}: 0 or an errno. */
    public int queryDevice(MemorySegment ctx, MemorySegment attr) {
        try {
            return (int) queryDevice.invokeExact(ctx, attr, (int) attr.byteSize());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code efadv_create_qp_ex}: a QP, or NULL with errno. */
    public MemorySegment createQpEx(MemorySegment st, MemorySegment ctx, MemorySegment attrEx, MemorySegment efaAttr) {
        try {
            return (MemorySegment) createQpEx.invokeExact(st, ctx, attrEx, efaAttr, (int) efaAttr.byteSize());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
