package dev.scalep.verbs.ibv;

import dev.scalep.verbs.ContextOptions;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The counts the ibv provider derives for a real mlx5 context, against the driver's rules as rdma-core
 * v44 documents them (expected values written from the rules, not from the model's output).
 */
class Mlx5UarModelTest {

    @Test
    void classicStaticAssignmentAndCounts() {
        Mlx5UarModel m = new Mlx5UarModel(ContextOptions.DEFAULTS);
        assertEquals(8, m.pages());
        assertEquals(16, m.uuars());
        List<Integer> order = new ArrayList<>();
        for (int k = 0; k < 16; k++) {
            order.add(m.assignQp(-1));
        }
        // low latency 12..15 first, then the medium 1..11 least used (ties to the lowest), never 0
        assertEquals(List.of(12, 13, 14, 15, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1), order);
        assertEquals(15, m.uuarsInUse());
        assertEquals(8, m.pagesInUse());
        m.releaseQp(13);
        assertEquals(13, m.assignQp(-1), "a freed low-latency register is taken first");
        assertTrue(m.describe().startsWith("derived from the mlx5 driver's model"), m.describe());
    }

    @Test
    void knobsChangeTheStaticPages() {
        Mlx5UarModel m = new Mlx5UarModel(ContextOptions.DEFAULTS.withUuars(4, 3));
        assertEquals(2, m.pages());
        List<Integer> order = new ArrayList<>();
        for (int k = 0; k < 5; k++) {
            order.add(m.assignQp(-1));
        }
        assertEquals(List.of(1, 2, 3, 0, 0), order, "register 0 only when no medium register exists");
    }

    @Test
    void threadDomainsAndHiddenPartners() {
        for (boolean independent : new boolean[]{false, true}) {
            for (int n = 1; n <= 6; n++) {
                Mlx5UarModel m = new Mlx5UarModel(ContextOptions.DEFAULTS);
                List<Integer> regs = new ArrayList<>();
                for (int k = 0; k < n; k++) {
                    regs.add(m.allocTd(independent));
                }
                long pages = independent ? n : (n + 1) / 2; // the hidden partner holds the page's second register
                assertEquals(8 + pages, m.pages());
                assertEquals(2 * (8 + pages), m.uuars());
                m.assignQp(regs.get(0));
                assertEquals(1, m.uuarsInUse());
                for (int r : regs) {
                    m.freeTd(r);
                }
                assertEquals(8, m.pages(), "TD pages are unmapped with their TDs");
            }
        }
    }

    @Test
    void dynamicModeMapsOnDemand() {
        Mlx5UarModel m = new Mlx5UarModel(ContextOptions.DEFAULTS.withUarMode(ContextOptions.UarMode.DYNAMIC));
        assertEquals(0, m.pages());
        m.cqCreated();
        assertEquals(1, m.pages(), "one page for CQ doorbells");
        assertEquals(0, m.uuars(), "it has no data-path registers");
        List<Integer> regs = new ArrayList<>();
        for (int k = 0; k < 20; k++) {
            regs.add(m.assignQp(-1));
        }
        assertEquals(1 + 2 + 6, m.pages(), "4 dedicated registers on 2 pages, 12 shared on 6");
        assertEquals(16, m.uuars());
        assertEquals(regs.get(4), regs.get(16), "then the least-used shared register");
        m.releaseQp(regs.get(0));
        m.releaseQp(regs.get(1));
        assertEquals(1 + 1 + 6, m.pages(), "dedicated registers go with their QPs");
    }
}
