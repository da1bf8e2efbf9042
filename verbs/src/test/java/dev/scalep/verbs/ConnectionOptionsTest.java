package dev.scalep.verbs;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GID, port and MTU selection over a ConnectX-style RoCE GID table (link-local and IPv4-mapped
 * addresses, each as RoCE v1 and v2), and the range checks of the knobs. The same selection runs
 * against real tables in the rxe VM ({@code RxeConnectionTest}).
 */
class ConnectionOptionsTest {
    static byte[] linkLocal() {
        byte[] g = new byte[16];
        g[0] = (byte) 0xfe;
        g[1] = (byte) 0x80;
        g[15] = 7;
        return g;
    }

    static byte[] ipv4(int last) {
        byte[] g = new byte[16];
        g[10] = (byte) 0xff;
        g[11] = (byte) 0xff;
        g[12] = 10;
        g[15] = (byte) last;
        return g;
    }

    static final PortInfo ROCE = new PortInfo(1, "active", 1024, 4096, "ethernet", 0, List.of(
            new GidEntry(0, linkLocal(), GidType.ROCE_V1), new GidEntry(1, linkLocal(), GidType.ROCE_V2),
            new GidEntry(2, ipv4(5), GidType.ROCE_V1), new GidEntry(3, ipv4(5), GidType.ROCE_V2)));
    static final PortInfo IB = new PortInfo(2, "down", 4096, 4096, "infiniband", 17, List.of(
            new GidEntry(0, linkLocal(), GidType.IB)));

    @Test
    void automaticSelectionPrefersRoceV2Ipv4() {
        ConnectionOptions d = ConnectionOptions.DEFAULTS;
        assertEquals(3, d.selectGid("v", "mlx5_0", ROCE).index());
        assertEquals(1, d.withGid(null, ConnectionOptions.AddressFamily.IPV6).selectGid("v", "mlx5_0", ROCE).index());
        assertEquals(2, d.withGid(GidType.ROCE_V1, ConnectionOptions.AddressFamily.IPV4)
                .selectGid("v", "mlx5_0", ROCE).index());
        assertEquals(0, d.selectGid("v", "mlx5_0", IB).index());
        assertEquals("::ffff:10.0.0.5", ROCE.gid(3).address());
    }

    @Test
    void explicitIndexMustExistAndMatch() {
        assertEquals(2, ConnectionOptions.DEFAULTS.withGidIndex(2).selectGid("v", "mlx5_0", ROCE).index());
        VerbsException e = assertThrows(VerbsException.class,
                () -> ConnectionOptions.DEFAULTS.withGidIndex(7).selectGid("ibv_create_qp", "mlx5_0", ROCE));
        assertTrue(e.getMessage().contains("GID index 7 is empty or beyond the table of mlx5_0 port 1"), e.getMessage());
        assertTrue(e.getMessage().contains("3: ::ffff:10.0.0.5 roce-v2"), e.getMessage());
        e = assertThrows(VerbsException.class, () -> new ConnectionOptions(1, 0, GidType.ROCE_V2,
                ConnectionOptions.AddressFamily.ANY, 0, 1, 14, 7, 7, 0, 0, 0, 0, 64).selectGid("v", "mlx5_0", ROCE));
        assertTrue(e.getMessage().contains("is fe80:0:0:0:0:0:0:7 roce-v1, not roce-v2 any"), e.getMessage());
        e = assertThrows(VerbsException.class, () -> ConnectionOptions.DEFAULTS
                .withGid(GidType.ROCE_V2, ConnectionOptions.AddressFamily.IPV4).selectGid("v", "mlx5_1", IB));
        assertTrue(e.getMessage().contains("no roce-v2 ipv4 GID on mlx5_1 port 2"), e.getMessage());
    }

    @Test
    void portsAndMtuAreCheckedAgainstTheDevice() {
        VerbsException e = assertThrows(VerbsException.class,
                () -> ConnectionOptions.DEFAULTS.withPort(3).selectPort("v", "mlx5_0", List.of(ROCE, IB)));
        assertTrue(e.getMessage().contains("mlx5_0 has ports 1, 2"), e.getMessage());
        assertEquals(1024, ConnectionOptions.DEFAULTS.advertisedMtu("v", "mlx5_0", ROCE), "auto: the active MTU");
        assertEquals(512, ConnectionOptions.DEFAULTS.withPathMtu(512).advertisedMtu("v", "mlx5_0", ROCE));
        e = assertThrows(VerbsException.class,
                () -> ConnectionOptions.DEFAULTS.withPathMtu(2048).advertisedMtu("ibv_create_qp", "mlx5_0", ROCE));
        assertTrue(e.getMessage().contains("path MTU 2048 exceeds the active MTU 1024 of mlx5_0 port 1"
                + " (allowed: 256, 512, 1024)"), e.getMessage());
        assertTrue(e.getMessage().contains("EINVAL"), e.getMessage());
    }

    @Test
    void depthsAreCappedByTheDevice() {
        DeviceCapabilities caps = dev.scalep.verbs.sim.SimDevice.mlx5().capabilities();
        assertEquals(Math.min(16, caps.maxQpInitRdAtom()),
                ConnectionOptions.DEFAULTS.initiatorDepth("v", "sim:mlx5", caps));
        VerbsException e = assertThrows(VerbsException.class, () -> ConnectionOptions.DEFAULTS
                .withRdAtomic(0, caps.maxQpRdAtom() + 1).responderDepth("v", "sim:mlx5", caps));
        assertTrue(e.getMessage().contains("max_qp_rd_atom"), e.getMessage());
    }

    @Test
    void knobRangesAreRefused() {
        ConnectionOptions d = ConnectionOptions.DEFAULTS;
        assertThrows(IllegalArgumentException.class, () -> d.withTimers(32, 14, 7, 7));
        assertThrows(IllegalArgumentException.class, () -> d.withTimers(1, 14, 8, 7));
        assertThrows(IllegalArgumentException.class, () -> d.withRoute(16, 0, 64));
        assertThrows(IllegalArgumentException.class, () -> d.withRoute(0, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> d.withPathMtu(1500));
        assertThrows(IllegalArgumentException.class, () -> d.withPort(0));
        assertEquals("auto", d.toMap().get("pathMtu"));
        assertEquals(14, d.toMap().get("timeout"));
    }
}
