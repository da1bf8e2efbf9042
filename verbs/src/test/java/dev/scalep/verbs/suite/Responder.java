package dev.scalep.verbs.suite;

import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.suite.VerbsBehaviourSuite.Wc;

import java.util.List;

/**
 * The responder side of a suite test: its own context, PD, CQ, registered memory, one or more QPs
 * (optionally on one SRQ). The suite reaches it only through this interface, so the responder can
 * live in this JVM ({@link LocalResponder}) or in another process, driven through a pipe; only what
 * real peers exchange out of band (QP address, MR address and rkey) and what the responder's owner
 * observes (completions, bytes, states, events) crosses it.
 */
public interface Responder extends AutoCloseable {
    /** What to create: QP type, queue depth, inline size, MR access, QP count, SRQ depth (0: none), path MTU (0: automatic). */
    record Spec(QpType type, int depth, int inline, int mrAccess, int qps, int srqDepth, int pathMtu) {
        public static Spec of(QpType type, int depth, int inline, int mrAccess) {
            return new Spec(type, depth, inline, mrAccess, 1, 0, 0);
        }
    }

    /** What {@code ibv_post_recv} answered and the index of the first WR it did not take. */
    record RecvResult(int rc, int badIndex) {
    }

    /** An asynchronous event as the responder's owner sees it: {@code qpIndex} is which of its QPs the event names (-1: none). */
    record Event(int type, String typeName, int qpNum, int qpIndex) {
    }

    QpAddress address(int qp);

    default QpAddress address() {
        return address(0);
    }

    default int qpNum() {
        return address(0).qpn();
    }

    long mrAddress();

    int rkey();

    /** RTR (RC: to {@code peer}) and RTS; for UD and SRD also an address handle to {@code peer}. */
    void connect(int qp, QpAddress peer, int retryCount, int rnrRetry);

    /** QP 0: RESET, INIT, RTR to {@code peer} (RC), RTS with retry and RNR retry 7. */
    void reconnect(QpAddress peer);

    /** {@code n} receives (ids from {@code firstId}), each one SGE of {@code len} at {@code off + k * stride}, to the SRQ if there is one, else QP 0. */
    RecvResult postRecv(long firstId, int n, long off, long stride, int len);

    default int postRecv(long id, long off, int len) {
        return postRecv(id, 1, off, 0, len).rc();
    }

    /** Polls until {@code n} completions arrived or {@code timeoutNanos} passed; returns what arrived. */
    List<Wc> poll(int n, long timeoutNanos);

    /** Polls a while and returns what arrived (expected: nothing). */
    List<Wc> drain();

    byte[] bytes(long off, int len);

    void fill(long off, int len, int seed);

    /** Destroys QP 0 (the peer is gone). */
    void closeQp();

    QpState state();

    int maxRecvWr();

    int pathMtu(int qp);

    int srqPosted();

    /** Tries to destroy the SRQ: 0, or the errno of the refusal. */
    int closeSrq();

    /** The responder context's asynchronous events within {@code nanos}; stops early at one naming QP 0 when {@code untilQpEvent}. */
    List<Event> events(long nanos, boolean untilQpEvent);

    /**
     * Start {@code n} fetch-and-adds of 1 on this responder's own word at {@code off} of its MR, from a
     * requester QP of its own context connected (loopback) to its QP {@code qp}, in a thread of the
     * responder's process, and return at once: atomics from the responder's process that race with
     * the suite's. The MR and QP must grant REMOTE_ATOMIC.
     */
    void startFetchAdds(int qp, int n, long off);

    /** Wait for {@link #startFetchAdds} to end; the original values its adds fetched, in completion order. */
    long[] joinFetchAdds();

    @Override
    void close();
}
