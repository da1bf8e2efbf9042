package dev.scalep.verbs;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class QpAddressTest {
    private static byte[] gid() {
        byte[] g = new byte[16];
        for (int i = 0; i < 16; i++) {
            g[i] = (byte) (0xf0 + i);
        }
        return g;
    }

    @Test
    void bytesRoundTripEveryField() {
        QpAddress a = new QpAddress("mlx5_0", gid(), 0xbeef, 0x00abcdef, 0x00fedcba, 1024);
        byte[] b = a.toBytes();
        QpAddress back = QpAddress.fromBytes(b);
        assertEquals(a, back);
        assertEquals(1024, back.mtu());
        assertEquals(0xbeef, back.lid());
        assertArrayEquals(gid(), back.gid());
        assertEquals(2 + 6 + 16 + 2 + 4 + 4 + 2, b.length);
        assertNotEquals(a, a.withMtu(4096), "the MTU is part of the address");
    }

    @Test
    void encodingIsStable() {
        QpAddress a = new QpAddress("rxe0", new byte[16], 1, 17, 5, 4096);
        byte[] b = a.toBytes();
        // version, name length, "rxe0", 16 zero bytes, lid 1, qpn 17, psn 5, mtu 4096 (big-endian)
        byte[] expect = new byte[2 + 4 + 16 + 12];
        expect[0] = 1;
        expect[1] = 4;
        System.arraycopy("rxe0".getBytes(), 0, expect, 2, 4);
        int o = 22;
        expect[o + 1] = 1;
        expect[o + 5] = 17;
        expect[o + 9] = 5;
        expect[o + 10] = 0x10;
        assertArrayEquals(expect, b);
    }

    @Test
    void malformedEncodingsAreRefused() {
        byte[] b = new QpAddress("rxe1", gid(), 0, 1, 2, 2048).toBytes();
        assertThrows(IllegalArgumentException.class, () -> QpAddress.fromBytes(Arrays.copyOf(b, b.length - 1)));
        assertThrows(IllegalArgumentException.class, () -> QpAddress.fromBytes(Arrays.copyOf(b, b.length + 1)));
        byte[] v = b.clone();
        v[0] = 2;
        assertThrows(IllegalArgumentException.class, () -> QpAddress.fromBytes(v));
        byte[] m = b.clone();
        m[m.length - 1] = 1; // MTU 2049
        assertThrows(IllegalArgumentException.class, () -> QpAddress.fromBytes(m));
        assertThrows(IllegalArgumentException.class, () -> new QpAddress("x", new byte[15], 0, 0, 0));
    }

    @Test
    void pathMtuCodesAndAgreement() {
        assertEquals(1, PathMtu.code(256));
        assertEquals(5, PathMtu.code(4096));
        assertEquals(1024, PathMtu.bytes(3));
        assertEquals(0, PathMtu.bytes(6));
        assertThrows(IllegalArgumentException.class, () -> PathMtu.code(1500));
        assertEquals(1024, PathMtu.agree(PathMtu.AUTO, 4096, 1024), "the smaller side wins by default");
        assertEquals(2048, PathMtu.agree(PathMtu.AUTO, 2048, 4096));
        assertEquals(4096, PathMtu.agree(PathMtu.AUTO, 4096, 0), "a peer without an MTU leaves the local one");
        assertEquals(512, PathMtu.agree(512, 4096, 4096), "an explicit MTU is used as set");
        assertEquals("256, 512, 1024", PathMtu.upTo(1024));
    }
}
