package dev.scalep.verbs.sim;

import dev.scalep.verbs.QpState;

/**
 * A QP as the parts of its own send side see it ({@link SimEngine}, {@link DirectWrites},
 * {@link RemotePath}, and a receive queue holding it as a waiting sender): the state they read at
 * run time and the transitions and signals they may cause, nothing else of {@link SimQp}. The
 * parts get what is fixed at create time (QPN, type, device, PD, their sibling parts) as
 * constructor arguments and call nothing here while being built, so the order in which the QP
 * builds them is a plain data dependency. Sealed to the one implementation, so every call is
 * monomorphic.
 */
sealed interface QpRequester permits SimQp {
    QpState state();

    /** The connected QPN (RC; set at RTR). */
    int remoteQpn();

    /** rnr_retry as set at RTS (7: retry for ever). */
    int rnrRetry();

    /** The incarnation requests of this QP carry (bumped on every move to ERR or RESET). */
    int incarnation();

    /** Whether a progress tick was requested since the last call (clears it). */
    boolean takeTick();

    /** The one error transition (once): ERR, and an SRQ QP reports its last WQE. */
    void moveToError();

    /** Flush the QP's own receive queue (in ERR), if it has one. */
    void flushOwnReceives();

    /** Ask the QP's engine to run (from another thread, or from inside a delivery); never blocks. */
    void nudge();

    /** The engine waits for an answer from another process: run it again at the next progress. */
    void awaitRemote();

    /** Another process answered slot s's request ({@link RemotePath#onResponse}); then run the engine. */
    void answered(int s, long seq, int status);

    /** Count {@code n} inline WQEs the post-time write path executed. */
    void countInline(long n);
}
