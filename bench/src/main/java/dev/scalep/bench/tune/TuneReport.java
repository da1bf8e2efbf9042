package dev.scalep.bench.tune;

import dev.scalep.bench.Workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The text of a tune: the candidate table, the decision in words, and the policy file, whose
 * comments record how the class was chosen (device, threads, workload, rule, every candidate's
 * median rate, range and resources, the frontier) above an ordinary policy.
 *
 * @param device    device name
 * @param threads   sender threads
 * @param workload  what was posted
 * @param features  what the user fixed (postlist, unsignaled)
 * @param rule      the choice rule
 * @param messages  messages per repeat over all threads
 * @param repeats   timed repeats per candidate
 * @param ranks     1: each candidate measured by {@code scalep sweep --policy} in a JVM of its own; 2: senders on
 *                  rank 0 and receivers on rank 1 of a launched job, every candidate in the same two JVMs
 * @param candidates every candidate measured, in measuring order
 * @param choice    the decision
 * @param confirmed the chosen class measured again in {@code confirmJvms} fresh JVMs (all their repeats), or null
 * @param confirmJvms how many JVMs measured {@code confirmed}
 */
public record TuneReport(String device, int threads, Workload workload, TuneCandidates.Features features, ChoiceRule rule,
                         long messages, int repeats, int ranks, List<Candidate> candidates, Choice choice,
                         Candidate confirmed, int confirmJvms) {

    /** The candidate table, one line each; {@code prefix} starts every line ("# " in the policy file). */
    public String table(String prefix) {
        int w = Math.max("CANDIDATE".length(), candidates.stream().mapToInt(c -> c.name().length()).max().orElse(0));
        StringBuilder sb = new StringBuilder();
        sb.append(prefix).append(String.format(Locale.ROOT, "  %-" + w + "s  %9s  %19s  %7s  %6s  %5s  %10s%n", "CANDIDATE",
                "MMSG/S", "MIN..MAX", "SPREAD", "UARPG", "QPS", "MEMORY"));
        for (Candidate c : candidates) {
            String mark = c == choice.chosen() ? "*" : choice.onFrontier(c) ? "F" : " ";
            sb.append(prefix).append(String.format(Locale.ROOT, "%s %-" + w + "s  %9.3f  %8.3f..%-9.3f  %6.1f%%  %6d  %5d  %10s%n",
                    mark, c.name(), c.median(), c.min(), c.max(), c.spreadPercent(), c.uarPages(), c.qps(), bytes(c.memoryBytes())));
        }
        return sb.toString();
    }

    /** The decision in words, one statement a line (no prefix). */
    public List<String> decision() {
        List<String> out = new ArrayList<>();
        Candidate c = choice.chosen();
        out.add("chosen: " + c.name() + ": " + rate(c) + ", " + resources(c));
        if (confirmed != null) {
            String line = "confirmed in " + confirmJvms + " fresh JVMs x " + repeats + " repeats: " + rate(confirmed)
                    + ": the rate to expect from the reproduce line";
            if (confirmed.max() < c.min()) {
                line += "; below the range it was chosen with: the best of many measurements is biased up, and more "
                        + "--messages or --repeat narrow that";
            }
            out.add(line);
        }
        Candidate b = choice.best();
        if (b != c) {
            String line = "best measured: " + b.name() + ": " + rate(b);
            if (rule.percent() > 0) {
                line += String.format(Locale.ROOT, "; %s%% below it: %.3f Mmsg/s", fmt(rule.percent()),
                        b.median() * (1 - rule.percent() / 100));
            }
            out.add(line);
        }
        if (!choice.tied().isEmpty()) {
            out.add("tied within run-to-run spread (rate ranges overlap) with " + names(choice.tied())
                    + ": the cheaper wins");
        }
        if (choice.atThreshold()) {
            out.add("eligible only through its spread: its median is below the threshold, but its range overlaps one "
                    + "that clears it; the repeats could not tell, a repeated tune may choose otherwise");
        }
        if (!choice.overBudget().isEmpty()) {
            out.add("over the budget: " + choice.overBudget().size() + " of " + candidates.size() + " candidates");
        }
        out.add("frontier (no other candidate is at least as fast with no more of any resource), cheapest first: "
                + names(choice.frontier()));
        return out;
    }

    /** The command that measures the chosen class again, on the same device, with the same workload and counts. */
    public String reproduce(String policyFile) {
        StringBuilder sb = new StringBuilder(ranks == 2 ? "mpirun -np 2 scalep sweep --policy " : "scalep sweep --policy ").append(policyFile).append(" --device ").append(device)
                .append(" --threads ").append(threads).append(" --messages ").append(messages).append(" --repeat ").append(repeats);
        if (workload.op() != Workload.DEFAULT.op()) {
            sb.append(" --op ").append(workload.op().spelling());
        }
        if (workload.size() != Workload.DEFAULT.size()) {
            sb.append(" --size ").append(workload.size());
        }
        return sb.toString();
    }

    /**
     * The policy file: the record of the tune as comments, then {@code policyYaml} (the chosen
     * class as an effective policy, loadable by {@code policy check} and {@code sweep --policy}).
     */
    public String policyFile(String policyFile, String policyYaml, String when) {
        StringBuilder sb = new StringBuilder();
        sb.append("# scalep policy tune on ").append(device).append(", ").append(threads).append(" threads, ").append(when).append('\n');
        sb.append("# workload: ").append(workload.describe()).append("; postlist: ")
                .append(features.postlist() == null ? "tried " + dev.scalep.policies.EndpointClass.DEFAULT_POSTLIST + " and 1" : "fixed " + features.postlist())
                .append("; unsignaled: ")
                .append(features.unsignaled() == null ? "tried " + dev.scalep.policies.EndpointClass.DEFAULT_UNSIGNALED + " and 1 where the device allows"
                        : "fixed " + features.unsignaled()).append('\n');
        sb.append("# rule: ").append(rule.describe()).append('\n');
        sb.append("# measured: ").append(candidates.size()).append(" candidates, each ").append(messages)
                .append(" messages per repeat over ").append(threads).append(" threads, ").append(repeats)
                .append(" timed repeats after 2 untimed ones; rates in million messages/s\n");
        sb.append(ranks == 2 ? "# measured across 2 ranks (senders on rank 0, receivers on rank 1), all candidates in the same two JVMs\n"
                : "# each candidate measured as the reproduce line measures the chosen one: scalep sweep --policy, in a JVM of its own\n");
        for (String d : decision()) {
            sb.append("# ").append(d).append('\n');
        }
        sb.append("# reproduce: ").append(reproduce(policyFile)).append('\n');
        sb.append("#\n# candidates (* chosen, F on the frontier; MIN..MAX over the repeats, SPREAD = (max - min) / median):\n");
        sb.append(table("#"));
        sb.append("#\n");
        sb.append(policyYaml);
        return sb.toString();
    }

    private static String rate(Candidate c) {
        return String.format(Locale.ROOT, "%.3f Mmsg/s (%.3f..%.3f, spread %.1f%%)", c.median(), c.min(), c.max(), c.spreadPercent());
    }

    static String resources(Candidate c) {
        return c.uarPages() + " UAR pages, " + c.qps() + " QPs, " + bytes(c.memoryBytes());
    }

    private static String names(List<Candidate> cs) {
        return String.join(", ", cs.stream().map(Candidate::name).toList());
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }

    static String bytes(long b) {
        if (b >= 1 << 20) {
            return String.format(Locale.ROOT, "%.1f MiB", b / 1048576.0);
        }
        if (b >= 1 << 10) {
            return String.format(Locale.ROOT, "%.1f KiB", b / 1024.0);
        }
        return b + " B";
    }
}
