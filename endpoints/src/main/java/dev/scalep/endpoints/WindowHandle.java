package dev.scalep.endpoints;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * What one rank publishes about its part of a {@link Window} through the world's all-gather: the
 * window's id and creation number, the address and length of the rank's memory, and the rkeys of
 * its registrations, one per source rank and QP index ({@link #rkey(int, int)}): the key an
 * initiator's QP {@code k} uses is the one of the registration on the PD of the target's QP
 * {@code k}, which is the QP it is connected to.
 *
 * <p>{@link #toBytes()} is a stable, versioned encoding: {@code u8 version(=1), u16 window id, u32
 * creation number, u64 address, u64 length, u16 sources, u16 QPs, sources x QPs x u32 rkey},
 * big-endian. On RC there is one row per rank of the world (the owner's own row holds the keys
 * of its loopback QPs, which only it uses); on connectionless devices one row serves every
 * source, the owner included.
 */
public record WindowHandle(int window, int sequence, long address, long length, int sources, int qps, int[] rkeys) {
    /** The encoding version {@link #toBytes()} writes. */
    public static final byte VERSION = 1;
    private static final int MAX_ROWS = 1 << 16;

    public WindowHandle {
        if (window < 0 || window >= MAX_ROWS || sources < 0 || sources >= MAX_ROWS || qps < 0 || qps >= MAX_ROWS
                || length < 0 || rkeys.length != sources * qps) {
            throw new IllegalArgumentException("window handle: id " + window + ", " + sources + " sources x " + qps
                    + " QPs with " + rkeys.length + " keys, length " + length);
        }
    }

    /** The rkey a source's QP {@code qp} uses ({@code source} is 0 on connectionless devices). */
    public int rkey(int source, int qp) {
        return rkeys[source * qps + qp];
    }

    public byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(1 + 2 + 4 + 8 + 8 + 2 + 2 + 4 * rkeys.length);
        b.put(VERSION).putShort((short) window).putInt(sequence).putLong(address).putLong(length)
                .putShort((short) sources).putShort((short) qps);
        for (int k : rkeys) {
            b.putInt(k);
        }
        return b.array();
    }

    /** Decode {@link #toBytes()}; a wrong version, a truncated or over-long encoding is an {@link IllegalArgumentException}. */
    public static WindowHandle fromBytes(byte[] bytes) {
        try {
            ByteBuffer in = ByteBuffer.wrap(bytes);
            byte v = in.get();
            if (v != VERSION) {
                throw new IllegalArgumentException("window handle encoding version " + v + ", expected " + VERSION);
            }
            int window = Short.toUnsignedInt(in.getShort());
            int sequence = in.getInt();
            long address = in.getLong();
            long length = in.getLong();
            int sources = Short.toUnsignedInt(in.getShort());
            int qps = Short.toUnsignedInt(in.getShort());
            if ((long) sources * qps * 4 != in.remaining()) {
                throw new IllegalArgumentException("window handle of " + bytes.length + " bytes: " + sources + " x " + qps
                        + " keys need " + ((long) sources * qps * 4) + " more, " + in.remaining() + " left");
            }
            int[] keys = new int[sources * qps];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = in.getInt();
            }
            return new WindowHandle(window, sequence, address, length, sources, qps, keys);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("truncated window handle (" + bytes.length + " bytes)", e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WindowHandle h && h.window == window && h.sequence == sequence && h.address == address
                && h.length == length && h.sources == sources && h.qps == qps && Arrays.equals(h.rkeys, rkeys);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(address) * 31 + window;
    }
}
