package dev.scalep.verbs;

import dev.scalep.verbs.counters.Events;

/**
 * One asynchronous event of a {@link Context} ({@code struct ibv_async_event}), already acknowledged
 * ({@code ibv_ack_async_event}) by the runtime when {@link Context#pollAsyncEvent} returns it, so that
 * destroying the affected object never waits for it.
 *
 * <p>Exactly one of {@link #qp}, {@link #cq}, {@link #srq} is non-null for an affiliated event (QP, CQ
 * or SRQ events); port events carry {@link #portNum} (else 0); device events carry nothing. An
 * element that was created outside this runtime or destroyed meanwhile is null, and {@link #qpNum}
 * still names a QP the kernel reported (-1 when unknown). Values of {@link #type} are those of
 * rdma-core's {@code enum ibv_event_type}. Immutable.
 */
public record AsyncEvent(int type, QueuePair qp, int qpNum, CompletionQueue cq, SharedReceiveQueue srq,
                         int portNum) {
    public static final int CQ_ERR = 0;
    public static final int QP_FATAL = 1;
    public static final int QP_REQ_ERR = 2;
    public static final int QP_ACCESS_ERR = 3;
    public static final int COMM_EST = 4;
    public static final int SQ_DRAINED = 5;
    public static final int PATH_MIG = 6;
    public static final int PATH_MIG_ERR = 7;
    public static final int DEVICE_FATAL = 8;
    public static final int PORT_ACTIVE = 9;
    public static final int PORT_ERR = 10;
    public static final int LID_CHANGE = 11;
    public static final int PKEY_CHANGE = 12;
    public static final int SM_CHANGE = 13;
    public static final int SRQ_ERR = 14;
    public static final int SRQ_LIMIT_REACHED = 15;
    public static final int QP_LAST_WQE_REACHED = 16;
    public static final int CLIENT_REREGISTER = 17;
    public static final int GID_CHANGE = 18;
    public static final int WQ_FATAL = 19;

    private static final String[] NAMES = {"CQ_ERR", "QP_FATAL", "QP_REQ_ERR", "QP_ACCESS_ERR", "COMM_EST",
            "SQ_DRAINED", "PATH_MIG", "PATH_MIG_ERR", "DEVICE_FATAL", "PORT_ACTIVE", "PORT_ERR", "LID_CHANGE",
            "PKEY_CHANGE", "SM_CHANGE", "SRQ_ERR", "SRQ_LIMIT_REACHED", "QP_LAST_WQE_REACHED", "CLIENT_REREGISTER",
            "GID_CHANGE", "WQ_FATAL"};

    /** Every event is recorded in JFR when it is made (raised by the simulator, read from the device on ibv). */
    public AsyncEvent {
        Events.asyncEvent(name(type), qpNum);
    }

    /** A QP event. */
    public static AsyncEvent ofQp(int type, QueuePair qp) {
        return new AsyncEvent(type, qp, qp.qpNum(), null, null, 0);
    }

    /** A CQ event. */
    public static AsyncEvent ofCq(int type, CompletionQueue cq) {
        return new AsyncEvent(type, null, -1, cq, null, 0);
    }

    /** An SRQ event. */
    public static AsyncEvent ofSrq(int type, SharedReceiveQueue srq) {
        return new AsyncEvent(type, null, -1, null, srq, 0);
    }

    /** The name of an event type without the {@code IBV_EVENT_} prefix, e.g. {@code QP_ACCESS_ERR}. */
    public static String name(int type) {
        return type >= 0 && type < NAMES.length ? NAMES[type] : "UNKNOWN(" + type + ")";
    }

    /** Whether {@code type} is affiliated with a QP (carries {@link #qp}/{@link #qpNum}). */
    public static boolean isQpEvent(int type) {
        return switch (type) {
            case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, COMM_EST, SQ_DRAINED, PATH_MIG, PATH_MIG_ERR,
                 QP_LAST_WQE_REACHED -> true;
            default -> false;
        };
    }

    /** Whether {@code type} is affiliated with a CQ. */
    public static boolean isCqEvent(int type) {
        return type == CQ_ERR;
    }

    /** Whether {@code type} is affiliated with an SRQ. */
    public static boolean isSrqEvent(int type) {
        return type == SRQ_ERR || type == SRQ_LIMIT_REACHED;
    }

    /** Whether {@code type} is a port event (carries {@link #portNum}). */
    public static boolean isPortEvent(int type) {
        return switch (type) {
            case PORT_ACTIVE, PORT_ERR, LID_CHANGE, PKEY_CHANGE, SM_CHANGE, CLIENT_REREGISTER, GID_CHANGE -> true;
            default -> false;
        };
    }

    /** {@link #name(int)} of this event's type. */
    public String typeName() {
        return name(type);
    }

    @Override
    public String toString() {
        String what = qp != null || qpNum >= 0 ? " QP " + qpNum : cq != null ? " " + cq : srq != null ? " " + srq
                : isPortEvent(type) ? " port " + portNum : "";
        return typeName() + what;
    }
}
