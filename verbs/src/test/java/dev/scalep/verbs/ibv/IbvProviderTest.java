package dev.scalep.verbs.ibv;

import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ibv provider on whatever host runs the tests: devices with queried capabilities, or a clear reason. */
@Timeout(60)
class IbvProviderTest {
    private final IbvProvider provider = new IbvProvider();

    @Test
    void eitherDevicesOrAReasonThatSaysWhatWasTried() {
        assertEquals("ibv", provider.name());
        List<Device> devices = provider.devices();
        if (devices.isEmpty()) {
            String reason = provider.unavailableReason();
            assertTrue(reason != null && !reason.isBlank());
            assertTrue(reason.contains("libibverbs.so.1"), reason);
            assertTrue(reason.contains("sim:mlx5") && reason.contains("sim:efa"), reason);
            if (reason.contains("ibv_get_device_list failed")) {
                assertTrue(reason.matches("(?s).*errno=\\d+ \\(\\w+\\).*"), reason);
            }
        } else {
            assertNull(provider.unavailableReason());
            for (Device d : devices) {
                assertEquals("ibv", d.provider());
                assertEquals(IbvDevice.kindOf(d.name()), d.kind());
                assertTrue(d.capabilities().maxQp() > 0, d.name() + " max_qp");
                assertTrue(d.capabilities().maxCqe() > 0, d.name() + " max_cqe");
            }
        }
    }

    @Test
    void enumerationIsCachedAndStable() {
        assertTrue(provider.devices() == new IbvProvider().devices());
    }

    @Test
    void kindComesFromTheProviderName() {
        assertEquals(DeviceKind.MLX5, IbvDevice.kindOf("mlx5_0"));
        assertEquals(DeviceKind.EFA, IbvDevice.kindOf("efa_0"));
        assertEquals(DeviceKind.RXE, IbvDevice.kindOf("rxe1"));
        assertEquals(DeviceKind.OTHER, IbvDevice.kindOf("siw0"));
        assertFalse(IbvDevice.kindOf("rxe0") == DeviceKind.OTHER);
    }
}
