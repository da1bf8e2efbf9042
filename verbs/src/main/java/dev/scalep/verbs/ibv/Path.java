package dev.scalep.verbs.ibv;

import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.GidEntry;
import dev.scalep.verbs.PortInfo;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.ffm.IbvStructs;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A QP's (or an AH's) side of a path, resolved from its {@link ConnectionOptions} against the
 * context's ports: the port, the source GID and the MTU it advertises. Invalid ports, GID indexes
 * and MTUs fail here, before any verbs call, naming the device and what exists.
 */
record Path(ConnectionOptions options, PortInfo port, GidEntry gid, int mtu) {

    static Path resolve(IbvContext ctx, ConnectionOptions o, String verb) {
        PortInfo p = o.selectPort(verb, ctx.name, ctx.ports);
        GidEntry g = o.selectGid(verb, ctx.name, p);
        return new Path(o, p, g, o.advertisedMtu(verb, ctx.name, p));
    }

    /**
     * Fill an {@code ibv_ah_attr} towards {@code dst} from this port and GID: a GRH (source GID index,
     * traffic class, hop limit) on Ethernet or when the destination has a GID, the LID and SL.
     */
    void fillAh(MemorySegment ah, QpAddress dst) {
        byte[] dgid = dst.gid();
        boolean global = port.ethernet() || !zero(dgid);
        ah.set(JAVA_BYTE, IbvStructs.AH_IS_GLOBAL, (byte) (global ? 1 : 0));
        if (global) {
            MemorySegment.copy(dgid, 0, ah, JAVA_BYTE, IbvStructs.AH_GRH_DGID, 16);
            ah.set(JAVA_BYTE, IbvStructs.AH_GRH_SGID_INDEX, (byte) gid.index());
            ah.set(JAVA_BYTE, IbvStructs.AH_GRH_HOP_LIMIT, (byte) options.hopLimit());
            ah.set(JAVA_BYTE, IbvStructs.AH_GRH_TRAFFIC_CLASS, (byte) options.trafficClass());
        }
        ah.set(JAVA_SHORT, IbvStructs.AH_DLID, (short) dst.lid());
        ah.set(JAVA_BYTE, IbvStructs.AH_SL, (byte) options.serviceLevel());
        ah.set(JAVA_BYTE, IbvStructs.AH_PORT_NUM, (byte) port.port());
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
