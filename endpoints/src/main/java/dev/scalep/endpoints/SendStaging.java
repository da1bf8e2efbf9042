package dev.scalep.endpoints;

import dev.scalep.threading.CompletionRouter;
import dev.scalep.threading.SendBatch;
import dev.scalep.threading.SendPath;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.SendFlags;

/**
 * Where an endpoint stages its send work requests until it posts them as one postlist: a
 * {@link SendBatch} handed to the endpoint's {@link SendPath} ({@link Batch}), or the records of
 * a {@link ChainedPoster}'s pool ({@link Chain}). The endpoint's one send path (stage, post when
 * due, flush) runs over either. Owner thread only; no allocation.
 */
abstract class SendStaging {
    /** Requests accepted by the send path (posted or handed to a combiner), refused ones included. */
    long posted;

    /** Requests staged and not yet posted. */
    abstract int staged();

    /** Whether the next request must wait for a post (the list is at its postlist or its end). */
    abstract boolean due();

    /**
     * Stage one request ({@code headerLength > 0}: a header SGE before the payload). 0, or
     * {@link SendPath#EAGAIN} when nothing could be staged for lack of credits.
     */
    abstract int add(long wrId, Opcode op, int flags, long headerAddr, int headerLength, long localAddr, int length,
                     int lkey, long remoteAddr, int rkey, int imm, int dest);

    /** Post what is staged: 0, {@link SendPath#EAGAIN} (kept staged: poll, then post again) or an errno. */
    abstract int post();

    /** Set SIGNALED on the last staged request. */
    abstract void signalLast();

    /** Drop what is staged (a flush write that found no room). */
    abstract void discard();

    /** The poster's own list: credits are taken when the batch is posted. */
    static final class Batch extends SendStaging {
        private final SendBatch batch;
        private final SendPath path;
        private final CompletionRouter router;

        Batch(SendBatch batch, SendPath path, CompletionRouter router) {
            this.batch = batch;
            this.path = path;
            this.router = router;
        }

        @Override
        int staged() {
            return batch.count();
        }

        @Override
        boolean due() {
            return batch.isFull();
        }

        @Override
        int add(long wrId, Opcode op, int flags, long headerAddr, int headerLength, long localAddr, int length, int lkey,
                long remoteAddr, int rkey, int imm, int dest) {
            batch.add(wrId, op, flags, localAddr, length, lkey, remoteAddr, rkey, imm, dest);
            return 0;
        }

        @Override
        int post() {
            int n = batch.count();
            if (n == 0) {
                return 0;
            }
            int rc = path.post(batch);
            if (rc == 0 || rc != SendPath.EAGAIN) {
                posted += n; // the refused ones are settled through the path's rejected(owner)
                batch.clear();
            } else {
                router.progress();
            }
            return rc;
        }

        @Override
        void signalLast() {
            int n = batch.count();
            if (n > 0) {
                batch.flags(n - 1, batch.flags(n - 1) | SendFlags.SIGNALED);
            }
        }

        @Override
        void discard() {
            batch.clear();
        }
    }

    /** A per-thread QP's WR pool: credits are taken as each request is staged into its record. */
    static final class Chain extends SendStaging {
        private final ChainedPoster chain;
        private final int postlist;

        Chain(ChainedPoster chain, int postlist) {
            this.chain = chain;
            this.postlist = postlist;
        }

        @Override
        int staged() {
            return chain.staged();
        }

        @Override
        boolean due() {
            return chain.chainFull() || chain.staged() >= postlist;
        }

        @Override
        int add(long wrId, Opcode op, int flags, long headerAddr, int headerLength, long localAddr, int length, int lkey,
                long remoteAddr, int rkey, int imm, int dest) {
            return chain.stage(wrId, op, flags, headerAddr, headerLength, localAddr, length, lkey, remoteAddr, rkey, imm);
        }

        @Override
        int post() {
            int n = chain.staged();
            if (n == 0) {
                return 0;
            }
            int rc = chain.postStaged();
            posted += n; // the refused ones are settled through the path's rejected(owner)
            return rc;
        }

        @Override
        void signalLast() {
            chain.signalLast();
        }

        @Override
        void discard() {
            chain.discardStaged();
        }
    }
}
