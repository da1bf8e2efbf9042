package dev.scalep.policies;

import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.GidEntry;
import dev.scalep.verbs.GidType;
import dev.scalep.verbs.PortInfo;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.VerbsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The {@code connection} section: every key reaches the class, defaults stay automatic, depths, port, GID and MTU meet the device. */
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
        assertTrue(e.getMessage().contains("class a: 'connection.path-mtu': 1500 is not one of 256, 512, 1024, 2048, 4096"),
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

    static PolicyException refused(String device, String yaml) {
        Device d = Devices.byName(device);
        Policy p = PolicyLoader.parse("c.yaml", yaml);
        return assertThrows(PolicyException.class, () -> p.effective(d), device + " accepted " + yaml);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    void aPortTheDeviceLacksIsRefusedWhateverOnUnsupportedSays(String device) {
        PolicyException e = refused(device, "classes:\n  a: {on-unsupported: degrade, connection: {port: 2}}\n");
        assertEquals(List.of("c.yaml:2:51: class a: connection.port 2 does not exist: " + device + " has port 1 only"),
                e.errors().stream().map(PolicyError::toString).toList());
        Policy built = Policy.of("code", new EndpointClass("b", Category.STATIC.config(), 256, 32, 64, 32, BlueFlame.AUTO,
                new ChainedPosts(true, 256, 32), false, new SrqSettings(1024, 256, 64), new CqSettings(512, 0, 0),
                new SrdSettings(Ordering.NONE, false), OnUnsupported.DEGRADE, ConnectionOptions.DEFAULTS.withPort(3)));
        Device d = Devices.byName(device);
        PolicyException c = assertThrows(PolicyException.class, () -> built.effective(d));
        assertTrue(c.getMessage().startsWith("code:1:1: class b: connection.port 3 does not exist"), c.getMessage());
        assertEquals(1, built.effective().classes().size(), "without the device's ports the section is not checked");
    }

    @ParameterizedTest
    @ValueSource(strings = {"sim:mlx5", "sim:efa"})
    void aGidIndexOutsideTheTableIsRefusedNamingTheTable(String device) {
        Device d = Devices.byName(device);
        List<GidEntry> table = d.ports().getFirst().gids();
        int last = table.getLast().index();
        PolicyException e = refused(device, "classes:\n  a: {connection: {gid-index: 200}}\n");
        assertEquals(1, e.errors().size(), e.getMessage());
        String m = e.errors().getFirst().toString();
        assertTrue(m.startsWith("c.yaml:2:31: class a: connection.gid-index 200 is not in the GID table of " + device
                + " port 1 (indices up to " + last + ": "), m);
        assertFalse(m.contains("\n"), m);
        EffectivePolicy ok = PolicyLoader.parse("c.yaml", "classes:\n  a: {connection: {gid-index: " + last + "}}\n")
                .effective(d);
        assertEquals(last, ok.endpointClass("a").connection().gidIndex());
        try (Context ctx = d.open(); ProtectionDomain pd = ctx.allocPd();
             CompletionQueue cq = ctx.createCq(CqOptions.of(16).withExtended(d.capabilities().extendedCqOnly()))) {
            QpType type = d.capabilities().qpTypes().contains(QpType.RC) ? QpType.RC : QpType.SRD;
            QpInitAttr bad = QpInitAttr.of(type, cq, 4).withConnection(ConnectionOptions.DEFAULTS.withGidIndex(200));
            assertThrows(VerbsException.class, () -> pd.createQp(bad).close(), "the device refuses what the check refused");
            pd.createQp(QpInitAttr.of(type, cq, 4).withConnection(ok.endpointClass("a").connection())).close();
        }
    }

    @Test
    void automaticGidSelectionThatMatchesNothingIsRefusedAtTheKey() {
        PolicyException mlx = refused("sim:mlx5", "classes:\n  a:\n    connection: {gid-type: ib}\n");
        assertTrue(mlx.getMessage().startsWith("c.yaml:3:28: class a: no GID of sim:mlx5 port 1 matches "
                + "connection.gid-type ib, connection.address-family any (GIDs "), mlx.getMessage());
        PolicyException efa = refused("sim:efa", "classes:\n  a:\n    connection: {gid-type: roce-v2}\n");
        assertTrue(efa.getMessage().contains("no GID of sim:efa port 1 matches connection.gid-type roce-v2"),
                efa.getMessage());
        PolicyException typed = refused("sim:mlx5", "classes:\n  a: {connection: {gid-index: 0, gid-type: roce-v2}}\n");
        assertTrue(typed.getMessage().contains("connection.gid-index 0 of sim:mlx5 port 1 is 0: ")
                && typed.getMessage().contains("roce-v1, which does not match connection.gid-type roce-v2"), typed.getMessage());
    }

    @Test
    void aPathMtuAboveThePortsActiveMtuDegradesOrFails() {
        List<PortInfo> ports = List.of(new PortInfo(1, "active", 1024, 4096, "ethernet", 0,
                List.of(new GidEntry(0, new byte[16], GidType.ROCE_V2))));
        Policy p = PolicyLoader.parse("c.yaml", "classes:\n  a: {connection: {path-mtu: 4096}}\n");
        EffectivePolicy e = p.effective("dev0", TestCaps.MLX5, ports);
        assertEquals(1024, e.endpointClass("a").connection().pathMtu());
        assertEquals("class a: connection.path-mtu 4096 > active MTU 1024 of dev0 port 1 \u2192 1024",
                e.degradations().getFirst().message());
        Policy strict = PolicyLoader.parse("c.yaml",
                "classes:\n  a: {on-unsupported: fail, connection: {path-mtu: 4096}}\n");
        PolicyException f = assertThrows(PolicyException.class, () -> strict.effective("dev0", TestCaps.MLX5, ports));
        assertTrue(f.getMessage().startsWith("c.yaml:2:52: class a: connection.path-mtu 4096 > active MTU 1024"),
                f.getMessage());
    }
}
