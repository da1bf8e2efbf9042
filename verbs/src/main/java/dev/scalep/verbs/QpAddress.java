package dev.scalep.verbs;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
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

    /**
     * The address as bytes to send out of band: device name length (u8) and UTF-8 bytes, GID
     * length (u8) and bytes, then LID, QPN and PSN as big-endian i32.
     */
    public byte[] toBytes() {
        byte[] name = device.getBytes(StandardCharsets.UTF_8);
        if (name.length > 255 || gid.length > 255) {
            throw new IllegalStateException("device name or GID too long to encode: " + this);
        }
        ByteBuffer b = ByteBuffer.allocate(2 + name.length + gid.length + 12);
        b.put((byte) name.length).put(name).put((byte) gid.length).put(gid).putInt(lid).putInt(qpn).putInt(psn);
        return b.array();
    }

    /** Decode {@link #toBytes()}; a malformed array is refused with IllegalArgumentException. */
    public static QpAddress fromBytes(byte[] bytes) {
        try {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            byte[] name = new byte[b.get() & 0xff];
            b.get(name);
            byte[] gid = new byte[b.get() & 0xff];
            b.get(gid);
            QpAddress a = new QpAddress(new String(name, StandardCharsets.UTF_8), gid, b.getInt(), b.getInt(), b.getInt());
            if (b.hasRemaining()) {
                throw new IllegalArgumentException("trailing bytes after a QP address");
            }
            return a;
        } catch (java.nio.BufferUnderflowException e) {
            throw new IllegalArgumentException("truncated QP address (" + bytes.length + " bytes)");
        }
    }

    @Override
    public String toString() {
        return device + "/qpn=" + qpn + "/gid=" + HexFormat.of().formatHex(gid);
    }
}
