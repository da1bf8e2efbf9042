package dev.scalep.verbs;

/** Queue-pair states ({@code enum ibv_qp_state}) and the transitions the runtime allows. */
public enum QpState {
    RESET(0), INIT(1), RTR(2), RTS(3), SQD(4), SQE(5), ERR(6);

    /** The verbs ABI value. */
    public final int code;

    QpState(int code) {
        this.code = code;
    }

    /**
     * Whether {@code this → to} is a legal modify-QP transition (IB spec 10.3.1, as used by
     * {@code ibv_modify_qp(3)}): RESET→INIT, INIT→INIT/RTR, RTR→RTS, RTS→RTS/SQD, SQD→RTS, any→ERR,
     * any→RESET.
     */
    public boolean canMoveTo(QpState to) {
        if (to == ERR || to == RESET) {
            return true;
        }
        return switch (this) {
            case RESET -> to == INIT;
            case INIT -> to == INIT || to == RTR;
            case RTR -> to == RTS;
            case RTS -> to == RTS || to == SQD;
            case SQD -> to == RTS || to == SQD;
            case SQE -> to == RTS;
            case ERR -> false;
        };
    }

    /** Whether the send queue accepts work in this state. */
    public boolean canPostSend() {
        return this == RTS || this == SQD;
    }

    /** Whether the receive queue accepts work in this state (verbs allows posting receives from INIT). */
    public boolean canPostRecv() {
        return this != RESET;
    }
}
