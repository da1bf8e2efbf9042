package dev.scalep.bench.tune;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The choice rule on synthetic measurements: nothing is timed. */
class ChoiceTest {
    /** A candidate with rate range [min, max], median in between. */
    static Candidate c(String name, double min, double median, double max, long uar, long qps, long mem) {
        return new Candidate(name, median, min, max, uar, qps, mem);
    }

    static ChoiceRule within(double p) {
        return new ChoiceRule(p, null, null, null, null);
    }

    // rates roughly as the categories measure at 4 threads; resources as sim:mlx5 counts them
    final Candidate everywhere = c("mpi-everywhere", 19.0, 20.0, 21.0, 32, 4, 1_200_000);
    final Candidate twoX = c("2x-dynamic", 18.5, 19.0, 19.5, 12, 8, 600_000);
    final Candidate stat = c("static", 15.0, 15.5, 16.0, 8, 4, 500_000);
    final Candidate threads = c("mpi-threads", 9.0, 9.5, 10.0, 8, 1, 300_000);
    final List<Candidate> all = List.of(everywhere, twoX, stat, threads);

    @Test
    void withinZeroPicksTheFastestUnlessACheaperOneTiesWithIt() {
        Choice ch = Choice.choose(all, within(0));
        assertSame(twoX, ch.chosen(), "2x-dynamic's range reaches mpi-everywhere's: equal, and cheaper");
        assertSame(everywhere, ch.best());
        assertEquals(List.of(everywhere), ch.tied(), "the file says they tied");
        assertTrue(ch.atThreshold(), "its median is below the best's: only the spread made it eligible");

        Candidate clear = c("mpi-everywhere", 21.0, 22.0, 23.0, 32, 4, 1_200_000);
        Choice apart = Choice.choose(List.of(clear, twoX, stat, threads), within(0));
        assertSame(clear, apart.chosen(), "ranges apart: the fastest wins however much it costs");
        assertTrue(apart.tied().isEmpty());
        assertFalse(apart.atThreshold());
    }

    @Test
    void withinPercentPicksTheFewestResourcesInOrder() {
        // best median 20: within 25% means >= 15 (static's median 15.5 clears it); mpi-threads is far below
        Choice ch = Choice.choose(all, within(25));
        assertSame(stat, ch.chosen());
        assertFalse(ch.atThreshold());
        assertEquals(List.of(stat, twoX, everywhere), ch.eligible(), "cheapest first");
        // with QPs first, 2x-dynamic's 8 QPs lose to static's 4 QPs and mpi-everywhere's 4 QPs; static is cheaper in UARs
        Choice qpsFirst = Choice.choose(all, new ChoiceRule(25.0, null, null, null, Resource.parseOrder("qps")));
        assertSame(stat, qpsFirst.chosen());
        // with 55% even mpi-threads qualifies: one QP
        assertSame(threads, Choice.choose(all, within(55)).chosen());
        // memory first: mpi-threads is the least memory, but at 25% it is not eligible
        assertSame(stat, Choice.choose(all, new ChoiceRule(25.0, null, null, null, Resource.parseOrder("memory"))).chosen());
    }

    @Test
    void theOrderDecidesBetweenCandidatesThatTradeOneResourceForAnother() {
        Candidate fewUars = c("few-uars", 10, 10, 10, 2, 16, 900_000);
        Candidate fewQps = c("few-qps", 10, 10, 10, 6, 2, 400_000);
        List<Candidate> cs = List.of(fewUars, fewQps);
        assertSame(fewUars, Choice.choose(cs, within(10)).chosen(), "default: UAR pages first");
        assertSame(fewQps, Choice.choose(cs, new ChoiceRule(10.0, null, null, null, Resource.parseOrder("qps"))).chosen());
        assertSame(fewQps, Choice.choose(cs, new ChoiceRule(10.0, null, null, null, Resource.parseOrder("memory,uar-pages"))).chosen());
        assertEquals(List.of(Resource.MEMORY, Resource.UAR_PAGES, Resource.QPS), Resource.parseOrder("memory,uar-pages"));
    }

    @Test
    void aCandidateEqualToOneThatClearsTheThresholdIsEligibleAndMarked() {
        // best 20 (range 19..21): 20% below is 16; mid (median 16.2) clears it
        Candidate mid = c("mid", 15.5, 16.2, 16.5, 6, 4, 400_000);
        Candidate near = c("near", 14.0, 15.5, 15.6, 4, 4, 400_000);
        Choice ch = Choice.choose(List.of(everywhere, mid, near), within(20));
        assertSame(near, ch.chosen(), "near's range overlaps mid's: equal within spread, and cheaper");
        assertTrue(ch.atThreshold(), "median 15.5 < 16: the repeats could not tell");
        assertEquals(List.of(mid), ch.tied());
        Candidate below = c("below", 14.0, 14.5, 15.0, 4, 4, 400_000);
        Choice no = Choice.choose(List.of(everywhere, mid, below), within(20));
        assertSame(mid, no.chosen(), "range 14..15 overlaps nothing that clears 16");
        assertFalse(no.atThreshold());
    }

    @Test
    void budgetsPickTheBestRateWithinThem() {
        Choice ch = Choice.choose(all, new ChoiceRule(null, 8L, null, null, null));
        assertSame(stat, ch.chosen(), "best within 8 UAR pages");
        assertEquals(List.of(everywhere, twoX), ch.overBudget());
        assertSame(threads, Choice.choose(all, new ChoiceRule(null, null, 1L, null, null)).chosen());
        assertSame(threads, Choice.choose(all, new ChoiceRule(null, null, null, 400_000L, null)).chosen());
        // budget and percentage together: within the budget, the fewest within 50% of the best in it
        assertSame(threads, Choice.choose(all, new ChoiceRule(50.0, 8L, null, null, null)).chosen());
        // a tie inside the budget: the cheaper wins and is reported
        Candidate twin = c("static-twin", 15.2, 15.8, 16.1, 8, 8, 700_000);
        Choice tie = Choice.choose(List.of(everywhere, stat, twin), new ChoiceRule(null, 8L, null, null, null));
        assertSame(stat, tie.chosen());
        assertEquals(List.of(twin), tie.tied());
    }

    @Test
    void aBudgetNoCandidateMeetsIsOneLineNamingTheCheapest() {
        Choice.BudgetException e = assertThrows(Choice.BudgetException.class,
                () -> Choice.choose(all, new ChoiceRule(null, 4L, null, null, null)));
        assertTrue(e.getMessage().contains("--max-uar-pages 4"), e.getMessage());
        // static and mpi-threads both use 8 UAR pages, the fewest; mpi-threads has fewer QPs
        assertTrue(e.getMessage().contains("the cheapest, mpi-threads, uses 8 UAR pages, 1 QPs"), e.getMessage());
        assertEquals(1, e.getMessage().lines().count());
        assertThrows(Choice.BudgetException.class, () -> Choice.requireBudget(all, new ChoiceRule(null, null, 0L, null, null)));
        assertTrue(e instanceof IllegalArgumentException, "the CLI turns it into exit 2");
    }

    @Test
    void theFrontierHoldsWhatNothingBeatsOnRateAndEveryResource() {
        Candidate dominated = c("dominated", 8, 9, 10, 8, 4, 500_000); // static is faster with the same resources
        Candidate equal = c("static-copy", 15.0, 15.5, 16.0, 8, 4, 500_000);
        List<Candidate> cs = List.of(everywhere, twoX, stat, threads, dominated, equal);
        Choice ch = Choice.choose(cs, within(0));
        assertTrue(ch.frontier().containsAll(List.of(everywhere, twoX, stat, threads, equal)), ch.frontier().toString());
        assertFalse(ch.frontier().contains(dominated));
        assertEquals(threads, ch.frontier().getFirst(), "cheapest first");
        // a candidate cheaper in one resource and dearer in another stays on the frontier
        Candidate tradeoff = c("tradeoff", 8, 9, 10, 8, 2, 900_000);
        assertTrue(Choice.choose(List.of(stat, tradeoff), within(0)).onFrontier(tradeoff));
    }

    @Test
    void badRulesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ChoiceRule(null, null, null, null, null));
        assertThrows(IllegalArgumentException.class, () -> within(100));
        assertThrows(IllegalArgumentException.class, () -> within(-1));
        assertThrows(IllegalArgumentException.class, () -> new ChoiceRule(null, -1L, null, null, null));
        assertThrows(IllegalArgumentException.class, () -> Resource.parseOrder("qps,qps"));
        assertThrows(IllegalArgumentException.class, () -> Resource.parseOrder("doorbells"));
        assertThrows(IllegalArgumentException.class, () -> c("x", 2, 1, 3, 0, 0, 0));
    }
}
