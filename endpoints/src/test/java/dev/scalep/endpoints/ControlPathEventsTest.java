package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SharedReceiveQueue;
import dev.scalep.verbs.VerbsException;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The control path's JFR events: a recording of a run holds the device opens, the connect, the QP
 * state changes to RTS and to ERR, the asynchronous event the error raised (on a device with SRQs)
 * and a refused verb,
 * read back from the recording file with {@link RecordingFile}.
 */
@Timeout(60)
class ControlPathEventsTest {
    private static final List<String> NAMES = List.of("dev.scalep.DeviceOpen", "dev.scalep.Connect",
            "dev.scalep.QpState", "dev.scalep.AsyncEvent", "dev.scalep.VerbsError");

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    void aRecordingShowsTheRunsLife(String dev, @TempDir Path tmp) throws Exception {
        Device d = Devices.byName(dev);
        Path file = tmp.resolve("run.jfr");
        int errQp;
        boolean srqs = d.capabilities().maxSrq() > 0;
        try (Recording r = new Recording()) {
            for (String n : NAMES) {
                r.enable(n);
            }
            r.start();
            EndpointOptions o = EndpointOptions.DEFAULTS.withDepths(64, 16);
            try (EndpointManager a = EndpointManager.open(d, SharingConfig.parse("static"), 1, o);
                 EndpointManager b = EndpointManager.open(d, SharingConfig.parse("static"), 1, o)) {
                a.connect(b);
            }
            try (Context c = d.open()) {
                ProtectionDomain pd = c.allocPd();
                CompletionQueue cq = c.createCq(CqOptions.of(64).withExtended(d.capabilities().extendedCqOnly()));
                QpType type = d.capabilities().inOrder() ? QpType.RC : QpType.SRD;
                // a QP on an SRQ reports its last WQE when it enters ERR (sim:efa has no SRQ: no event)
                SharedReceiveQueue srq = srqs ? pd.createSrq(16, 1) : null;
                QueuePair q = pd.createQp(QpInitAttr.of(type, cq, 8).withSrq(srq));
                errQp = q.qpNum();
                q.toError();
                assertThrows(VerbsException.class, () -> c.createCq(CqOptions.of(Integer.MAX_VALUE)
                        .withExtended(d.capabilities().extendedCqOnly())));
            }
            r.stop();
            r.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        Set<String> types = events.stream().map(e -> e.getEventType().getName()).collect(Collectors.toSet());
        assertTrue(types.containsAll(srqs ? NAMES : NAMES.stream().filter(n -> !n.endsWith("AsyncEvent")).toList()),
                "recorded " + types);
        assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("dev.scalep.DeviceOpen")
                && e.getString("device").equals(dev)), events.toString());
        assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("dev.scalep.Connect")
                && e.getString("device").equals(dev) && e.getInt("qps") == 1), events.toString());
        assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("dev.scalep.QpState")
                && e.getString("to").equals("RTS")), events.toString());
        assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("dev.scalep.QpState")
                && e.getInt("qpNum") == errQp && e.getString("to").equals("ERR")), events.toString());
        assertEquals(srqs, events.stream().anyMatch(e -> e.getEventType().getName().equals("dev.scalep.AsyncEvent")
                && e.getString("type").equals("QP_LAST_WQE_REACHED") && e.getInt("qpNum") == errQp), events.toString());
        // the refused CQ (a device may also have refused something the manager substituted: those are recorded too)
        RecordedEvent err = events.stream().filter(e -> e.getEventType().getName().equals("dev.scalep.VerbsError")
                && e.getString("verb").startsWith("ibv_create_cq")).findFirst().orElseThrow(() -> new AssertionError(events));
        assertTrue(err.getInt("errno") > 0, err.toString());
        assertEquals(dev, err.getString("device"), err.toString());
    }
}
