package dev.scalep.verbs;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One port of a device ({@code ibv_query_port} and its GID table).
 *
 * @param port      the port number (1-based)
 * @param state     {@code down}, {@code init}, {@code armed}, {@code active}, ...
 * @param activeMtu the active MTU in bytes: the largest path MTU a QP on this port may use
 * @param maxMtu    the largest MTU the port supports, in bytes
 * @param linkLayer {@code infiniband} or {@code ethernet}
 * @param lid       the port's LID (InfiniBand; 0 on Ethernet)
 * @param gids      the populated GID table entries, by index
 */
public record PortInfo(int port, String state, int activeMtu, int maxMtu, String linkLayer, int lid,
                       List<GidEntry> gids) {
    public PortInfo {
        gids = List.copyOf(gids);
    }

    /** The state name of {@code enum ibv_port_state} value {@code code}. */
    public static String stateName(int code) {
        return switch (code) {
            case 0 -> "nop";
            case 1 -> "down";
            case 2 -> "init";
            case 3 -> "armed";
            case 4 -> "active";
            case 5 -> "active-defer";
            default -> "state " + code;
        };
    }

    public boolean ethernet() {
        return linkLayer.equals("ethernet");
    }

    /** The GID at {@code index}, or {@code null} when that entry is empty or beyond the table. */
    public GidEntry gid(int index) {
        for (GidEntry g : gids) {
            if (g.index() == index) {
                return g;
            }
        }
        return null;
    }

    /** "0: fe80::1 roce-v2, 1: ::ffff:10.0.0.1 roce-v2" (or "none"). */
    public String describeGids() {
        return gids.isEmpty() ? "none" : String.join(", ", gids.stream().map(GidEntry::toString).toList());
    }

    /** Every field as a map (for JSON). */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("port", port);
        m.put("state", state);
        m.put("activeMtu", activeMtu);
        m.put("maxMtu", maxMtu);
        m.put("linkLayer", linkLayer);
        m.put("lid", lid);
        m.put("gids", gids.stream().map(GidEntry::toMap).toList());
        return m;
    }
}
