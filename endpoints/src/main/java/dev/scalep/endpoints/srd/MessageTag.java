package dev.scalep.endpoints.srd;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * The 64-bit tag of a length-then-payload message and the 16-byte header that carries it.
 *
 * <pre>
 * tag:    63 62 | 61 ........ 32 | 31 ........ 0
 *         kind  | 0 (reserved)   | message id
 * header: long tag | int length | int flags      (native byte order, at the start of every send)
 * flags:  bit 0 RETRANSMIT; bits 31..16 attempt number (0 for the first post)
 * </pre>
 *
 * {@link #LENGTH}: the header's length is the message's payload length, no bytes follow.
 * {@link #PAYLOAD}: the header is followed by {@code length} payload bytes (gathered from the
 * caller's buffer as a second SGE, never copied). Immediate data is not used, so the format works
 * over plain sends on SRD, UD and RC alike.
 */
public final class MessageTag {
    public static final long LENGTH = 1L << 62;
    public static final long PAYLOAD = 2L << 62;
    public static final long KIND_MASK = 3L << 62;
    public static final long ID_MASK = 0xFFFF_FFFFL;
    /** Match on the kind only: any id (how the receiver takes length messages). */
    public static final long WILDCARD_ID = KIND_MASK;
    /** Match kind and id exactly. */
    public static final long EXACT = -1L;
    public static final int HEADER_BYTES = 16;
    public static final int RETRANSMIT = 1;

    private MessageTag() {
    }

    public static long length(int id) {
        return LENGTH | (id & ID_MASK);
    }

    public static long payload(int id) {
        return PAYLOAD | (id & ID_MASK);
    }

    public static long kind(long tag) {
        return tag & KIND_MASK;
    }

    public static int id(long tag) {
        return (int) tag;
    }

    /** Whether {@code tag} matches a receive posted for {@code want} under {@code mask}. */
    public static boolean matches(long tag, long want, long mask) {
        return ((tag ^ want) & mask) == 0;
    }

    static void writeHeader(MemorySegment m, long off, long tag, int length, int flags) {
        m.set(JAVA_LONG_UNALIGNED, off, tag);
        m.set(JAVA_INT_UNALIGNED, off + 8, length);
        m.set(JAVA_INT_UNALIGNED, off + 12, flags);
    }

    static long tag(MemorySegment m, long off) {
        return m.get(JAVA_LONG_UNALIGNED, off);
    }

    static int headerLength(MemorySegment m, long off) {
        return m.get(JAVA_INT_UNALIGNED, off + 8);
    }

    static int flags(MemorySegment m, long off) {
        return m.get(JAVA_INT_UNALIGNED, off + 12);
    }
}
