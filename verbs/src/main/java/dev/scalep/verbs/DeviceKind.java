package dev.scalep.verbs;

/** The family a device belongs to, which decides which provider-specific features exist. */
public enum DeviceKind {
    /** NVIDIA ConnectX (mlx5 provider): UARs/uUARs, thread domains, BlueFlame. */
    MLX5,
    /** AWS Elastic Fabric Adapter (efa provider): SRD QPs, extended CQs, no thread domains. */
    EFA,
    /** SoftRoCE (rxe provider): RC/UD, no thread domains. */
    RXE,
    /** Any other verbs provider. */
    OTHER
}
