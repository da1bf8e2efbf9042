package dev.scalep.bench.kernels;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class HpccStreamTest {
    @Test
    void jumpingToNMatchesSteppingNTimes() {
        long v = 1;
        for (long n = 0; n <= 200_000; n++) {
            if (n < 300 || n % 997 == 0) {
                assertEquals(v, HpccStream.start(n), "value " + n);
            }
            v = HpccStream.next(v);
        }
    }

    @Test
    void theStreamRepeatsAfterItsPeriodAndNotBefore() {
        assertEquals(1, HpccStream.start(HpccStream.PERIOD));
        assertEquals(HpccStream.start(12345), HpccStream.start(HpccStream.PERIOD + 12345));
        assertEquals(HpccStream.start(HpccStream.PERIOD - 5), HpccStream.start(-5));
        assertNotEquals(1, HpccStream.start(HpccStream.PERIOD / 2));
    }

    @Test
    void aJumpFromAnyStartContinuesTheStream() {
        // start(a) stepped b times is start(a + b), for starts far beyond the stepping test's range.
        long a = 987_654_321_012L;
        long v = HpccStream.start(a);
        for (int b = 1; b <= 1000; b++) {
            v = HpccStream.next(v);
        }
        assertEquals(HpccStream.start(a + 1000), v);
    }
}
