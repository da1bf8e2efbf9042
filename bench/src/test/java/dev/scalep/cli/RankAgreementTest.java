package dev.scalep.cli;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** What of {@code --device} ranks must agree on: a simulated device's name, a real device's being real. */
class RankAgreementTest {
    @Test
    void realDevicesAgreeWhateverEachHostCallsThem() {
        assertEquals(RankAgreement.deviceKind("rxe0"), RankAgreement.deviceKind("rxe1"));
        assertEquals(RankAgreement.deviceKind("mlx5_0"), RankAgreement.deviceKind("mlx5_1"));
        assertNull(RankAgreement.firstMismatch(List.of(Map.of("--device", RankAgreement.deviceKind("rxe0")),
                Map.of("--device", RankAgreement.deviceKind("rxe1"))), List.of("--device")));
    }

    @Test
    void simulatedDevicesMustBeTheSameAndNotMixedWithRealOnes() {
        assertNotEquals(RankAgreement.deviceKind("sim:mlx5"), RankAgreement.deviceKind("sim:efa"));
        assertNotEquals(RankAgreement.deviceKind("sim:mlx5"), RankAgreement.deviceKind("rxe0"));
        assertEquals("--device differs between ranks (sim:mlx5 on rank 0, a real device on rank 1): every rank must be"
                        + " started with the same options",
                RankAgreement.firstMismatch(List.of(Map.of("--device", RankAgreement.deviceKind("sim:mlx5")),
                        Map.of("--device", RankAgreement.deviceKind("rxe0"))), List.of("--device")));
    }
}
