package dev.scalep.verbs;

/** Completion status values ({@code enum ibv_wc_status}) and their names. */
public final class WcStatus {
    private WcStatus() {
    }

    public static final int SUCCESS = 0;
    public static final int LOC_LEN_ERR = 1;
    public static final int LOC_QP_OP_ERR = 2;
    public static final int LOC_PROT_ERR = 4;
    public static final int WR_FLUSH_ERR = 5;
    public static final int REM_INV_REQ_ERR = 9;
    public static final int REM_ACCESS_ERR = 10;
    public static final int REM_OP_ERR = 11;
    public static final int RETRY_EXC_ERR = 12;
    public static final int RNR_RETRY_EXC_ERR = 13;
    public static final int GENERAL_ERR = 21;

    /** The symbolic name, as {@code ibv_wc_status_str} would identify it. */
    public static String name(int status) {
        return switch (status) {
            case SUCCESS -> "SUCCESS";
            case LOC_LEN_ERR -> "LOC_LEN_ERR";
            case LOC_QP_OP_ERR -> "LOC_QP_OP_ERR";
            case LOC_PROT_ERR -> "LOC_PROT_ERR";
            case WR_FLUSH_ERR -> "WR_FLUSH_ERR";
            case REM_INV_REQ_ERR -> "REM_INV_REQ_ERR";
            case REM_ACCESS_ERR -> "REM_ACCESS_ERR";
            case REM_OP_ERR -> "REM_OP_ERR";
            case RETRY_EXC_ERR -> "RETRY_EXC_ERR";
            case RNR_RETRY_EXC_ERR -> "RNR_RETRY_EXC_ERR";
            case GENERAL_ERR -> "GENERAL_ERR";
            default -> "STATUS_" + status;
        };
    }
}
