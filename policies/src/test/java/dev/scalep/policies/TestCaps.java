package dev.scalep.policies;

import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.DeviceKind;
import dev.scalep.verbs.QpType;

import java.util.Set;

/** Hand-built capabilities shaped like a ConnectX device and an EFA v44 device. */
final class TestCaps {
    private TestCaps() {
    }

    static final DeviceCapabilities MLX5 = new DeviceCapabilities(DeviceKind.MLX5, Set.of(QpType.RC, QpType.UD),
            131072, 32768, 30, 30, 16777216, 4194303, 16777216, 1L << 40, 8388608, 8388608, 32767, 60,
            true, true, true, true, true, true, true, true, false, 512);

    static final DeviceCapabilities EFA = new DeviceCapabilities(DeviceKind.EFA, Set.of(QpType.SRD, QpType.UD),
            256, 4096, 2, 1, 512, 32768, 262144, 1L << 32, 256, 0, 0, 32,
            false, false, true, false, false, false, false, false, true, 0);
}
