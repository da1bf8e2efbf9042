package dev.scalep.verbs.counters;

import org.agrona.concurrent.status.AtomicCounter;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The private counters (no counters file, or a full one): each counts on its own, and making them
 * prints nothing (Agrona warns on stderr for every counter whose buffer is a byte[]).
 */
class PrivateCountersTest {
    @Test
    void theyCountApartAndMakingThemIsSilent() {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        AtomicCounter[] cs;
        try {
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            cs = Counters.privateCounters(Counters.TYPE_QP, "qp 7", "wrs", "doorbells", "blueflame");
        } finally {
            System.setErr(err);
        }
        assertEquals("", captured.toString(StandardCharsets.UTF_8));
        assertEquals(3, cs.length);
        for (int i = 0; i < cs.length; i++) {
            for (int k = 0; k <= i; k++) {
                cs[i].incrementOrdered();
            }
            cs[i].getAndAddOrdered(100L * (i + 1));
        }
        for (int i = 0; i < cs.length; i++) {
            assertEquals(101L * (i + 1), cs[i].get(), "counter " + i);
        }
    }
}
