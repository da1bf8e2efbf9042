package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.threading.SendPath;
import dev.scalep.verbs.ClosedException;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.WcStatus;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failures on the send path settle every request and tell its owner: a write and a flush on an
 * endpoint whose QP was never connected (the provider refuses the post) leave nothing outstanding,
 * count the refusals to the endpoint and let it be released; a QP that goes to ERR is reported
 * (state and first error status) and the documented way back, close and reopen, works. On every
 * send path (per-thread, chained, locked, combining), sim:mlx5 and sim:efa, postlist 1 and 32.
 */
class PostFailureTest {
    static final String[] PATHS = {"static", "static+chained", "mpi-threads", "mpi-threads,qp=shared:combining"};

    static Stream<Arguments> matrix() {
        List<Arguments> out = new ArrayList<>();
        for (String dev : new String[]{"sim:mlx5", "sim:efa"}) {
            for (String path : PATHS) {
                for (int p : new int[]{1, 32}) {
                    out.add(Arguments.of(dev, path, p));
                }
            }
        }
        return out.stream();
    }

    static EndpointOptions options(String path, int p) {
        EndpointOptions o = EndpointOptions.DEFAULTS.withDepths(64, 8).withBuffers(1024, 64).withFeatures(p, 4, 0);
        return path.endsWith("+chained") ? o.withChained(64, p) : o;
    }

    static SharingConfig level(String path) {
        return SharingConfig.parse(path.replace("+chained", ""));
    }

    @ParameterizedTest(name = "{0} {1} p={2}")
    @MethodSource("matrix")
    @Timeout(30)
    void refusedPostsSettleOnTheirOwner(String devName, String path, int p) {
        Device dev = Devices.byName(devName);
        ResourceUsage base = dev.resources();
        try (EndpointManager a = EndpointManager.open(dev, level(path), 1, options(path, p))) {
            Endpoint e = a.acquire();
            assertEquals(QpState.RESET, e.qpState(), "never connected");
            // A write names a remote range the endpoint can check: with no peer it is refused at the call.
            assertThrows(IllegalArgumentException.class, () -> e.write(0, 0, 8, 0));
            assertEquals(0, e.outstanding(), "a write refused at the call leaves nothing outstanding");
            // A send has no remote range: it reaches the provider, which refuses it on a QP that was never connected.
            int writes = Math.max(1, p / 2) + 1;
            int refusedRc = 0;
            for (int i = 0; i < writes; i++) {
                int rc = e.send(i, 0, 8);
                assertNotEquals(SendPath.EAGAIN, rc, "send " + i);
                refusedRc = refusedRc != 0 ? refusedRc : rc;
            }
            int rc = e.flush();
            refusedRc = refusedRc != 0 ? refusedRc : rc;
            assertNotEquals(0, refusedRc, "the provider's errno reaches the endpoint that posted");
            assertEquals(0, e.staged(), "nothing left staged");
            assertEquals(0, e.outstanding(), "refused requests are settled, not outstanding");
            assertTrue(e.rejected() >= writes, "every write refused and counted to its endpoint (and the flush write, if posted): " + e.rejected());
            assertEquals(refusedRc, e.firstPostError());
            assertFalse(e.drain(5_000_000_000L), "drain says the endpoint lost requests (they were refused)");
            assertEquals(0, e.outstanding(), "drain waited until every request settled");
            Completion c = new Completion();
            assertTrue(!e.poll(c), "no completion for a refused request");
            a.release(e); // refuses while anything is outstanding
        }
        assertEquals(base, dev.resources(), "resources back to baseline");
    }

    @ParameterizedTest(name = "{0} {1} p={2}")
    @MethodSource("matrix")
    @Timeout(30)
    void qpInErrorIsReportedAndCloseReopenRecovers(String devName, String path, int p) throws Exception {
        Device dev = Devices.byName(devName);
        ResourceUsage base = dev.resources();
        try (EndpointManager a = EndpointManager.open(dev, level(path), 1, options(path, p));
             EndpointManager b = EndpointManager.open(dev, level(path), 1, options(path, p))) {
            a.connect(b);
            Endpoint e = a.acquire();
            assertEquals(0, e.write(1, 0, 8, 0));
            assertTrue(e.drain(5_000_000_000L));
            assertEquals(QpState.RTS, e.qpState());
            assertEquals(0, e.firstErrorStatus());
            e.qp().toError(); // a fatal error moves the QP to ERR
            for (int i = 0; i < 3; i++) {
                int rc = e.write(10 + i, 0, 8, 0);
                assertNotEquals(SendPath.EAGAIN, rc);
            }
            e.flush();
            assertFalse(e.drain(5_000_000_000L), "drain says the endpoint lost requests to the ERR QP");
            assertEquals(0, e.outstanding(), "everything posted to the ERR QP is settled");
            assertEquals(QpState.ERR, e.qpState(), "the endpoint says its QP stopped");
            assertTrue(e.firstErrorStatus() != 0 || e.firstPostError() != 0,
                    "and why: first error completion status or the post's errno");
            if (e.firstErrorStatus() != 0) {
                assertEquals(WcStatus.WR_FLUSH_ERR, e.firstErrorStatus(), WcStatus.name(e.firstErrorStatus()));
            }
            a.release(e);
        }
        assertEquals(base, dev.resources(), "closed: resources back to baseline");
        // The documented way back: open and connect again.
        try (EndpointManager a = EndpointManager.open(dev, level(path), 1, options(path, p));
             EndpointManager b = EndpointManager.open(dev, level(path), 1, options(path, p))) {
            a.connect(b);
            Endpoint e = a.acquire();
            assertEquals(QpState.RTS, e.qpState());
            e.sendBuffer().set(ValueLayout.JAVA_LONG, 0, 0x5ca1e9L);
            assertEquals(0, e.write(2, 0, 8, 0));
            assertTrue(e.drain(5_000_000_000L));
            assertEquals(0x5ca1e9L, b.endpoint(0).targetBuffer().get(ValueLayout.JAVA_LONG, 0));
            assertEquals(0, e.firstErrorStatus());
            a.release(e);
        }
    }

    /** A post on an endpoint whose manager was closed is an error, never OK: nothing is staged or posted. */
    @ParameterizedTest(name = "{0} {1} p={2}")
    @MethodSource("matrix")
    @Timeout(30)
    void postsAfterTheManagerClosedAreRefused(String devName, String path, int p) {
        Device dev = Devices.byName(devName);
        Endpoint e;
        try (EndpointManager a = EndpointManager.open(dev, level(path), 1, options(path, p));
             EndpointManager b = EndpointManager.open(dev, level(path), 1, options(path, p))) {
            a.connect(b);
            e = a.acquire();
            assertEquals(Endpoint.OK, e.write(1, 0, 8, 0));
            assertTrue(e.drain(5_000_000_000L), "the write completed");
        }
        Endpoint closed = e;
        ClosedException x = assertThrows(ClosedException.class, () -> closed.write(2, 0, 8, 0));
        assertTrue(x.getMessage().contains("write") && x.getMessage().contains("nothing posted"), x.getMessage());
        assertThrows(ClosedException.class, () -> closed.send(3, 0, 8));
        assertThrows(ClosedException.class, closed::flush);
        assertThrows(ClosedException.class, () -> closed.poll(new Completion()));
        assertThrows(ClosedException.class, () -> closed.drain(1));
        assertEquals(0, closed.staged(), "nothing staged");
        closed.close(); // giving back an endpoint of a closed manager is a no-op
    }
}
