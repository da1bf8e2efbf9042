package dev.scalep.verbs.counters;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A local group ({@link Counters#localGroup}): its counters share the cache lines they were
 * given, the group reads its own block, the file gets the values when they are published (by
 * {@link Counters#publish} or, without a call, by the publisher thread), and a closed group's
 * values move into the file's closed totals.
 */
@Timeout(120)
class LocalGroupTest {
    private static final String[] NAMES = {"a", "b", "c", "d"};

    private static Map<String, Long> file() throws Exception {
        Path p = Counters.path();
        assertNotNull(p, "the process has a counters file");
        CountersFile.Snapshot s = CountersFile.read(p);
        assertNotNull(s);
        return s.counters().stream().collect(Collectors.toMap(CountersFile.Counter::label, CountersFile.Counter::value,
                Long::sum));
    }

    @Test
    void countersShareTheLinesTheyWereGivenAndTheFileGetsTheirValuesWhenPublished() throws Exception {
        String object = "lg" + UUID.randomUUID().toString().substring(0, 8);
        try (CounterGroup g = Counters.localGroup(Counters.TYPE_QP, object, NAMES, new int[] {0, 1, 0, 1})) {
            assertTrue(g.isLocal());
            assertTrue(g.shared(), "in this process's file");
            // a, c in line 0; b, d in line 1
            assertEquals(0, g.local(0).offset());
            assertEquals(Long.BYTES, g.local(2).offset());
            assertEquals(Counters.LINE, g.local(1).offset());
            assertEquals(Counters.LINE + Long.BYTES, g.local(3).offset());
            for (int i = 0; i < 1000; i++) {
                g.local(0).add(1);
            }
            g.local(1).addAtomic(5);
            g.local(3).set(77);
            LocalCounter mine = g.scratch(0, 7);
            mine.set(-1); // the writer's own state: in the block, not a counter
            assertEquals(1000, g.value(0));
            assertEquals(5, g.value(1));
            assertEquals(0, g.value(2));
            assertEquals(77, g.value(3));
            Counters.publish();
            Map<String, Long> f = file();
            assertEquals(1000L, f.get(object + " a"));
            assertEquals(5L, f.get(object + " b"));
            assertEquals(0L, f.get(object + " c"));
            assertEquals(77L, f.get(object + " d"));
            assertThrows(IllegalArgumentException.class, () -> g.scratch(0, 1), "slot 1 of line 0 holds c");
            assertThrows(IllegalArgumentException.class, () -> g.scratch(2, 0), "the block has two lines");
        }
        Counters.publish();
        Map<String, Long> after = file();
        assertNull(after.get(object + " a"), "a closed group's counters leave the file");
        assertTrue(after.get("closed.qp a") >= 1000L, "its values move into the closed totals: " + after);
    }

    @Test
    void thePublisherThreadCopiesTheValuesWithoutBeingAsked() throws Exception {
        String object = "lg" + UUID.randomUUID().toString().substring(0, 8);
        try (CounterGroup g = Counters.localGroup(Counters.TYPE_QP, object, NAMES, new int[4])) {
            g.local(0).add(41);
            g.local(0).add(1);
            Long seen = null;
            for (int i = 0; i < 400 && !Long.valueOf(42).equals(seen); i++) { // at most about 20 s
                Thread.sleep(50);
                seen = file().get(object + " a");
            }
            assertEquals(42L, seen, "the publisher thread copied the value into the file");
        }
    }

    @Test
    void aLayoutThatDoesNotFitIsRefusedBeforeAnythingIsAllocated() {
        String[] nine = {"1", "2", "3", "4", "5", "6", "7", "8", "9"};
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Counters.localGroup(Counters.TYPE_QP, "full", nine, new int[9]));
        assertTrue(e.getMessage().contains("more than 8 counters in line 0"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> Counters.localGroup(Counters.TYPE_QP, "short", NAMES, new int[3]));
        assertThrows(IllegalArgumentException.class,
                () -> Counters.localGroup(Counters.TYPE_QP, "negative", NAMES, new int[] {0, -1, 0, 0}));
    }
}
