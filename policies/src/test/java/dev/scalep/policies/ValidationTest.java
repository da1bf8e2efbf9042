package dev.scalep.policies;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class ValidationTest {
    static final String HALO = """
            classes:
              halo:
                sharing: 2x-dynamic
                queue-depth: 128
                postlist: 32
                unsignaled: 64
                inline: 128
                blueflame: on
                srd: {ordering: receiver-reorder, atomics-emulation: true}
                on-unsupported: %s
            """;

    @Test
    void degradeReportsEverySubstitution() {
        Policy p = PolicyLoader.parse("halo.yaml", HALO.formatted("degrade"));
        EffectivePolicy e = p.effective("sim:efa", TestCaps.EFA);
        EndpointClass h = e.endpointClass("halo");
        assertEquals(32, h.inlineThreshold());
        assertEquals(1, h.unsignaled());
        assertEquals(TdMode.NONE, h.sharing().td());
        assertEquals(Category.STATIC, h.sharing().category(), "2x-dynamic without TDs is static");
        assertEquals(BlueFlame.OFF, h.blueFlame());
        assertEquals(Ordering.RECEIVER_REORDER, h.srd().ordering(), "kept on an out-of-order device");
        List<String> msgs = e.degradations().stream().map(Degradation::message).toList();
        assertTrue(msgs.contains("class halo: inline 128 > device limit 32 on sim:efa \u2192 32"), msgs.toString());
        assertTrue(msgs.contains("class halo: unsignaled 64 unsupported on sim:efa (every WR is signaled) \u2192 1"), msgs.toString());
        assertTrue(msgs.stream().anyMatch(m -> m.startsWith("class halo: td=dedicated-2x needs thread domains") && m.endsWith("\u2192 static")), msgs.toString());
        assertTrue(msgs.contains("class halo: blueflame on unsupported on sim:efa \u2192 off"), msgs.toString());
        assertEquals(4, e.degradations().size(), msgs.toString());
        assertTrue(e.toYaml().contains("# degraded: class halo: inline 128"));
    }

    @Test
    void failRejectsWithLocatedErrors() {
        Policy p = PolicyLoader.parse("halo.yaml", HALO.formatted("fail"));
        PolicyException ex = assertThrows(PolicyException.class, () -> p.effective("sim:efa", TestCaps.EFA));
        List<String> errs = ex.errors().stream().map(PolicyError::toString).toList();
        assertEquals(4, errs.size(), errs.toString());
        assertTrue(errs.contains("halo.yaml:3:14: class halo: td=dedicated-2x needs thread domains, which sim:efa lacks "
                + "(each QP keeps its own doorbell behind the provider's QP lock); sharing 2x-dynamic (on-unsupported: fail)"), errs.toString());
        assertTrue(errs.contains("halo.yaml:6:17: class halo: unsignaled 64 unsupported on sim:efa (every WR is signaled) (on-unsupported: fail)"), errs.toString());
        assertTrue(errs.contains("halo.yaml:7:13: class halo: inline 128 > device limit 32 on sim:efa (on-unsupported: fail)"), errs.toString());
        assertTrue(errs.get(3).startsWith("halo.yaml:8:16:"), errs.toString());
    }

    @Test
    void failModeStillDegradesDefaultsItWasNotGiven() {
        Policy p = PolicyLoader.parse("t.yaml", "classes:\n  x: {on-unsupported: fail}\n");
        EffectivePolicy e = p.effective("sim:efa", TestCaps.EFA);
        assertEquals(1, e.endpointClass("x").unsignaled());
        assertEquals(1, e.degradations().size());
        assertTrue(e.degradations().get(0).message().contains("(default)"), e.degradations().toString());
    }

    @Test
    void inOrderDeviceNotesOrderingAndAtomics() {
        Policy p = PolicyLoader.parse("halo.yaml", HALO.formatted("fail").replace("inline: 128", "inline: 60"));
        EffectivePolicy e = p.effective("sim:mlx5", TestCaps.MLX5);
        assertTrue(e.degradations().isEmpty(), e.degradations().toString());
        assertEquals(Ordering.NONE, e.endpointClass("halo").srd().ordering());
        assertTrue(e.notes().stream().anyMatch(n -> n.contains("no-op on in-order device sim:mlx5")), e.notes().toString());
        assertTrue(e.notes().stream().anyMatch(n -> n.contains("atomics-emulation")), e.notes().toString());
        assertEquals(TdMode.DEDICATED_2X, e.endpointClass("halo").sharing().td());
    }

    @Test
    void queueDepthRules() {
        // Defaulted postlist and unsignaled interval above a written queue depth are lowered, and reported.
        Policy p = PolicyLoader.parse("q.yaml", "classes:\n  a: {queue-depth: 16, chained: {max-length: 16}}\n");
        EffectivePolicy e = p.effective();
        EndpointClass a = e.endpointClass("a");
        assertEquals(16, a.postlist());
        assertEquals(16, a.unsignaled());
        assertEquals(2, e.degradations().size(), e.degradations().toString());
        assertTrue(e.degradations().get(1).message().contains("one WR of every queue-depth must be signaled"));
        // Written values that contradict the queue depth are errors whatever on-unsupported says.
        for (String on : new String[]{"degrade", "fail"}) {
            Policy f = PolicyLoader.parse("q.yaml", "classes:\n  a: {queue-depth: 16, postlist: 32, on-unsupported: " + on + "}\n");
            PolicyException ex = assertThrows(PolicyException.class, f::effective);
            assertTrue(ex.getMessage().contains("q.yaml:2:34: class a: postlist 32 > queue-depth 16"), ex.getMessage());
            assertTrue(ex.getMessage().contains("whatever on-unsupported says"), ex.getMessage());
            assertEquals(1, ex.errors().size(), "the defaulted unsignaled interval is degraded, not rejected: " + ex.getMessage());
            Policy u = PolicyLoader.parse("u.yaml", "classes:\n  a: {queue-depth: 16, postlist: 8, unsignaled: 64, on-unsupported: " + on + "}\n");
            ex = assertThrows(PolicyException.class, u::effective);
            assertTrue(ex.getMessage().contains("unsignaled interval 64 > queue-depth 16"), ex.getMessage());
            ex = assertThrows(PolicyException.class, () -> u.effective("sim:efa", TestCaps.EFA)); // even where q becomes 1
            assertTrue(ex.getMessage().contains("unsignaled interval 64 > queue-depth 16"), ex.getMessage());
        }
        Policy big = PolicyLoader.parse("q.yaml", "classes:\n  a: {queue-depth: 65536, cq: {depth: 4194304}}\n");
        EndpointClass b = big.effective("sim:efa", TestCaps.EFA).endpointClass("a");
        assertEquals(4096, b.queueDepth());
        assertEquals(32768, b.cq().depth());
    }

    @Test
    void aCqSmallerThanTheQueuesItServesIsAnError() {
        String[][] cases = {
                {"static", "4096", "1", "8192"},                            // per-QP CQ: one send queue and its receives
                {"ctx=shared,qp=4way:locked,cq=4way", "1024", "4096", "5120"}, // one QP of 4 threads and their receives
                {"mpi-threads", "4096", "1", "8192"}};                       // shared by all: at least one endpoint
        for (String[] c : cases) {
            for (String on : new String[]{"degrade", "fail"}) {
                Policy p = PolicyLoader.parse("c.yaml", "classes:\n  a:\n    sharing: \"" + c[0] + "\"\n    queue-depth: " + c[1]
                        + "\n    cq: {depth: " + c[2] + "}\n    on-unsupported: " + on + "\n");
                PolicyException ex = assertThrows(PolicyException.class, () -> p.effective("sim:mlx5", TestCaps.MLX5));
                assertTrue(ex.getMessage().contains("c.yaml:5:") && ex.getMessage().contains("cq.depth " + c[2]
                        + " is smaller than the queues it serves: " + c[3] + " entries"), ex.getMessage());
            }
        }
        // Exactly enough passes; no depth at all is sized from the queues.
        PolicyLoader.parse("c.yaml", "classes:\n  a: {queue-depth: 4096, cq: {depth: 8192}, on-unsupported: fail}\n")
                .effective("sim:mlx5", TestCaps.MLX5);
        PolicyLoader.parse("c.yaml", "classes:\n  a: {queue-depth: 4096, on-unsupported: fail}\n").effective("sim:mlx5", TestCaps.MLX5);
    }

    @Test
    void srqOnADeviceWithoutSrq() {
        Policy p = PolicyLoader.parse("s.yaml", "classes:\n  a: {sharing: \"static,srq=shared\"}\n");
        EffectivePolicy e = p.effective("sim:efa", TestCaps.EFA);
        assertEquals(Share.NONE, e.endpointClass("a").sharing().srq());
        assertEquals(Share.ALL, p.effective("sim:mlx5", TestCaps.MLX5).endpointClass("a").sharing().srq());
    }

    @Test
    void policiesBuiltInCodeValidateToo() {
        EndpointClass d = EndpointClass.defaults("x");
        EndpointClass strict = new EndpointClass("x", d.sharing(), d.queueDepth(), d.postlist(), d.unsignaled(), 64,
                d.blueFlame(), d.chained(), d.sgeHeaderPayload(), d.srq(), d.cq(), d.srd(), OnUnsupported.FAIL);
        PolicyException ex = assertThrows(PolicyException.class, () -> Policy.of("code", strict).effective("sim:efa", TestCaps.EFA));
        assertTrue(ex.getMessage().startsWith("code:1:1: class x:"), ex.getMessage());
        assertEquals(2, ex.errors().size(), ex.getMessage());
    }
}
