package dev.scalep.verbs;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * What a peer needs to reach a QP, exchanged out of band: the port's GID and LID, the QP number and
 * its initial packet sequence number.
 */
public record QpAddress(String device, byte[] gid, int lid, int qpn, int psn) {
    public QpAddress {
        gid = gid.clone();
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof QpAddress a && a.device.equals(device) && Arrays.equals(a.gid, gid) && a.lid == lid
                && a.qpn == qpn && a.psn == psn;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(gid) * 31 + qpn;
    }

    @Override
    public String toString() {
        return device + "/qpn=" + qpn + "/gid=" + HexFormat.of().formatHex(gid);
    }
}
