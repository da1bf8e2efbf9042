package dev.scalep.bench;

import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.DeviceCapabilities;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The endpoint options the sweep derives from a workload: receive depths that keep a sender from overrunning. */
class SweepOptionsTest {
    @ParameterizedTest
    @ValueSource(ints = {64, 256, 1024})
    void sendsGetAReceiveForEveryRequestTheSendQueueHolds(int depth) {
        DeviceCapabilities caps = Devices.byName("sim:mlx5").capabilities();
        SweepPoint p = new SweepPoint("sim:mlx5", "mpi-everywhere", "", 1, 32, 64, depth, 1000, true, true, null, 1,
                "all");
        EndpointOptions sends = SweepRunner.options(p, caps, new Workload(Workload.Op.SEND, 8));
        assertEquals(depth, sends.sendDepth());
        assertEquals(depth, sends.recvDepth(), "receives posted per endpoint for --op send");
        EndpointOptions writes = SweepRunner.options(p, caps, new Workload(Workload.Op.WRITE, 8));
        assertEquals(EndpointOptions.DEFAULTS.recvDepth(), writes.recvDepth(), "writes take no receive: the default stays");
        EndpointOptions tags = SweepRunner.options(p, caps, new Workload(Workload.Op.TAG, 8));
        assertTrue(tags.recvDepth() >= SweepRunner.TAG_RECV_DEPTH, "tagged messages keep their credits");
    }
}
