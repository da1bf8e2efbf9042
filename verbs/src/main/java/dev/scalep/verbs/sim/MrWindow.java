package dev.scalep.verbs.sim;

import java.lang.foreign.MemorySegment;

/**
 * The last peer MR one QP's initiator resolved in the current engine run (its engine lock held):
 * the directory entry's fields as read and range-checked once, the entry's epoch, and the peer
 * file's mapping. The WRs of one run (a postlist one doorbell covers) to one remote buffer
 * then cost the range check against these fields and the mapping and an epoch check (per WR on the
 * ordinary path, {@link FabricDirectory#mrCurrent}; per stretch of WRs up to a signaled one in
 * {@link DirectWrites}), not a directory walk; a deregistered MR fails the epoch check and is
 * resolved (and refused) again. The next run reads the entry
 * afresh, so even a peer that rewrites an entry without bumping its epoch is seen at the next post.
 */
final class MrWindow {
    int rkey;
    int dqpn;
    int pdId;
    int need;
    int proc;
    int epoch;
    int file;
    long fileOffset;
    long address;
    long length;
    /** The peer file's mapping, or null when the window is not valid. */
    MemorySegment mapping;
    /** The engine run ({@link SimEngine#runs}) that resolved it: a window never outlives its run. */
    long run;

    void set(int rkey, int dqpn, int pdId, int need, int proc, int epoch, int file, long fileOffset, long address,
             long length) {
        this.rkey = rkey;
        this.dqpn = dqpn;
        this.pdId = pdId;
        this.need = need;
        this.proc = proc;
        this.epoch = epoch;
        this.file = file;
        this.fileOffset = fileOffset;
        this.address = address;
        this.length = length;
    }

    /** Whether this window was resolved in engine run {@code run} for the same key, target QP, PD and access. */
    boolean matches(long run, int rkey, int dqpn, int pdId, int need) {
        return mapping != null && this.run == run && this.rkey == rkey && this.dqpn == dqpn && this.pdId == pdId && this.need == need;
    }

    /**
     * The offset in {@link #mapping} of {@code [raddr, raddr + len)}, or -1 when the range leaves
     * the MR or the mapping (bounds come from the mapping itself, never from the directory alone).
     */
    long offsetOf(long raddr, long len) {
        if (len < 0 || raddr < address || raddr - address > length - len) {
            return -1;
        }
        long off = fileOffset + (raddr - address);
        return off > mapping.byteSize() - len ? -1 : off;
    }
}
