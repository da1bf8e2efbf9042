package dev.scalep.verbs.sim;

import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * The byte layout of a fabric segment, the file in the user's private directory under
 * {@code /dev/shm} ({@code scalep-<uid>/<mlx5|efa>-<job>}) that every process of one
 * user, device and job maps to reach the same simulated NIC. All offsets are from the start of the
 * file; all numbers are little endian (the machine's order).
 *
 * <pre>
 *  0            HEADER (4 KiB): magic u64 | version i32 | maxProcs i32 | ringCapacity i32 |
 *                               qpSlots i32 | mrSlots i32
 *  4096         PROCESS TABLE: MAX_PROCS entries of 64 bytes
 *                 +0  owner  i64   pid &lt;&lt; 32 | low 32 bits of its start time (0 = free)
 *                 +8  epoch  i32   incremented by every process that claims the entry
 *                 +16 lease  i64   the owner's CLOCK_MONOTONIC in ms, renewed every 50 ms by its agent
 *                 +24 pidns  i64   inode of the owner's pid namespace (0: its pid cannot be checked)
 *  AREA(p)      per process p (1..MAX_PROCS-1), AREA_BYTES each:
 *                 +0               inbound ring: Agrona ManyToOneRingBuffer, RING_CAPACITY + trailer
 *                 +RING_BYTES      QP directory: QP_SLOTS entries of QP_STRIDE bytes
 *                                    +0 qpn i32 (0 = none; written last) +4 state +8 type
 *                                    +12 access +16 pdId +20 remoteQpn
 *                                    +24 incarnation (bumped on ERR and RESET)
 *                 +.. MR directory: MR_SLOTS entries of MR_STRIDE bytes
 *                                    +0 key i32 (0 = none; written last) +4 access +8 pdId
 *                                    +12 fileNo +16 fileOffset i64 +24 length i64 +32 address i64
 *                                    +40 epoch i32 (bumped by every publish and clear of the entry;
 *                                        a compatible addition: it was zero padding before)
 * </pre>
 *
 * A QPN and an rkey name their owner: {@code id = generation | proc << slotBits | slot}, so the
 * directory entry of an id is found by arithmetic and ids are unique across the fabric. Nothing
 * read from the segment is trusted: every reader checks ranges before using a value.
 */
final class FabricLayout {
    static final long MAGIC = 0x7363616c65704661L; // "scalepFa"
    static final int VERSION = 2;
    static final int MAX_PROCS = 64;
    static final int PROC_BITS = 6;

    static final int QP_SLOT_BITS = 13;
    static final int QP_ID_BITS = 24;
    static final int MR_SLOT_BITS = 14;
    static final int MR_ID_BITS = 31;
    static final int QP_SLOTS = 1 << QP_SLOT_BITS;
    static final int MR_SLOTS = 1 << MR_SLOT_BITS;

    static final int RING_CAPACITY = 1024 * 1024;
    static final int RING_BYTES = RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH;

    static final int HEADER_BYTES = 4096;
    static final int PROC_TABLE = HEADER_BYTES;
    static final int PROC_STRIDE = 64;
    static final int PROC_OWNER = 0;
    static final int PROC_EPOCH = 8;
    static final int PROC_LEASE = 16;
    static final int PROC_PIDNS = 24;

    static final int QP_STRIDE = 32;
    static final int QP_QPN = 0, QP_STATE = 4, QP_TYPE = 8, QP_ACCESS = 12, QP_PD = 16, QP_REMOTE = 20,
            QP_INCARNATION = 24;
    static final int MR_STRIDE = 48;
    static final int MR_KEY = 0, MR_ACCESS = 4, MR_PD = 8, MR_FILE = 12, MR_FILE_OFFSET = 16, MR_LENGTH = 24,
            MR_ADDRESS = 32, MR_EPOCH = 40;

    static final int QP_DIR = RING_BYTES;
    static final int MR_DIR = QP_DIR + QP_SLOTS * QP_STRIDE;
    static final int AREA_BYTES = align(MR_DIR + MR_SLOTS * MR_STRIDE, 4096);
    static final int AREAS = align(PROC_TABLE + MAX_PROCS * PROC_STRIDE, 4096);
    static final long FILE_BYTES = AREAS + (long) MAX_PROCS * AREA_BYTES;

    /** Shared allocations one process may create while joined (file numbers are never reused). */
    static final int MAX_FILES = 1 << 15;

    private FabricLayout() {
    }

    static int align(int v, int a) {
        return (v + a - 1) & -a;
    }

    static int procEntry(int p) {
        return PROC_TABLE + p * PROC_STRIDE;
    }

    static int area(int p) {
        return AREAS + p * AREA_BYTES;
    }

    static int qpEntry(int p, int qpn) {
        return area(p) + QP_DIR + (qpn & (QP_SLOTS - 1)) * QP_STRIDE;
    }

    static int mrEntry(int p, int key) {
        return area(p) + MR_DIR + (key & (MR_SLOTS - 1)) * MR_STRIDE;
    }

    /** The owning process slot named by a QPN (0 for a device not on a fabric). */
    static int procOfQpn(int qpn) {
        return (qpn >>> QP_SLOT_BITS) & (MAX_PROCS - 1);
    }

    /** The owning process slot named by an rkey. */
    static int procOfKey(int key) {
        return (key >>> MR_SLOT_BITS) & (MAX_PROCS - 1);
    }
}
