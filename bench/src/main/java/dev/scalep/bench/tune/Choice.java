package dev.scalep.bench.tune;

import dev.scalep.bench.Frontier;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The choice among measured candidates, made by a {@link ChoiceRule} and nothing timed: a pure
 * function of the candidates' rates and resources.
 *
 * <p>Rates are ranges over the timed repeats (lowest to highest); two candidates whose ranges overlap
 * are within run-to-run spread of each other and count as equal. Candidates outside the budget are
 * dropped; the best is the highest median left. A candidate <em>clears</em> the threshold when its
 * median is within P% of the best's median (P = 0 with budgets only), and is <em>eligible</em> when
 * it clears it or is equal to a candidate that does. The cheapest eligible candidate in the rule's
 * resource order wins; among equally cheap ones the higher median. Eligible candidates that
 * measured faster than the winner but whose ranges overlap its range are reported as tied with it:
 * the cheaper wins.
 *
 * @param chosen      the winner
 * @param best        the highest median within the budget
 * @param atThreshold the winner does not clear the threshold and is eligible only through its spread (a repeat may choose otherwise)
 * @param tied        faster eligible candidates within the winner's run-to-run spread
 * @param eligible    every eligible candidate, cheapest first
 * @param frontier    every candidate (budget or not) that no other beats on rate and on every resource, cheapest first
 * @param overBudget  candidates the budget excluded
 */
public record Choice(Candidate chosen, Candidate best, boolean atThreshold, List<Candidate> tied,
                     List<Candidate> eligible, List<Candidate> frontier, List<Candidate> overBudget) {

    /** No candidate fits the budget: a user error (one line, exit 2). */
    public static final class BudgetException extends IllegalArgumentException {
        public BudgetException(String message) {
            super(message);
        }
    }

    public Choice {
        tied = List.copyOf(tied);
        eligible = List.copyOf(eligible);
        frontier = List.copyOf(frontier);
        overBudget = List.copyOf(overBudget);
    }

    /** Choose among {@code all} by {@code rule}; {@link BudgetException} when none fits the budget. */
    public static Choice choose(List<Candidate> all, ChoiceRule rule) {
        if (all.isEmpty()) {
            throw new IllegalArgumentException("no candidates to choose from");
        }
        List<Candidate> inBudget = requireBudget(all, rule);
        Comparator<Candidate> cheaper = rule.cheaperFirst();
        Comparator<Candidate> faster = Comparator.comparingDouble(Candidate::median).reversed();
        Candidate best = inBudget.stream().sorted(faster.thenComparing(cheaper)).findFirst().orElseThrow();
        double threshold = best.median() * (1 - rule.percent() / 100);
        List<Candidate> clear = inBudget.stream().filter(c -> c.median() >= threshold).toList();
        List<Candidate> eligible = new ArrayList<>(inBudget.stream()
                .filter(c -> c.median() >= threshold || clear.stream().anyMatch(c::tiesWith)).toList());
        eligible.sort(cheaper.thenComparing(faster));
        Candidate chosen = eligible.getFirst();
        List<Candidate> tied = eligible.stream()
                .filter(c -> c != chosen && c.median() > chosen.median() && c.tiesWith(chosen)).toList();
        List<Candidate> overBudget = all.stream().filter(c -> !rule.withinBudget(c)).toList();
        return new Choice(chosen, best, chosen.median() < threshold, tied, eligible, frontier(all, rule), overBudget);
    }

    /**
     * The candidates within the rule's budget; {@link BudgetException} naming the budget and the
     * cheapest candidate when there are none (callers check this before timing anything, with the
     * resources alone).
     */
    public static List<Candidate> requireBudget(List<Candidate> all, ChoiceRule rule) {
        List<Candidate> in = all.stream().filter(rule::withinBudget).toList();
        if (in.isEmpty() && !all.isEmpty()) {
            Candidate cheapest = all.stream().min(rule.cheaperFirst()).orElseThrow();
            throw new BudgetException("no candidate meets the budget (" + budget(rule) + "); the cheapest, "
                    + cheapest.name() + ", uses " + cheapest.uarPages() + " UAR pages, " + cheapest.qps() + " QPs, "
                    + cheapest.memoryBytes() + " bytes of memory");
        }
        return in;
    }

    private static String budget(ChoiceRule r) {
        List<String> b = new ArrayList<>();
        if (r.maxUarPages() != null) {
            b.add("--max-uar-pages " + r.maxUarPages());
        }
        if (r.maxQps() != null) {
            b.add("--max-qps " + r.maxQps());
        }
        if (r.maxMemory() != null) {
            b.add("--max-memory " + r.maxMemory());
        }
        return String.join(", ", b);
    }

    /** The frontier over the median rate and every resource, cheapest first in the rule's order. */
    static List<Candidate> frontier(List<Candidate> all, ChoiceRule rule) {
        List<ToDoubleFunction<Candidate>> costs = new ArrayList<>();
        for (Resource r : rule.order()) {
            costs.add(c -> c.amount(r));
        }
        List<Candidate> f = new ArrayList<>(Frontier.of(all, Candidate::median, costs));
        f.sort(rule.cheaperFirst());
        return f;
    }

    /** Whether {@code c} is on the frontier. */
    public boolean onFrontier(Candidate c) {
        return frontier.contains(c);
    }
}
