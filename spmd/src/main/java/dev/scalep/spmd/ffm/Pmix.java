package dev.scalep.spmd.ffm;

import dev.scalep.verbs.ffm.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

import static dev.scalep.spmd.ffm.PmixStructs.BO_BYTES;
import static dev.scalep.spmd.ffm.PmixStructs.BO_SIZE;
import static dev.scalep.spmd.ffm.PmixStructs.INFO_VALUE;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_BOOL;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_BYTE_OBJECT_TYPE;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_COLLECT_DATA;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_GLOBAL;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_INFO;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_INT;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_MAX_KEYLEN;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_MAX_NSLEN;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_PROC;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_SIZE;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_STRING;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_SUCCESS;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_UINT16;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_UINT32;
import static dev.scalep.spmd.ffm.PmixStructs.PMIX_VALUE;
import static dev.scalep.spmd.ffm.PmixStructs.PROC_RANK;
import static dev.scalep.spmd.ffm.PmixStructs.VALUE_DATA;
import static dev.scalep.spmd.ffm.PmixStructs.VALUE_TYPE;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The OpenPMIx client calls scalep makes, bound through FFM on {@code libpmix.so.2} (loaded by
 * soname with the normal loader search when this class is first used). Each method returns the
 * {@code pmix_status_t}; {@link #errorString(int)} names it. Calls are made by one thread at a time
 * (the world serialises them).
 */
public final class Pmix {
    private Pmix() {
    }

    /** The client library's soname. */
    public static final String SONAME = "libpmix.so.2";

    private static final class H {
        static final SymbolLookup LIB = Native.library(SONAME);
        static final MethodHandle INIT = Native.require(LIB, "PMIx_Init",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
        static final MethodHandle FINALIZE = Native.require(LIB, "PMIx_Finalize",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        static final MethodHandle PUT = Native.require(LIB, "PMIx_Put",
                FunctionDescriptor.of(JAVA_INT, JAVA_BYTE, ADDRESS, ADDRESS));
        static final MethodHandle COMMIT = Native.require(LIB, "PMIx_Commit", FunctionDescriptor.of(JAVA_INT));
        static final MethodHandle FENCE = Native.require(LIB, "PMIx_Fence",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG));
        static final MethodHandle GET = Native.require(LIB, "PMIx_Get",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
        static final MethodHandle ERROR_STRING = Native.require(LIB, "PMIx_Error_string",
                FunctionDescriptor.of(ADDRESS, JAVA_INT));
        static final MethodHandle VALUE_DESTRUCT = Native.require(LIB, "PMIx_Value_destruct",
                FunctionDescriptor.ofVoid(ADDRESS));
        static final MethodHandle FREE = Native.require(Native.LINKER.defaultLookup(), "free",
                FunctionDescriptor.ofVoid(ADDRESS));
    }

    /** Load the library now; throws {@link IllegalArgumentException} naming the soname when it is absent. */
    public static void load() {
        try {
            H.LIB.hashCode();
        } catch (ExceptionInInitializerError e) {
            throw new IllegalArgumentException("cannot load " + SONAME + ": " + e.getCause().getMessage(), e.getCause());
        }
    }

    /** {@code PMIx_Init(proc, NULL, 0)}: fills {@code proc} (a {@link PmixStructs#PMIX_PROC}). */
    public static int init(MemorySegment proc) {
        try {
            return (int) H.INIT.invokeExact(proc, MemorySegment.NULL, 0L);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code PMIx_Finalize(NULL, 0)}. Never after a failed {@link #init} (OpenPMIx 4.2 crashes there). */
    public static int finalizeClient() {
        try {
            return (int) H.FINALIZE.invokeExact(MemorySegment.NULL, 0L);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code PMIx_Put(PMIX_GLOBAL, key, value)} of a byte object (the library copies the bytes). */
    public static int putBytes(String key, byte[] bytes) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment data = a.allocate(Math.max(1, bytes.length));
            MemorySegment.copy(bytes, 0, data, JAVA_BYTE, 0, bytes.length);
            MemorySegment v = a.allocate(PMIX_VALUE);
            v.set(JAVA_SHORT, VALUE_TYPE, PMIX_BYTE_OBJECT_TYPE);
            v.set(ADDRESS, VALUE_DATA + BO_BYTES, data);
            v.set(JAVA_LONG, VALUE_DATA + BO_SIZE, bytes.length);
            return (int) H.PUT.invokeExact(PMIX_GLOBAL, key(a, key), v);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code PMIx_Commit()}. */
    public static int commit() {
        try {
            return (int) H.COMMIT.invokeExact();
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code PMIx_Fence(NULL, 0, info, n)} over the whole namespace, collecting the committed data when asked. */
    public static int fence(boolean collect) {
        try (Arena a = Arena.ofConfined()) {
            if (!collect) {
                return (int) H.FENCE.invokeExact(MemorySegment.NULL, 0L, MemorySegment.NULL, 0L);
            }
            MemorySegment info = a.allocate(PMIX_INFO);
            MemorySegment k = a.allocateFrom(PMIX_COLLECT_DATA);
            MemorySegment.copy(k, 0, info, 0, k.byteSize());
            info.set(JAVA_SHORT, INFO_VALUE + VALUE_TYPE, PMIX_BOOL);
            info.set(JAVA_BYTE, INFO_VALUE + VALUE_DATA, (byte) 1);
            return (int) H.FENCE.invokeExact(MemorySegment.NULL, 0L, info, 1L);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The value a {@link #get} returned: its type and what it carried, already released natively. */
    public record Value(short type, byte[] bytes, long number, String string) {
    }

    /**
     * {@code PMIx_Get(proc{nspace, rank}, key, NULL, 0, &val)}. On success {@code out[0]} holds the
     * value (byte objects and strings copied, integers widened); the library's copy is released
     * ({@code PMIx_Value_destruct} then {@code free}).
     */
    public static int get(MemorySegment nspace, int rank, String key, Value[] out) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment proc = a.allocate(PMIX_PROC);
            MemorySegment.copy(nspace, 0, proc, 0, PMIX_MAX_NSLEN + 1);
            proc.set(JAVA_INT, PROC_RANK, rank);
            MemorySegment pv = a.allocate(ADDRESS);
            int rc = (int) H.GET.invokeExact(proc, key(a, key), MemorySegment.NULL, 0L, pv);
            if (rc != PMIX_SUCCESS) {
                return rc;
            }
            MemorySegment v = pv.get(ADDRESS, 0).reinterpret(PMIX_VALUE.byteSize());
            try {
                out[0] = decode(v);
            } finally {
                H.VALUE_DESTRUCT.invokeExact(v);
                H.FREE.invokeExact(v);
            }
            return rc;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private static Value decode(MemorySegment v) {
        short type = v.get(JAVA_SHORT, VALUE_TYPE);
        long d = VALUE_DATA;
        return switch (type) {
            case PMIX_BYTE_OBJECT_TYPE -> {
                long n = v.get(JAVA_LONG, d + BO_SIZE);
                if (n < 0 || n > Integer.MAX_VALUE - 16) {
                    throw new IllegalStateException("PMIx_Get returned a byte object of " + n + " bytes");
                }
                MemorySegment p = v.get(ADDRESS, d + BO_BYTES).reinterpret(n);
                yield new Value(type, p.toArray(JAVA_BYTE), n, null);
            }
            case PMIX_STRING -> new Value(type, null, 0,
                    v.get(ADDRESS, d).reinterpret(Integer.MAX_VALUE).getString(0, StandardCharsets.UTF_8));
            case PMIX_UINT32 -> new Value(type, null, Integer.toUnsignedLong(v.get(JAVA_INT, d)), null);
            case PMIX_UINT16 -> new Value(type, null, Short.toUnsignedInt(v.get(JAVA_SHORT, d)), null);
            case PMIX_SIZE -> new Value(type, null, v.get(JAVA_LONG, d), null);
            case PMIX_INT -> new Value(type, null, v.get(JAVA_INT, d), null);
            default -> new Value(type, null, 0, null);
        };
    }

    /** {@code PMIx_Error_string(status)}. */
    public static String errorString(int status) {
        try {
            MemorySegment s = (MemorySegment) H.ERROR_STRING.invokeExact(status);
            return s.equals(MemorySegment.NULL) ? "status " + status
                    : s.reinterpret(4096).getString(0, StandardCharsets.UTF_8) + " (" + status + ")";
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    private static MemorySegment key(Arena a, String key) {
        if (key.length() > PMIX_MAX_KEYLEN) {
            throw new IllegalArgumentException("PMIx key longer than " + PMIX_MAX_KEYLEN + ": " + key);
        }
        MemorySegment k = a.allocate(PMIX_MAX_KEYLEN + 1);
        MemorySegment s = a.allocateFrom(key);
        MemorySegment.copy(s, 0, k, 0, s.byteSize());
        return k;
    }
}
