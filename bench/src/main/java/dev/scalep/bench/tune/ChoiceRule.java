package dev.scalep.bench.tune;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The user's rule for choosing among measured candidates: within {@code withinPercent} of the best
 * measured rate, and/or within budgets of UAR pages, QPs and memory; "fewest resources" compares
 * the resources lexicographically in {@code order}. A null limit is no limit; with budgets only,
 * the best rate within them is chosen ({@code withinPercent} 0).
 */
public record ChoiceRule(Double withinPercent, Long maxUarPages, Long maxQps, Long maxMemory, List<Resource> order) {
    public ChoiceRule {
        if (withinPercent == null && maxUarPages == null && maxQps == null && maxMemory == null) {
            throw new IllegalArgumentException("give a choice rule: --within P% or a budget (--max-uar-pages, --max-qps, --max-memory)");
        }
        if (withinPercent != null && !(withinPercent >= 0 && withinPercent < 100)) {
            throw new IllegalArgumentException("--within: " + withinPercent + "% is out of range 0..<100");
        }
        check("--max-uar-pages", maxUarPages);
        check("--max-qps", maxQps);
        check("--max-memory", maxMemory);
        order = List.copyOf(order == null ? Resource.DEFAULT_ORDER : order);
    }

    private static void check(String option, Long v) {
        if (v != null && v < 0) {
            throw new IllegalArgumentException(option + ": " + v + " is negative");
        }
    }

    /** The tolerance below the best rate, in percent (0 when only budgets are given). */
    public double percent() {
        return withinPercent == null ? 0 : withinPercent;
    }

    /** Whether {@code c} fits every budget. */
    public boolean withinBudget(Candidate c) {
        return (maxUarPages == null || c.uarPages() <= maxUarPages) && (maxQps == null || c.qps() <= maxQps)
                && (maxMemory == null || c.memoryBytes() <= maxMemory);
    }

    /** Whether any budget is set. */
    public boolean hasBudget() {
        return maxUarPages != null || maxQps != null || maxMemory != null;
    }

    /** Cheaper first: the resources compared one after the other in {@link #order()}. */
    public Comparator<Candidate> cheaperFirst() {
        Comparator<Candidate> c = null;
        for (Resource r : order) {
            Comparator<Candidate> by = Comparator.comparingLong(x -> x.amount(r));
            c = c == null ? by : c.thenComparing(by);
        }
        return c;
    }

    /** The rule in words, as the output and the policy file state it. */
    public String describe() {
        List<String> parts = new ArrayList<>();
        if (withinPercent != null) {
            parts.add("fewest resources within " + fmt(withinPercent) + "% of the best measured rate");
        }
        List<String> budget = new ArrayList<>();
        if (maxUarPages != null) {
            budget.add("UAR pages <= " + maxUarPages);
        }
        if (maxQps != null) {
            budget.add("QPs <= " + maxQps);
        }
        if (maxMemory != null) {
            budget.add("memory <= " + maxMemory + " bytes");
        }
        if (!budget.isEmpty()) {
            parts.add((withinPercent == null ? "best rate within the budget " : "budget ") + String.join(", ", budget));
        }
        return String.join("; ", parts) + "; resource order: " + Resource.spell(order);
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }
}
