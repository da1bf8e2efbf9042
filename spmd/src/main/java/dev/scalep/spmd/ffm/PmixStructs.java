package dev.scalep.spmd.ffm;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The OpenPMIx client structs and constants scalep uses (LP64, {@code pmix.h} of OpenPMIx 4.x),
 * with offsets derived from the layouts by path. {@code PmixLayoutConformanceTest} compares every
 * size, offset and constant here with the C compiler's view of the installed header.
 */
public final class PmixStructs {
    private PmixStructs() {
    }

    /** {@code PMIX_MAX_NSLEN}: a namespace is at most this many characters plus the terminating NUL. */
    public static final int PMIX_MAX_NSLEN = 255;
    /** {@code PMIX_MAX_KEYLEN}: a key is at most this many characters plus the terminating NUL. */
    public static final int PMIX_MAX_KEYLEN = 511;

    /** {@code pmix_proc_t}: {@code char nspace[PMIX_MAX_NSLEN+1]; pmix_rank_t rank;}. */
    public static final StructLayout PMIX_PROC = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(PMIX_MAX_NSLEN + 1, JAVA_BYTE).withName("nspace"),
            JAVA_INT.withName("rank")).withName("pmix_proc");

    /** {@code pmix_byte_object_t}: {@code char *bytes; size_t size;}. */
    public static final StructLayout PMIX_BYTE_OBJECT = MemoryLayout.structLayout(
            ADDRESS.withName("bytes"), JAVA_LONG.withName("size")).withName("pmix_byte_object");

    /** {@code pmix_value_t}: {@code pmix_data_type_t type;} then the 24-byte union {@code data}. */
    public static final StructLayout PMIX_VALUE = MemoryLayout.structLayout(
            JAVA_SHORT.withName("type"), MemoryLayout.paddingLayout(6),
            MemoryLayout.sequenceLayout(3, JAVA_LONG).withName("data")).withName("pmix_value"); // 24-byte union, 8-aligned

    /** {@code pmix_info_t}: {@code pmix_key_t key; pmix_info_directives_t flags; pmix_value_t value;}. */
    public static final StructLayout PMIX_INFO = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(PMIX_MAX_KEYLEN + 1, JAVA_BYTE).withName("key"),
            JAVA_INT.withName("flags"), MemoryLayout.paddingLayout(4),
            PMIX_VALUE.withName("value")).withName("pmix_info");

    public static final long PROC_RANK = PMIX_PROC.byteOffset(groupElement("rank"));
    public static final long BO_BYTES = PMIX_BYTE_OBJECT.byteOffset(groupElement("bytes"));
    public static final long BO_SIZE = PMIX_BYTE_OBJECT.byteOffset(groupElement("size"));
    public static final long VALUE_TYPE = PMIX_VALUE.byteOffset(groupElement("type"));
    public static final long VALUE_DATA = PMIX_VALUE.byteOffset(groupElement("data"));
    public static final long INFO_FLAGS = PMIX_INFO.byteOffset(groupElement("flags"));
    public static final long INFO_VALUE = PMIX_INFO.byteOffset(groupElement("value"));

    // Status codes, scope, data types (pmix_common.h).
    public static final int PMIX_SUCCESS = 0;
    public static final int PMIX_ERR_TIMEOUT = -24;
    public static final int PMIX_ERR_UNREACH = -25;
    /** {@code PMIX_RANK_WILDCARD}: UINT32_MAX-1, as the signed int the layout carries. */
    public static final int PMIX_RANK_WILDCARD = -2;
    public static final byte PMIX_GLOBAL = 3;
    public static final short PMIX_BOOL = 1;
    public static final short PMIX_SIZE = 4;
    public static final short PMIX_INT = 6;
    public static final short PMIX_UINT16 = 13;
    public static final short PMIX_UINT32 = 14;
    public static final short PMIX_STRING = 3;
    public static final short PMIX_BYTE_OBJECT_TYPE = 27;

    // Reserved keys (pmix_common.h).
    public static final String PMIX_JOB_SIZE = "pmix.job.size";
    public static final String PMIX_LOCAL_RANK = "pmix.lrank";
    public static final String PMIX_HOSTNAME = "pmix.hname";
    public static final String PMIX_COLLECT_DATA = "pmix.collect";
}
