package dev.scalep.verbs;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A QP address survives the trip as bytes; a damaged one is refused, never half-read. */
class QpAddressTest {
    @Test
    void roundTripsThroughBytes() {
        byte[] gid = new byte[16];
        gid[0] = (byte) 0xfe;
        gid[15] = 7;
        QpAddress a = new QpAddress("sim:mlx5", gid, 3, 0x123456, 99);
        assertEquals(a, QpAddress.fromBytes(a.toBytes()));
    }

    @Test
    void truncatedOrTrailingBytesAreRefused() {
        byte[] b = new QpAddress("mlx5_0", new byte[16], 1, 2, 3).toBytes();
        assertThrows(IllegalArgumentException.class, () -> QpAddress.fromBytes(Arrays.copyOf(b, b.length - 1)));
        assertThrows(IllegalArgumentException.class, () -> QpAddress.fromBytes(Arrays.copyOf(b, b.length + 1)));
        assertThrows(IllegalArgumentException.class, () -> QpAddress.fromBytes(new byte[0]));
    }
}
