package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.policies.TdMode;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.DeviceKind;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.QpType;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link EndpointPlan#resolve} is pure: settings and substitutions follow from capabilities written
 * here, no device opened. An mlx5-like device (RC, thread domains, BlueFlame, unsignaled, in order,
 * inline 256, SRQs) and an EFA-like one (SRD only, out of order, inline 32, no SRQ, one send SGE).
 */
class EndpointPlanTest {
    static DeviceCapabilities caps(boolean efa, int maxCqe) {
        return new DeviceCapabilities(efa ? DeviceKind.EFA : DeviceKind.MLX5,
                efa ? Set.of(QpType.SRD) : Set.of(QpType.RC), 1024, 4096, efa ? 1 : 16, 16, 1024, maxCqe, 1024,
                1L << 40, 1024, efa ? 0 : 1024, efa ? 0 : 16384, efa ? 32 : 256, !efa, !efa, true, true, true, !efa, !efa,
                false, false, efa ? 0 : 512);
    }

    static final EndpointOptions OPTS = EndpointOptions.DEFAULTS.withDepths(64, 8).withFeatures(32, 16, 64);

    private static List<String> settings(EndpointPlan p) {
        return p.substitutions().stream().map(Substitution::setting).toList();
    }

    @Test
    void capableDeviceTakesTheRequestAsItIs() {
        EndpointPlan p = EndpointPlan.resolve("dev-a", caps(false, 1 << 16), SharingConfig.parse("dynamic"), 4, OPTS);
        assertEquals(List.of(), p.substitutions());
        assertEquals(TdMode.DEDICATED, p.td());
        assertEquals(16, p.signalEvery());
        assertEquals(64, p.inlineThreshold());
        assertEquals(QpType.RC, p.qpType());
        assertEquals(1, p.qpPer());
        assertEquals(1, p.cqPer());
        assertEquals(4, p.cqDepths().length);
        assertEquals(64 + 8, p.cqDepths()[0], "send plus receive depth of its one QP");
    }

    @Test
    void efaLikeDeviceSubstitutesWhatItLacks() {
        EndpointOptions o = OPTS.withSgeHeaderPayload(true).withContext(ContextOptions.DEFAULTS);
        EndpointPlan p = EndpointPlan.resolve("dev-b", caps(true, 1 << 16), SharingConfig.parse("dynamic,srq=shared"), 2, o);
        assertEquals(List.of("td", "signalEvery", "inline", "srq", "sge-header-payload"), settings(p));
        assertEquals(TdMode.NONE, p.td());
        assertEquals(1, p.signalEvery(), "out of order: every request signaled");
        assertEquals(32, p.inlineThreshold());
        assertFalse(p.useSrq());
        assertEquals(QpType.SRD, p.qpType());
        assertFalse(p.sgeHeaderPayload());
        assertEquals(0, p.srqDepths().length);
        assertTrue(p.substitutions().get(0).reason().contains("dev-b"), "reasons name the device");
    }

    @Test
    void sharedQpClampsTheSignalIntervalAndDropsThePool() {
        EndpointOptions o = OPTS.withFeatures(32, 64, 0).withChained(64, 16);
        EndpointPlan p = EndpointPlan.resolve("dev-a", caps(false, 1 << 16), SharingConfig.parse("mpi-threads"), 4, o);
        assertEquals(List.of("signalEvery", "chained"), settings(p));
        assertEquals(64 / 4, p.signalEvery(), "a signaled request among every depth/sharers");
        assertFalse(p.chained());
        assertEquals(4, p.qpPer());
        assertArrayEquals(new int[]{64 + 4 * 8}, p.cqDepths(), "one CQ: one QP's sends and four threads' receives");
    }

    @Test
    void aCqHoldsItsQueuesAsTheProviderRoundsThem() {
        // three threads on one QP ask 3 x 8 receives; mlx5 gives 32, and the CQ must hold them
        EndpointPlan p = EndpointPlan.resolve("dev-a", caps(false, 1 << 16), SharingConfig.parse("mpi-threads"), 3, OPTS);
        assertArrayEquals(new int[]{64 + 32}, p.cqDepths(), "the shared QP's sends and its 24 receives rounded to 32");
        assertDoesNotThrow(() -> {
            try (EndpointManager m = EndpointManager.open(Devices.byName("sim:mlx5"), SharingConfig.parse("mpi-threads"), 3,
                    EndpointOptions.DEFAULTS.withDepths(256, 64))) {
                assertEquals(3, m.threads());
            }
        }, "sim:mlx5 rounds the QP's 192 receives to 256: a CQ of 448 would be overcommitted");
    }

    @Test
    void cqAndSrqDepthsAreRaisedOrClamped() {
        EndpointOptions small = OPTS.withCq(16, 0, 0);
        EndpointPlan raised = EndpointPlan.resolve("dev-a", caps(false, 1 << 16), SharingConfig.parse("static"), 2, small);
        assertEquals(List.of("cq.depth"), settings(raised));
        assertArrayEquals(new int[]{72, 72}, raised.cqDepths());
        EndpointPlan clamped = EndpointPlan.resolve("dev-a", caps(false, 100), SharingConfig.parse("static"), 2,
                OPTS.withCq(4096, 0, 0));
        assertArrayEquals(new int[]{100, 100}, clamped.cqDepths(), "policy depth above max_cqe: the limit");
        EndpointPlan srq = EndpointPlan.resolve("dev-a", caps(false, 1 << 16), SharingConfig.parse("static,srq=shared"), 4,
                OPTS.withSrq(1 << 20, 4, 2));
        assertEquals(List.of("srq.depth"), settings(srq));
        assertArrayEquals(new int[]{16384}, srq.srqDepths());
        assertEquals(8, srq.recvSlotsPerEndpoint(), "each endpoint's share, at most its receive depth");
        assertEquals(2, srq.srqRefillBatch());
    }

    @Test
    void whatCannotBeBuiltIsRefusedBeforeBuilding() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EndpointPlan.resolve("dev-a",
                caps(false, 50), SharingConfig.parse("static"), 1, OPTS));
        assertTrue(e.getMessage().contains("max_cqe 50"), e.getMessage());
    }
}
