package dev.scalep.bench.kernels;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The GUPS verifier counts exactly the words that differ from a replay of the stream. */
class GupsTest {
    @Test
    void theVerifierAcceptsTheSerialTableAndCountsEveryWrongWord() {
        int log = 10;
        int logLocal = log - 1; // rank 1 of 2
        long words = 1L << log;
        long base = 1L << logLocal;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment local = a.allocate(8L << logLocal, 8);
            MemorySegment initial = a.allocate(8L << logLocal, 8);
            for (long i = 0; i < (1L << logLocal); i++) {
                local.setAtIndex(ValueLayout.JAVA_LONG, i, base + i);
            }
            initial.copyFrom(local);
            long v = HpccStream.start(0);
            for (long n = 0; n < 4 * words; n++) { // the serial RandomAccess loop, this rank's words only
                v = HpccStream.next(v);
                long idx = v & (words - 1);
                if (idx >= base) {
                    long off = idx - base;
                    local.setAtIndex(ValueLayout.JAVA_LONG, off, local.getAtIndex(ValueLayout.JAVA_LONG, off) ^ v);
                }
            }
            long changed = 0;
            for (long i = 0; i < (1L << logLocal); i++) {
                if (local.getAtIndex(ValueLayout.JAVA_LONG, i) != initial.getAtIndex(ValueLayout.JAVA_LONG, i)) {
                    changed++;
                }
            }
            assertTrue(changed > 100, "the stream changes " + changed + " words");
            assertEquals(changed, Gups.verify(initial, base, words, logLocal, 1), "a table nobody updated is wrong where the stream changes it");
            assertEquals(0, Gups.verify(local, base, words, logLocal, 1));
            local.setAtIndex(ValueLayout.JAVA_LONG, 7, local.getAtIndex(ValueLayout.JAVA_LONG, 7) ^ 1);
            local.setAtIndex(ValueLayout.JAVA_LONG, 300, 0);
            assertEquals(2, Gups.verify(local, base, words, logLocal, 1));
        }
    }

    @Test
    void tableSizesThatDoNotSplitEvenlyAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> Gups.checkSize(10, 3));
        assertThrows(IllegalArgumentException.class, () -> Gups.checkSize(1, 4));
        assertThrows(IllegalArgumentException.class, () -> Gups.checkSize(41, 1));
        Gups.checkSize(2, 4);
    }
}
