package dev.scalep.threading;

import dev.scalep.verbs.Opcode;

/** Test shorthand for staging RDMA writes into a {@link SendBatch}. */
final class Requests {
    private Requests() {
    }

    /** Stage an RDMA write of {@code length} bytes at {@code local} to {@code remote}; returns its index. */
    static int write(SendBatch b, long wrId, int flags, long local, int length, int lkey, long remote, int rkey) {
        int i = b.add(wrId, Opcode.RDMA_WRITE, flags);
        b.local(i, local, length, lkey).remote(i, remote, rkey);
        return i;
    }

    /** A batch of one RDMA write. */
    static SendBatch write(long wrId, int flags, long local, int length, int lkey, long remote, int rkey) {
        SendBatch b = new SendBatch(1);
        write(b, wrId, flags, local, length, lkey, remote, rkey);
        return b;
    }
}
