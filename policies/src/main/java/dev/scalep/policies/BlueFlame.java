package dev.scalep.policies;

/** Whether WQEs are written to the device by programmed I/O with the doorbell (mlx5 BlueFlame). */
public enum BlueFlame implements Spelled {
    /** Use BlueFlame for single posts (lists are always DMA-read by the NIC). */
    ON,
    /** Never use BlueFlame (as {@code MLX5_SHUT_UP_BF=1}). */
    OFF,
    /** Use it where the device has it. */
    AUTO;

    @Override
    public String toString() {
        return spelling();
    }
}
