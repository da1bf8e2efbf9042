package dev.scalep.endpoints.srd;

/**
 * The 32-bit immediate of every write-with-immediate an {@link OrderedSender} posts:
 *
 * <pre>
 *  31 30 | 29 ............ 14 | 13 ........ 0
 *  kind  | sequence (16 bits) | payload (14 bits)
 * </pre>
 *
 * <ul>
 *   <li>{@link #DATA}: an RDMA write; payload unused (0).</li>
 *   <li>{@link #ATOMIC}: a zero-length write carrying a fetch-add: payload bits 13..8 are the counter
 *       index (0..63), bits 7..0 the addend (0..255).</li>
 *   <li>{@link #ATOMIC_EXT}: a fetch-add whose operands do not fit: the write carries 16 bytes
 *       {@code (int counter, int 0, long addend)} into the receiver's side table at slot
 *       {@code seq mod window}; payload unused.</li>
 * </ul>
 *
 * The sequence field is the low 16 bits of the sender's 64-bit sequence number and wraps. The
 * receiver widens it against its lowest undelivered sequence {@code head}: the sender never has more
 * than {@code window <= 2^15} operations beyond {@code head} in flight, so the value
 * {@code head + ((s16 - head) mod 2^16)} is unambiguous; a distance of {@code >= 2^15} means a
 * sequence below {@code head} (a retransmitted duplicate).
 */
public final class ImmCodec {
    public static final int DATA = 0;
    public static final int ATOMIC = 1;
    public static final int ATOMIC_EXT = 2;
    public static final int SEQ_BITS = 16;
    public static final int SEQ_MASK = (1 << SEQ_BITS) - 1;
    /** Largest window (in-flight limit) the encoding supports. */
    public static final int MAX_WINDOW = 1 << (SEQ_BITS - 1);
    public static final int MAX_INLINE_COUNTER = 63;
    public static final int MAX_INLINE_ADDEND = 255;

    private ImmCodec() {
    }

    public static int encode(int kind, long seq, int payload) {
        return (kind << 30) | ((int) (seq & SEQ_MASK) << 14) | (payload & 0x3FFF);
    }

    public static int kind(int imm) {
        return imm >>> 30;
    }

    public static int seq16(int imm) {
        return (imm >>> 14) & SEQ_MASK;
    }

    public static int payload(int imm) {
        return imm & 0x3FFF;
    }

    /** Whether a fetch-add fits in the immediate. */
    public static boolean fitsInline(int counter, long addend) {
        return counter >= 0 && counter <= MAX_INLINE_COUNTER && addend >= 0 && addend <= MAX_INLINE_ADDEND;
    }

    public static int atomicPayload(int counter, long addend) {
        return (counter << 8) | (int) addend;
    }

    public static int atomicCounter(int payload) {
        return payload >>> 8;
    }

    public static int atomicAddend(int payload) {
        return payload & 0xFF;
    }

    /** Widen a 16-bit sequence against {@code head}; a result below {@code head} is a duplicate. */
    public static long widen(int seq16, long head) {
        int d = (seq16 - (int) head) & SEQ_MASK;
        return d >= MAX_WINDOW ? head + d - (1 << SEQ_BITS) : head + d;
    }
}
