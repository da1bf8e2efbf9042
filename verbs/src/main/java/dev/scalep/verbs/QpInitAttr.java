package dev.scalep.verbs;

/**
 * Queue-pair creation attributes ({@code struct ibv_qp_init_attr}).
 *
 * @param type       transport
 * @param sendCq     CQ for send completions
 * @param recvCq     CQ for receive completions (may equal {@code sendCq})
 * @param srq        shared receive queue, or {@code null} for a private receive queue
 * @param maxSendWr  send queue depth
 * @param maxRecvWr  receive queue depth (ignored with an SRQ)
 * @param maxSendSge SGEs per send WR
 * @param maxRecvSge SGEs per receive WR
 * @param maxInline  inline bytes per send WR (0: inline not used)
 * @param sigAll     every send WR generates a completion regardless of its flags
 * @param connection port, GID, path MTU and RC timing knobs ({@code null}: {@link ConnectionOptions#DEFAULTS})
 */
public record QpInitAttr(QpType type, CompletionQueue sendCq, CompletionQueue recvCq, SharedReceiveQueue srq,
                         int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInline,
                         boolean sigAll, ConnectionOptions connection) {

    public QpInitAttr {
        if (connection == null) {
            connection = ConnectionOptions.DEFAULTS;
        }
    }

    /** Attributes with the default connection options. */
    public QpInitAttr(QpType type, CompletionQueue sendCq, CompletionQueue recvCq, SharedReceiveQueue srq,
                      int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInline, boolean sigAll) {
        this(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInline, sigAll, null);
    }

    /** A QP of {@code type} with both directions on {@code cq}, depth {@code depth}, 1 SGE, no inline. */
    public static QpInitAttr of(QpType type, CompletionQueue cq, int depth) {
        return new QpInitAttr(type, cq, cq, null, depth, depth, 1, 1, 0, false);
    }

    public QpInitAttr withCqs(CompletionQueue send, CompletionQueue recv) {
        return new QpInitAttr(type, send, recv, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInline, sigAll, connection);
    }

    public QpInitAttr withSrq(SharedReceiveQueue s) {
        return new QpInitAttr(type, sendCq, recvCq, s, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInline, sigAll, connection);
    }

    public QpInitAttr withDepths(int send, int recv) {
        return new QpInitAttr(type, sendCq, recvCq, srq, send, recv, maxSendSge, maxRecvSge, maxInline, sigAll, connection);
    }

    public QpInitAttr withSges(int send, int recv) {
        return new QpInitAttr(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, send, recv, maxInline, sigAll, connection);
    }

    public QpInitAttr withInline(int bytes) {
        return new QpInitAttr(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, bytes, sigAll, connection);
    }

    public QpInitAttr withSigAll(boolean on) {
        return new QpInitAttr(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInline, on, connection);
    }

    public QpInitAttr withConnection(ConnectionOptions c) {
        return new QpInitAttr(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInline, sigAll, c);
    }
}
