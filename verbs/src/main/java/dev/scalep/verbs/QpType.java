package dev.scalep.verbs;

/** Queue-pair transport types. */
public enum QpType {
    /** Reliable connected: one QP talks to exactly one remote QP, in order. */
    RC(2),
    /** Unreliable datagram: sends only, addressed per WR through an address handle. */
    UD(4),
    /** EFA scalable reliable datagram: reliable, connectionless, out of order ({@code IBV_QPT_DRIVER}). */
    SRD(255);

    /** The {@code enum ibv_qp_type} value. */
    public final int code;

    QpType(int code) {
        this.code = code;
    }

    /** Whether one QP reaches many peers through address handles on each WR. */
    public boolean connectionless() {
        return this != RC;
    }
}
