package dev.scalep.verbs.ibv;

import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.GidEntry;
import dev.scalep.verbs.PathMtu;
import dev.scalep.verbs.PortInfo;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.ffm.IbvConst;
import dev.scalep.verbs.ffm.IbvStructs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Map;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A QP's (or an AH's) side of a path, resolved from its {@link ConnectionOptions} against the
 * context's ports: the port, the source GID and the MTU it advertises. Invalid ports, GID indexes
 * and MTUs fail here, before any verbs call, naming the device and what exists. {@link #query} reads
 * back what the device holds for a QP.
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

    /**
     * The connection attributes the device holds ({@code ibv_query_qp}), by name: port, path_mtu
     * (bytes), timeout, retry_cnt, rnr_retry, min_rnr_timer, max_rd_atomic, max_dest_rd_atomic, sl,
     * sgid_index, traffic_class, hop_limit. Control path.
     */
    static Map<String, Integer> query(IbvContext context, MemorySegment qp, String what) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment at = a.allocate(IbvStructs.IBV_QP_ATTR);
            int mask = IbvConst.IBV_QP_PORT | IbvConst.IBV_QP_AV | IbvConst.IBV_QP_PATH_MTU | IbvConst.IBV_QP_TIMEOUT
                    | IbvConst.IBV_QP_RETRY_CNT | IbvConst.IBV_QP_RNR_RETRY | IbvConst.IBV_QP_MIN_RNR_TIMER
                    | IbvConst.IBV_QP_MAX_QP_RD_ATOMIC | IbvConst.IBV_QP_MAX_DEST_RD_ATOMIC;
            int rc = context.lib.queryQp(qp, at, mask, a.allocate(IbvStructs.IBV_QP_INIT_ATTR));
            if (rc != 0) {
                throw Check.fail("ibv_query_qp", rc, context.name, what);
            }
            long ah = IbvStructs.QPA_AH_ATTR;
            Map<String, Integer> m = new LinkedHashMap<>();
            m.put("port", Byte.toUnsignedInt(at.get(JAVA_BYTE, IbvStructs.QPA_PORT_NUM)));
            m.put("path_mtu", PathMtu.bytes(at.get(JAVA_INT, IbvStructs.QPA_PATH_MTU)));
            m.put("timeout", Byte.toUnsignedInt(at.get(JAVA_BYTE, IbvStructs.QPA_TIMEOUT)));
            m.put("retry_cnt", Byte.toUnsignedInt(at.get(JAVA_BYTE, IbvStructs.QPA_RETRY_CNT)));
            m.put("rnr_retry", Byte.toUnsignedInt(at.get(JAVA_BYTE, IbvStructs.QPA_RNR_RETRY)));
            m.put("min_rnr_timer", Byte.toUnsignedInt(at.get(JAVA_BYTE, IbvStructs.QPA_MIN_RNR_TIMER)));
            m.put("max_rd_atomic", Byte.toUnsignedInt(at.get(JAVA_BYTE, IbvStructs.QPA_MAX_RD_ATOMIC)));
            m.put("max_dest_rd_atomic", Byte.toUnsignedInt(at.get(JAVA_BYTE, IbvStructs.QPA_MAX_DEST_RD_ATOMIC)));
            m.put("sl", Byte.toUnsignedInt(at.get(JAVA_BYTE, ah + IbvStructs.AH_SL)));
            m.put("sgid_index", Byte.toUnsignedInt(at.get(JAVA_BYTE, ah + IbvStructs.AH_GRH_SGID_INDEX)));
            m.put("traffic_class", Byte.toUnsignedInt(at.get(JAVA_BYTE, ah + IbvStructs.AH_GRH_TRAFFIC_CLASS)));
            m.put("hop_limit", Byte.toUnsignedInt(at.get(JAVA_BYTE, ah + IbvStructs.AH_GRH_HOP_LIMIT)));
            return m;
        }
    }
}
