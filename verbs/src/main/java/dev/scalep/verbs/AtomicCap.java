package dev.scalep.verbs;

/**
 * A device's remote-atomics guarantee ({@code enum ibv_atomic_cap}, {@code ibv_device_attr.atomic_cap}).
 * The verbs rule in every case: an atomic is atomic against other atomics of the same device (HCA)
 * or of every device (GLOB) on the same word, never against CPU stores or RDMA writes to it.
 */
public enum AtomicCap {
    /** {@code IBV_ATOMIC_NONE}: no remote atomics (EFA). */
    NONE(0),
    /** {@code IBV_ATOMIC_HCA}: atomic against atomics of this device (ConnectX, rxe). */
    HCA(1),
    /** {@code IBV_ATOMIC_GLOB}: atomic also against other devices and the CPU's atomic instructions. */
    GLOB(2);

    /** The verbs ABI value. */
    public final int code;

    AtomicCap(int code) {
        this.code = code;
    }

    /** The value for an ABI code; an unknown code (a newer kernel) counts as {@link #NONE}. */
    public static AtomicCap of(int code) {
        for (AtomicCap c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return NONE;
    }

    /** Whether remote atomics are available at all. */
    public boolean supported() {
        return this != NONE;
    }
}
