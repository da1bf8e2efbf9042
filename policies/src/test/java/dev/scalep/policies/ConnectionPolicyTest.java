package dev.scalep.policies;

import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.GidType;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The {@code connection} section: every key reaches the class, defaults stay automatic, depths meet the device. */
class ConnectionPolicyTest {
    @Test
    void everyKeyReachesTheClass() {
        Policy p = PolicyLoader.parse("c.yaml", """
                classes:
                  a:
                    connection: {port: 2, gid-index: 3, path-mtu: 1024, min-rnr-timer: 12, timeout: 18,
                                 retry-count: 5, rnr-retry: 3, max-rd-atomic: 4, max-dest-rd-atomic: 8,
                                 service-level: 3, traffic-class: 106, hop-limit: 32}
                  b: {extends: a, connection: {gid-type: roce-v2, address-family: ipv4, path-mtu: 4096}}
                  c: {}
                """);
        ConnectionOptions a = p.classes().get("a").connection();
        assertEquals(new ConnectionOptions(2, 3, null, ConnectionOptions.AddressFamily.ANY, 1024, 12, 18, 5, 3, 4, 8, 3,
                106, 32), a);
        ConnectionOptions b = p.classes().get("b").connection();
        assertEquals(GidType.ROCE_V2, b.gidType());
        assertEquals(ConnectionOptions.AddressFamily.IPV4, b.family());
        assertEquals(4096, b.pathMtu());
        assertEquals(18, b.timeout(), "extends merges the connection map key by key");
        assertEquals(ConnectionOptions.DEFAULTS, p.classes().get("c").connection());
        assertNull(p.classes().get("c").connection().gidType());
    }

    @Test
    void badMtuIsALocatedError() {
        PolicyException e = assertThrows(PolicyException.class,
                () -> PolicyLoader.parse("c.yaml", "classes:\n  a: {connection: {path-mtu: 1500}}\n"));
        assertTrue(e.getMessage().contains("c.yaml:2:"), e.getMessage());
        assertTrue(e.getMessage().contains("connection.path-mtu 1500 is not one of 256, 512, 1024, 2048, 4096"),
                e.getMessage());
    }

    @Test
    void depthsAboveTheDeviceDegradeOrFail() {
        Policy p = PolicyLoader.parse("c.yaml", "classes:\n  a: {connection: {max-rd-atomic: 64, max-dest-rd-atomic: 32}}\n");
        EffectivePolicy e = p.effective("mlx5_0", TestCaps.MLX5);
        ConnectionOptions c = e.classes().get("a").connection();
        assertEquals(TestCaps.MLX5.maxQpInitRdAtom(), c.maxRdAtomic());
        assertEquals(TestCaps.MLX5.maxQpRdAtom(), c.maxDestRdAtomic());
        assertTrue(e.degradations().stream().anyMatch(d -> d.message().contains("max_qp_init_rd_atom")),
                e.degradations().toString());
        Policy strict = PolicyLoader.parse("c.yaml",
                "classes:\n  a: {on-unsupported: fail, connection: {max-rd-atomic: 64}}\n");
        assertThrows(PolicyException.class, () -> strict.effective("mlx5_0", TestCaps.MLX5));
    }

    @Test
    void showWritesAFileThatLoadsBackToTheSameConnection() {
        Policy p = PolicyLoader.parse("c.yaml", "classes:\n  a: {connection: {path-mtu: 2048, traffic-class: 8}}\n");
        String shown = PolicyYaml.write(p.effective(), null);
        Policy again = PolicyLoader.parse("shown.yaml", shown);
        assertEquals(p.classes().get("a").connection(), again.classes().get("a").connection());
        assertTrue(shown.contains("# gid-index: automatic"), shown);
    }
}
