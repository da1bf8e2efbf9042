package dev.scalep.policies;

/** Whether WQEs are written to the device by programmed I/O with the doorbell (mlx5 BlueFlame). */
public enum BlueFlame {
    /** Use BlueFlame for single posts (lists are always DMA-read by the NIC). */
    ON("on"),
    /** Never use BlueFlame (as {@code MLX5_SHUT_UP_BF=1}). */
    OFF("off"),
    /** Use it where the device has it. */
    AUTO("auto");

    private final String spelling;

    BlueFlame(String spelling) {
        this.spelling = spelling;
    }

    public String spelling() {
        return spelling;
    }

    @Override
    public String toString() {
        return spelling;
    }
}
