package dev.scalep.endpoints;

import dev.scalep.policies.EndpointClass;
import dev.scalep.policies.PolicyLoader;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A policy class's {@code messages.eager-limit} is the eager/rendezvous crossover of the tagged
 * messages of a world opened from it: a message of exactly the limit is sent eager (complete at
 * once), one byte more goes by rendezvous (a request the receiver completes), and both arrive
 * whole; on two ranks in one JVM, on both simulated devices. A class under {@code on-unsupported:
 * fail} that the device would have to change is refused on every rank.
 */
class MessagePolicyTest {
    private static final String YAML = "classes:\n  a: {sharing: static, queue-depth: 64, postlist: 1, unsignaled: 1,"
            + " inline: 0, blueflame: off, messages: {eager-limit: %d}%s}\n";

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    @Timeout(120)
    void theEagerLimitOfThePolicyIsTheCrossover(String dev) throws Exception {
        Device d = Devices.byName(dev);
        int limit = 1000;
        EndpointClass c = PolicyLoader.parse("m.yaml", YAML.formatted(limit, "")).effective(d).endpointClass("a");
        List<Object> out = LocalRanks.run(2, 60_000, w -> {
            try (WorldEndpoints eps = WorldEndpoints.open(w, d, c, 1);
                 Window win = eps.allocateWindow(4096);
                 RankEndpoint ep = eps.acquire()) {
                Messages m = ep.messages();
                assertEquals(limit, m.eagerLimit());
                assertEquals(limit, m.rendezvousThreshold());
                MemorySegment mine = win.local();
                MessageStatus st = new MessageStatus();
                int other = 1 - w.rank();
                for (int i = 0; i < limit + 1; i++) {
                    mine.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + w.rank()));
                }
                int eager = send(m, other, 1, win, 0, limit);
                int rendezvous = send(m, other, 2, win, 0, limit + 1);
                int r1 = m.recv(other, 1, Messages.ALL_BITS, win, 2048, 1024);
                assertTrue(r1 >= 0 && m.waitFor(r1, st) && st.error() == 0 && st.length() == limit, "eager: " + st);
                int r2 = m.recv(other, 2, Messages.ALL_BITS, win, 1024, 1024);
                assertTrue(r2 >= 0 && m.waitFor(r2, st) && st.error() == 0 && st.length() == limit + 1, "rendezvous: " + st);
                assertTrue(m.waitFor(rendezvous, st) && st.error() == 0, "the rendezvous send completes: " + st);
                for (int i = 0; i < limit; i++) {
                    assertEquals((byte) (i * 7 + other), mine.get(ValueLayout.JAVA_BYTE, 2048 + i), "eager byte " + i);
                }
                for (int i = 0; i < limit + 1; i++) {
                    assertEquals((byte) (i * 7 + other), mine.get(ValueLayout.JAVA_BYTE, 1024 + i), "rendezvous byte " + i);
                }
                assertTrue(ep.barrier());
                return List.of(eager, rendezvous);
            }
        });
        for (Object o : out) {
            List<?> kinds = (List<?>) o;
            assertEquals(Messages.COMPLETED, kinds.get(0), "a message of the eager limit is complete at once");
            assertNotEquals(Messages.COMPLETED, kinds.get(1), "one byte more is a rendezvous request");
        }
    }

    /** A shared CQ the endpoint layer must raise for four threads: under fail, refused on every rank. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    @Timeout(120)
    void underFailAWorldTheDeviceWouldChangeIsRefused(String dev) throws Exception {
        Device d = Devices.byName(dev);
        String yaml = "classes:\n  a: {sharing: mpi-threads, queue-depth: 256, postlist: 1, unsignaled: 1, inline: 0,"
                + " blueflame: off, cq: {depth: 512}, on-unsupported: fail}\n";
        EndpointClass c = PolicyLoader.parse("f.yaml", yaml).effective(d).endpointClass("a");
        List<Object> out = LocalRanks.run(2, 60_000, w -> assertThrows(IllegalArgumentException.class,
                () -> WorldEndpoints.open(w, d, c, 4).close()).getMessage());
        for (Object msg : out) {
            assertTrue(((String) msg).contains("class a (on-unsupported: fail) cannot run as written on " + dev)
                    && ((String) msg).contains("cq.depth: 512 ->"), (String) msg);
        }
    }

    private static int send(Messages m, int rank, int tag, Window w, long off, long len) {
        int q;
        while ((q = m.send(rank, tag, w, off, len)) == Messages.BACK_PRESSURED) {
            m.progress();
        }
        assertTrue(q >= 0, "send: " + q);
        return q;
    }
}
