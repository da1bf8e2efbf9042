package dev.scalep.verbs.sim;

import dev.scalep.verbs.QpType;

/**
 * A QP as the target of another QP's work sees it, whether the requester is in this process
 * ({@link SimEngine}, {@link DirectWrites}) or in another ({@link FabricAgent}): whether it takes
 * a message, its receive queue and CQ, its key checks and the error transitions a responder causes;
 * nothing else of {@link SimQp}. Sealed to the one implementation, so every call is monomorphic.
 */
sealed interface QpResponder permits SimQp {
    int qpNum();

    /**
     * Whether the QP, not destroyed and able to receive (RTR, RTS, SQD), takes work of type
     * {@code type} from QP {@code srcQpn} (an RC QP only from the QP it is connected to).
     */
    boolean accepts(QpType type, int srcQpn);

    /** The QP's access flags (set at INIT). */
    int accessFlags();

    /** The QP's base PD (a parent domain's base; MRs of the same base PD are reachable). */
    SimPd basePd();

    /**
     * Whether MR {@code m} (may be null) is reachable through this QP for {@code need} over
     * {@code [addr, addr + len)}: same base PD, range inside, access granted by both the MR and the QP.
     */
    boolean grants(SimMr m, long addr, long len, int need);

    /** The receive queue messages to this QP consume (its own, or its SRQ's). */
    SimRecvQueue receiveQueue();

    /** The CQ receive completions of this QP go to. */
    SimCq recvCq();

    /** The incarnation a responder's notice must name (see {@link QpRequester#incarnation}). */
    int incarnation();

    /** No asynchronous event: {@link #responderFault}'s event for a plain move to ERR. */
    int NO_EVENT = -1;

    /**
     * This QP, as a responder in incarnation {@code incarnation} (read before the checks that
     * refused the request), moves to ERR (once) and raises {@code event} (an {@link
     * dev.scalep.verbs.AsyncEvent} type, or {@link #NO_EVENT}), then flushes; an SRQ QP reports
     * its last WQE. Only {@link dev.scalep.verbs.AsyncEvent#QP_ACCESS_ERR} and {@code QP_REQ_ERR}
     * are limited to RC QPs. Acted on only while the QP is still in that incarnation, checked and
     * acted on as one step under its engine lock, so a fault that races a reset does not move the
     * reset QP to ERR. Never blocks: the caller may hold another QP's engine lock (two QPs that
     * target each other would deadlock), so when another thread holds this QP's engine the fault is
     * left with it, and that thread acts on it, and flushes, when it unlocks. Otherwise the flush
     * runs before this returns when {@code flushNow}, else at the caller's {@link #nudge} (after it
     * completed its own side).
     */
    void responderFault(int incarnation, int event, boolean flushNow);

    /**
     * Whether an RC request of another process's QP {@code src} (incarnation {@code srcIncarnation},
     * request sequence {@code seq}) must be dropped unanswered: this QP refused an earlier request of
     * that requester incarnation ({@link #refused}) and this is not that request again (go-back-N:
     * the requester sends everything from the refused request on again). Agent only.
     */
    boolean outOfSequence(int src, int srcIncarnation, long seq);

    /** This QP refused RC request {@code seq} of another process's QP {@code src} (RNR or an error). Agent only. */
    void refused(int src, int srcIncarnation, long seq);

    /** Ask the QP's engine to run (to flush after an error transition); never blocks. */
    void nudge();
}
