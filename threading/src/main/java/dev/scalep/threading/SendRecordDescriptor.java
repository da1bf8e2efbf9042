package dev.scalep.threading;

import org.agrona.concurrent.AtomicBuffer;

/**
 * Layout of one send work request as a binary record in the combining hand-off
 * ({@link CombiningPoster}'s Agrona ring buffer). A thread's batch of {@code n} requests is one
 * ring-buffer message of {@code n * LENGTH} bytes, records back to back:
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                        wr_id (caller's)                       |  0
 *  +---------------------------------------------------------------+
 *  |                        local address                          |  8
 *  +---------------------------------------------------------------+
 *  |                        remote address                         | 16
 *  +-------------------------------+-------------------------------+
 *  |            opcode             |        send flags             | 24
 *  +-------------------------------+-------------------------------+
 *  |            length             |           lkey                | 32
 *  +-------------------------------+-------------------------------+
 *  |             rkey              |     immediate (host order)    | 40
 *  +-------------------------------+-------------------------------+
 *  |      peer (AH table index)    |           (unused)            | 48
 *  +-------------------------------+-------------------------------+
 * </pre>
 *
 * Fields are native byte order. Not instantiable.
 */
final class SendRecordDescriptor {
    static final int WR_ID = 0;
    static final int LOCAL_ADDR = 8;
    static final int REMOTE_ADDR = 16;
    static final int OPCODE = 24;
    static final int FLAGS = 28;
    static final int LENGTH = 32;
    static final int LKEY = 36;
    static final int RKEY = 40;
    static final int IMM = 44;
    static final int PEER = 48;
    /** Bytes per record (a multiple of 8, so every record stays aligned). */
    static final int RECORD = 56;

    private SendRecordDescriptor() {
    }

    /** Write one request at byte {@code at} of {@code buf} (plain stores: the ring's commit publishes them). */
    static void write(AtomicBuffer buf, int at, long wrId, int opcode, int flags, long localAddr, int length, int lkey,
                      long remoteAddr, int rkey, int imm, int peer) {
        buf.putLong(at + WR_ID, wrId);
        buf.putLong(at + LOCAL_ADDR, localAddr);
        buf.putLong(at + REMOTE_ADDR, remoteAddr);
        buf.putInt(at + OPCODE, opcode);
        buf.putInt(at + FLAGS, flags);
        buf.putInt(at + LENGTH, length);
        buf.putInt(at + LKEY, lkey);
        buf.putInt(at + RKEY, rkey);
        buf.putInt(at + IMM, imm);
        buf.putInt(at + PEER, peer);
    }
}
