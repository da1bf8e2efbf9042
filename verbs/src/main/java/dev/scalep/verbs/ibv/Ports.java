package dev.scalep.verbs.ibv;

import dev.scalep.verbs.GidEntry;
import dev.scalep.verbs.GidType;
import dev.scalep.verbs.PathMtu;
import dev.scalep.verbs.PortInfo;
import dev.scalep.verbs.ffm.IbvConst;
import dev.scalep.verbs.ffm.IbvStructs;
import dev.scalep.verbs.ffm.LibIbverbs;
import dev.scalep.verbs.ffm.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Reads a context's ports: {@code ibv_query_port} for state, MTUs, LID and link layer, and each GID
 * table entry with {@code ibv_query_gid_ex} (its type included); where the library predates
 * {@code ibv_query_gid_ex}, {@code ibv_query_gid} with the type the link layer implies.
 */
final class Ports {
    private Ports() {
    }

    static List<PortInfo> all(LibIbverbs lib, MemorySegment ctx, String device, int count) {
        List<PortInfo> ports = new ArrayList<>();
        for (int p = 1; p <= count; p++) {
            ports.add(query(lib, ctx, device, p));
        }
        return List.copyOf(ports);
    }

    static PortInfo query(LibIbverbs lib, MemorySegment ctx, String device, int port) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pa = a.allocate(IbvStructs.IBV_PORT_ATTR);
            int rc = lib.queryPort(ctx, port, pa);
            if (rc != 0) {
                throw Check.fail("ibv_query_port", rc, device, "port " + port);
            }
            int linkLayer = Byte.toUnsignedInt(pa.get(JAVA_BYTE, IbvStructs.PA_LINK_LAYER));
            String ll = switch (linkLayer) {
                case IbvConst.IBV_LINK_LAYER_INFINIBAND -> "infiniband";
                case IbvConst.IBV_LINK_LAYER_ETHERNET -> "ethernet";
                default -> "unspecified";
            };
            int tableLen = pa.get(JAVA_INT, IbvStructs.PA_GID_TBL_LEN);
            List<GidEntry> gids = new ArrayList<>();
            MemorySegment e = a.allocate(IbvStructs.IBV_GID_ENTRY);
            MemorySegment st = Native.callState(a);
            for (int i = 0; i < tableLen; i++) {
                e.fill((byte) 0);
                int r = lib.queryGidEx(ctx, port, i, e);
                GidType type;
                if (r == -1) { // no ibv_query_gid_ex in this libibverbs
                    if (lib.queryGid(st, ctx, port, i, e) != 0) {
                        continue;
                    }
                    type = linkLayer == IbvConst.IBV_LINK_LAYER_ETHERNET ? GidType.ROCE_V2 : GidType.IB;
                } else if (r != 0) {
                    continue; // ENODATA: an empty entry
                } else {
                    type = GidType.of(e.get(JAVA_INT, IbvStructs.GE_GID_TYPE));
                }
                byte[] gid = e.asSlice(0, 16).toArray(JAVA_BYTE);
                if (!zero(gid)) {
                    gids.add(new GidEntry(i, gid, type));
                }
            }
            return new PortInfo(port, PortInfo.stateName(pa.get(JAVA_INT, IbvStructs.PA_STATE)),
                    PathMtu.bytes(pa.get(JAVA_INT, IbvStructs.PA_ACTIVE_MTU)),
                    PathMtu.bytes(pa.get(JAVA_INT, IbvStructs.PA_MAX_MTU)), ll,
                    Short.toUnsignedInt(pa.get(JAVA_SHORT, IbvStructs.PA_LID)), gids);
        }
    }

    private static boolean zero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }
}
