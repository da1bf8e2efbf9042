package dev.scalep.verbs;

import java.util.List;


/**
 * An RDMA device: the simulated {@code sim:mlx5} / {@code sim:efa}, or a real device found by
 * {@code ibv_get_device_list}. Thread-safe. Devices are found through {@link Devices}.
 */
public interface Device {
    /** The name that selects this device, e.g. {@code sim:mlx5} or {@code mlx5_0}. */
    String name();

    /** The provider that drives it: {@code sim} or {@code ibv}. */
    String provider();

    DeviceKind kind();

    /** Capabilities as queried from the device. */
    DeviceCapabilities capabilities();

    /**
     * The device's ports with their state, MTU, link layer and GID table (as queried when the device
     * was found). Port numbers start at 1.
     */
    List<PortInfo> ports();

    /** Open a device context ({@code ibv_open_device}) with provider knobs in force. Owned by the caller. */
    Context open(ContextOptions options);

    default Context open() {
        return open(ContextOptions.DEFAULTS);
    }

    /** Live resources of every context opened on this device object, the device's own accounting. */
    ResourceUsage resources();

    /** Peak values of {@link #resources()} since the device object was created. */
    ResourceUsage peakResources();
}
