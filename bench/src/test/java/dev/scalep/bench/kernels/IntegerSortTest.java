package dev.scalep.bench.kernels;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Integer Sort's keys are NAS's: its own partial verification values hold, and the jumped slices are the sequence. */
class IntegerSortTest {
    /** NAS IS class S's published test keys (indices into the key array) and their ranks. */
    private static final int[] S_TEST_INDEX = {48427, 17148, 23627, 62548, 4431};
    private static final int[] S_TEST_RANK = {0, 18, 346, 64917, 65463};

    @Test
    void classSKeysPassNasPartialVerificationOfIterationOne() {
        IntegerSort.Size s = IntegerSort.Size.S;
        int maxKey = 1 << 11;
        int[] keys = new int[(int) s.keys()];
        NasRandom.isKeys(0, maxKey, keys);
        for (int k : keys) {
            assertTrue(k >= 0 && k < maxKey, "key " + k + " below MAX_KEY");
        }
        // NAS's iteration 1 changes two keys before ranking; a key's rank is the number of keys below it.
        keys[1] = 1;
        keys[1 + 10] = maxKey - 1;
        int[] below = new int[maxKey + 1];
        for (int k : keys) {
            below[k + 1]++;
        }
        for (int k = 1; k <= maxKey; k++) {
            below[k] += below[k - 1];
        }
        for (int i = 0; i < S_TEST_INDEX.length; i++) {
            int rank = below[keys[S_TEST_INDEX[i]]];
            assertEquals(S_TEST_RANK[i] + (i <= 2 ? 1 : -1), rank, "test key " + i);
        }
    }

    @Test
    void slicesFromJumpsAreTheSerialSequence() {
        int maxKey = 1 << 16;
        int[] all = new int[10_000];
        NasRandom.isKeys(0, maxKey, all);
        int[] slice = new int[3_333];
        NasRandom.isKeys(4_321, maxKey, slice);
        assertArrayEquals(Arrays.copyOfRange(all, 4_321, 4_321 + 3_333), slice);
        assertEquals(NasRandom.next(NasRandom.next(NasRandom.IS_SEED)), NasRandom.jump(NasRandom.IS_SEED, 2));
        long[] whole = IntegerSort.serialChecksums(all.length, maxKey);
        long sum = 0;
        for (int k : all) {
            sum += k;
        }
        assertEquals(sum, whole[0]);
    }

    @Test
    void moreSlicesThanKeysAreRefusedAndClassesParse() {
        assertThrows(IllegalArgumentException.class, () -> IntegerSort.checkSize(IntegerSort.Size.S, 1 << 10, 1 << 7));
        IntegerSort.checkSize(IntegerSort.Size.S, 2, 2);
        assertEquals(IntegerSort.Size.W, IntegerSort.Size.parse("w"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IntegerSort.Size.parse("Z"));
        assertTrue(e.getMessage().contains("use S"), e.getMessage());
    }
}
