package dev.scalep.verbs;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * What a peer needs to reach a QP, exchanged out of band: the port's GID and LID, the QP number,
 * its initial packet sequence number and the largest path MTU it accepts (bytes; 0 where it does not
 * apply, e.g. connectionless QPs of a provider without one). An RC connection uses the smaller of
 * the two sides' MTUs unless one is set explicitly ({@link PathMtu#agree}).
 *
 * <p>{@link #toBytes()} is a stable, versioned encoding for exchanging addresses between processes:
 * {@code u8 version(=1), u8 name length, name (UTF-8), 16 bytes GID, u16 LID, u32 QPN, u32 PSN,
 * u16 MTU}, big-endian.
 */
public record QpAddress(String device, byte[] gid, int lid, int qpn, int psn, int mtu) {
    /** The encoding's version byte. */
    public static final byte VERSION = 1;

    public QpAddress {
        if (gid.length != 16) {
            throw new IllegalArgumentException("a GID is 16 bytes, not " + gid.length);
        }
        if (mtu != 0 && !PathMtu.valid(mtu)) {
            throw new IllegalArgumentException("path MTU " + mtu + " is not one of 256, 512, 1024, 2048, 4096");
        }
        gid = gid.clone();
    }

    /** An address with no MTU advertised. */
    public QpAddress(String device, byte[] gid, int lid, int qpn, int psn) {
        this(device, gid, lid, qpn, psn, 0);
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    /** The same address advertising {@code bytes} as its path MTU. */
    public QpAddress withMtu(int bytes) {
        return new QpAddress(device, gid, lid, qpn, psn, bytes);
    }

    /** The stable encoding (see the class comment). */
    public byte[] toBytes() {
        byte[] name = device.getBytes(StandardCharsets.UTF_8);
        if (name.length > 255) {
            throw new IllegalStateException("device name longer than 255 bytes: " + device);
        }
        return ByteBuffer.allocate(2 + name.length + 16 + 2 + 4 + 4 + 2).put(VERSION).put((byte) name.length)
                .put(name).put(gid).putShort((short) lid).putInt(qpn).putInt(psn).putShort((short) mtu).array();
    }

    /** Decode {@link #toBytes()}; a wrong version, length or MTU is an {@link IllegalArgumentException}. */
    public static QpAddress fromBytes(byte[] b) {
        try {
            ByteBuffer in = ByteBuffer.wrap(b);
            byte v = in.get();
            if (v != VERSION) {
                throw new IllegalArgumentException("QP address encoding version " + v + ", expected " + VERSION);
            }
            byte[] name = new byte[Byte.toUnsignedInt(in.get())];
            in.get(name);
            byte[] gid = new byte[16];
            in.get(gid);
            int lid = Short.toUnsignedInt(in.getShort());
            int qpn = in.getInt();
            int psn = in.getInt();
            int mtu = Short.toUnsignedInt(in.getShort());
            if (in.hasRemaining()) {
                throw new IllegalArgumentException("QP address: " + in.remaining() + " trailing bytes");
            }
            return new QpAddress(new String(name, StandardCharsets.UTF_8), gid, lid, qpn, psn, mtu);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("QP address truncated (" + b.length + " bytes)");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof QpAddress a && a.device.equals(device) && Arrays.equals(a.gid, gid) && a.lid == lid
                && a.qpn == qpn && a.psn == psn && a.mtu == mtu;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(gid) * 31 + qpn;
    }

    @Override
    public String toString() {
        return device + "/qpn=" + qpn + "/gid=" + HexFormat.of().formatHex(gid) + (mtu > 0 ? "/mtu=" + mtu : "");
    }
}
