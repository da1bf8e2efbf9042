package dev.scalep.verbs;

import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How a QP is connected: port, source GID, path MTU and the RC timing and depth knobs of
 * {@code ibv_modify_qp}. Given at QP creation ({@link QpInitAttr#connection()}); the port, GID and
 * MTU shape the QP's {@link QueuePair#address()}, the rest is applied at RTR and RTS.
 *
 * <p>What must agree between the two sides of an RC connection: the path MTU (each side advertises
 * its MTU in its address and both use the smaller one, so they agree by construction); each side's
 * {@code maxRdAtomic} (reads/atomics it keeps in flight) must not exceed the peer's
 * {@code maxDestRdAtomic} (what the peer's responder accepts), or the extra requests fail with a
 * remote invalid-request error; the GIDs must be of the same type and address family to route
 * (RoCE v2 to RoCE v2, IPv4 to IPv4). The rest is per side: {@code timeout} and {@code retryCount}
 * govern this side's transport retries, {@code rnrRetry} how often it retries a receiver-not-ready
 * NAK, {@code minRnrTimer} the delay this side's responder asks the peer to wait; service level,
 * traffic class and hop limit mark this side's packets (a fabric's QoS usually wants both sides
 * equal, verbs do not require it).
 *
 * @param port            the port (1-based)
 * @param gidIndex        the source GID index, or -1 to select one automatically
 * @param gidType         automatic selection only among GIDs of this type; {@code null} = any (RoCE v2
 *                        preferred, then RoCE v1, then IB)
 * @param family          automatic selection only among GIDs of this address family (IPv4-mapped
 *                        preferred under {@code ANY}, then global IPv6, then link-local)
 * @param pathMtu         bytes (256..4096), or {@link PathMtu#AUTO}: the port's active MTU, lowered to
 *                        the peer's; refused above the port's active MTU
 * @param minRnrTimer     0..31, the IB encoding (1 = 0.01 ms, 14 = 1 ms, 0 = 655 ms)
 * @param timeout         0..31, local ACK timeout 4.096 µs × 2^timeout (0 = infinite)
 * @param retryCount      0..7 transport retries; the default is 6, not 7, because rxe (SoftRoCE) never counts
 *                        a retry count of 7 down (it retries forever, as 7 means for RNR retries), so a QP
 *                        to a dead peer would never fail there
 * @param rnrRetry        0..7 RNR retries (7 = forever)
 * @param maxRdAtomic     RDMA reads/atomics in flight as initiator (1..{@code max_qp_init_rd_atom});
 *                        0 = the device's limit, at most 16
 * @param maxDestRdAtomic RDMA reads/atomics accepted as responder (1..{@code max_qp_rd_atom}); 0 = the
 *                        device's limit, at most 16
 * @param serviceLevel    0..15
 * @param trafficClass    0..255 (RoCE: the IP DSCP/ECN byte)
 * @param hopLimit        1..255, the GRH hop limit (on RoCE the kernel replaces it with the IP route's hop limit
 *                        when it resolves the peer's Ethernet address)
 */
public record ConnectionOptions(int port, int gidIndex, GidType gidType, AddressFamily family, int pathMtu,
                                int minRnrTimer, int timeout, int retryCount, int rnrRetry, int maxRdAtomic,
                                int maxDestRdAtomic, int serviceLevel, int trafficClass, int hopLimit) {

    /** Port 1, automatic GID, automatic MTU, RNR timer 1, timeout 14, 6 retries, RNR retry 7, device depths, SL 0, TC 0, hop 64. */
    public static final ConnectionOptions DEFAULTS =
            new ConnectionOptions(1, -1, null, AddressFamily.ANY, PathMtu.AUTO, 1, 14, 6, 7, 0, 0, 0, 0, 64);

    /** Address family filter for automatic GID selection. */
    public enum AddressFamily {
        ANY, IPV4, IPV6;

        public String spelling() {
            return name().toLowerCase();
        }
    }

    public ConnectionOptions {
        range("port", port, 1, 255);
        range("gid index", gidIndex, -1, 255); // sgid_index is a u8
        if (pathMtu != PathMtu.AUTO && !PathMtu.valid(pathMtu)) {
            throw new IllegalArgumentException("path MTU " + pathMtu + " is not one of 256, 512, 1024, 2048, 4096");
        }
        range("min RNR timer", minRnrTimer, 0, 31);
        range("timeout", timeout, 0, 31);
        range("retry count", retryCount, 0, 7);
        range("RNR retry", rnrRetry, 0, 7);
        range("max rd atomic", maxRdAtomic, 0, 255);
        range("max dest rd atomic", maxDestRdAtomic, 0, 255);
        range("service level", serviceLevel, 0, 15);
        range("traffic class", trafficClass, 0, 255);
        range("hop limit", hopLimit, 1, 255);
        if (family == null) {
            family = AddressFamily.ANY;
        }
    }

    private static void range(String what, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(what + " " + v + " outside " + min + ".." + max);
        }
    }

    public ConnectionOptions withPort(int p) {
        return new ConnectionOptions(p, gidIndex, gidType, family, pathMtu, minRnrTimer, timeout, retryCount, rnrRetry,
                maxRdAtomic, maxDestRdAtomic, serviceLevel, trafficClass, hopLimit);
    }

    /** A fixed GID index. */
    public ConnectionOptions withGidIndex(int index) {
        return new ConnectionOptions(port, index, gidType, family, pathMtu, minRnrTimer, timeout, retryCount, rnrRetry,
                maxRdAtomic, maxDestRdAtomic, serviceLevel, trafficClass, hopLimit);
    }

    /** Automatic GID selection restricted to {@code type} ({@code null}: any) and {@code f}. */
    public ConnectionOptions withGid(GidType type, AddressFamily f) {
        return new ConnectionOptions(port, -1, type, f, pathMtu, minRnrTimer, timeout, retryCount, rnrRetry,
                maxRdAtomic, maxDestRdAtomic, serviceLevel, trafficClass, hopLimit);
    }

    public ConnectionOptions withPathMtu(int bytes) {
        return new ConnectionOptions(port, gidIndex, gidType, family, bytes, minRnrTimer, timeout, retryCount, rnrRetry,
                maxRdAtomic, maxDestRdAtomic, serviceLevel, trafficClass, hopLimit);
    }

    public ConnectionOptions withTimers(int minRnr, int ackTimeout, int retries, int rnrRetries) {
        return new ConnectionOptions(port, gidIndex, gidType, family, pathMtu, minRnr, ackTimeout, retries, rnrRetries,
                maxRdAtomic, maxDestRdAtomic, serviceLevel, trafficClass, hopLimit);
    }

    public ConnectionOptions withRdAtomic(int initiator, int responder) {
        return new ConnectionOptions(port, gidIndex, gidType, family, pathMtu, minRnrTimer, timeout, retryCount, rnrRetry,
                initiator, responder, serviceLevel, trafficClass, hopLimit);
    }

    public ConnectionOptions withRoute(int sl, int tclass, int hops) {
        return new ConnectionOptions(port, gidIndex, gidType, family, pathMtu, minRnrTimer, timeout, retryCount, rnrRetry,
                maxRdAtomic, maxDestRdAtomic, sl, tclass, hops);
    }

    // ------------------------------------------------------------------ resolution against a device

    private static VerbsException invalid(String verb, String device, String detail) {
        return new VerbsException(verb, Errno.EINVAL, device, detail);
    }

    /** The selected port of {@code ports}; a missing port names what exists. */
    public PortInfo selectPort(String verb, String device, List<PortInfo> ports) {
        for (PortInfo p : ports) {
            if (p.port() == port) {
                return p;
            }
        }
        throw invalid(verb, device, "port " + port + ": " + switch (ports.size()) {
            case 0 -> "the device reports no ports";
            case 1 -> device + " has port " + ports.getFirst().port() + " only";
            default -> device + " has ports "
                    + String.join(", ", ports.stream().map(p -> String.valueOf(p.port())).toList());
        });
    }

    /**
     * The source GID on {@code p}: the entry at {@link #gidIndex} (which must exist and match a
     * given type/family), or the best automatic match. A GID that does not exist names the table.
     */
    public GidEntry selectGid(String verb, String device, PortInfo p) {
        String where = device + " port " + p.port();
        if (gidIndex >= 0) {
            GidEntry e = p.gid(gidIndex);
            if (e == null) {
                throw invalid(verb, device, "GID index " + gidIndex + " is empty or beyond the table of " + where
                        + " (GIDs " + p.describeGids() + ")");
            }
            if (!matches(e)) {
                throw invalid(verb, device, "GID index " + gidIndex + " of " + where + " is " + e.address() + " "
                        + e.type().spelling() + ", not " + wanted());
            }
            return e;
        }
        return p.gids().stream().filter(this::matches).max(Comparator.comparingInt(ConnectionOptions::rank)
                        .thenComparing(Comparator.comparingInt(GidEntry::index).reversed()))
                .orElseThrow(() -> invalid(verb, device, "no " + wanted() + " GID on " + where + " (GIDs "
                        + p.describeGids() + ")"));
    }

    private boolean matches(GidEntry e) {
        if (gidType != null && e.type() != gidType) {
            return false;
        }
        return switch (family) {
            case ANY -> true;
            case IPV4 -> e.ipv4Mapped();
            case IPV6 -> !e.ipv4Mapped();
        };
    }

    private String wanted() {
        return (gidType == null ? "any-type" : gidType.spelling()) + " " + family.spelling();
    }

    /** RoCE v2 over v1 over IB; IPv4-mapped over global IPv6 over link-local. */
    private static int rank(GidEntry e) {
        int type = switch (e.type()) {
            case ROCE_V2 -> 2;
            case ROCE_V1 -> 1;
            case IB -> 0;
        };
        int addr = e.ipv4Mapped() ? 2 : e.linkLocal() ? 0 : 1;
        return type * 4 + addr;
    }

    /** The MTU this side advertises on {@code p}: the set one (not above the active MTU) or the active MTU. */
    public int advertisedMtu(String verb, String device, PortInfo p) {
        if (pathMtu == PathMtu.AUTO) {
            return p.activeMtu();
        }
        if (pathMtu > p.activeMtu()) {
            throw invalid(verb, device, "path MTU " + pathMtu + " exceeds the active MTU " + p.activeMtu() + " of "
                    + device + " port " + p.port() + " (allowed: " + PathMtu.upTo(p.activeMtu()) + ")");
        }
        return pathMtu;
    }

    /** {@code max_rd_atomic} to use: the set value (at most {@code max_qp_init_rd_atom}) or the device's, at most 16. */
    public int initiatorDepth(String verb, String device, DeviceCapabilities caps) {
        return depth(verb, device, maxRdAtomic, caps.maxQpInitRdAtom(), "max_rd_atomic", "max_qp_init_rd_atom");
    }

    /** {@code max_dest_rd_atomic} to use: the set value (at most {@code max_qp_rd_atom}) or the device's, at most 16. */
    public int responderDepth(String verb, String device, DeviceCapabilities caps) {
        return depth(verb, device, maxDestRdAtomic, caps.maxQpRdAtom(), "max_dest_rd_atomic", "max_qp_rd_atom");
    }

    private static int depth(String verb, String device, int v, int cap, String what, String capName) {
        if (v == 0) {
            return Math.max(1, Math.min(16, cap));
        }
        if (v > cap) {
            throw invalid(verb, device, what + " " + v + " exceeds the device's " + capName + " " + cap);
        }
        return v;
    }

    /**
     * Check everything that can be checked before a QP exists: the port, the GID, the MTU and the
     * read/atomic depths against {@code caps}; throws {@link VerbsException} (EINVAL) naming the limit.
     */
    public void check(String verb, String device, DeviceCapabilities caps, List<PortInfo> ports) {
        PortInfo p = selectPort(verb, device, ports);
        if (!p.gids().isEmpty() || gidIndex >= 0) {
            selectGid(verb, device, p);
        }
        advertisedMtu(verb, device, p);
        initiatorDepth(verb, device, caps);
        responderDepth(verb, device, caps);
    }

    /** Every field as a map (for JSON reports); automatic values spelled {@code auto}. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("port", port);
        m.put("gidIndex", gidIndex < 0 ? "auto" : gidIndex);
        m.put("gidType", gidType == null ? "any" : gidType.spelling());
        m.put("addressFamily", family.spelling());
        m.put("pathMtu", pathMtu == PathMtu.AUTO ? "auto" : pathMtu);
        m.put("minRnrTimer", minRnrTimer);
        m.put("timeout", timeout);
        m.put("retryCount", retryCount);
        m.put("rnrRetry", rnrRetry);
        m.put("maxRdAtomic", maxRdAtomic == 0 ? "auto" : maxRdAtomic);
        m.put("maxDestRdAtomic", maxDestRdAtomic == 0 ? "auto" : maxDestRdAtomic);
        m.put("serviceLevel", serviceLevel);
        m.put("trafficClass", trafficClass);
        m.put("hopLimit", hopLimit);
        return m;
    }
}
