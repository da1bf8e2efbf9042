package dev.scalep.threading;

import dev.scalep.verbs.Errno;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QueuePair;

/**
 * The send path of a QP used by one thread: fills the postlist and rings the doorbell directly,
 * without a lock (with a thread domain and parent domain the provider takes none either).
 * {@link #post} must be called by one thread at a time; the caller serialises it (the endpoint
 * layer binds it to its owner thread). {@link #retire} may run on the CQ poller's thread.
 */
public final class ExclusivePoster extends AbstractSendPath {
    public ExclusivePoster(QueuePair qp, int maxBatch, int owners, int peers, PostFailureHandler onFailure) {
        super(qp, maxBatch, owners, peers, onFailure);
    }

    @Override
    public int post(SendBatch b) {
        int n = b.count();
        if (n > maxBatch) {
            return Errno.EINVAL;
        }
        if (n == 0) {
            return 0;
        }
        if (!credits.tryTake(n)) {
            return EAGAIN;
        }
        for (int i = 0; i < n; i++) {
            append(b.wrId[i], b.opcode[i], b.flags[i], b.localAddr[i], b.length[i], b.lkey[i],
                    b.remoteAddr[i], b.rkey[i], b.imm[i], b.peer[i]);
        }
        return postList();
    }

    @Override
    public int post(long wrId, Opcode op, int flags, long localAddr, int length, int lkey,
                    long remoteAddr, int rkey, int imm, int peer) {
        if (!credits.tryTake(1)) {
            return EAGAIN;
        }
        append(wrId, op.code, flags, localAddr, length, lkey, remoteAddr, rkey, imm, peer);
        return postList();
    }
}
