package dev.scalep.verbs;

/** {@code enum ibv_access_flags} bits for memory registration and QP access. */
public final class Access {
    private Access() {
    }

    public static final int LOCAL_WRITE = 1;
    public static final int REMOTE_WRITE = 2;
    public static final int REMOTE_READ = 4;
    public static final int REMOTE_ATOMIC = 8;
    /** Local write plus remote read and write: what RDMA targets usually register with. */
    public static final int ALL_RDMA = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ;
}
