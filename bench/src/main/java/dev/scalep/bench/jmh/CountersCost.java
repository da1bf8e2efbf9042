package dev.scalep.bench.jmh;

import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * What the runtime counters cost on the data path: {@link EndpointPostPollBenchmark} and
 * {@link SharedQpBenchmark} with counting on ({@code -Dscalep.counters=true}) and off
 * ({@code false}, which removes every increment: the switch is a constant), alternated fork by
 * fork in one run (on, off; then off, on; ...), so that a machine whose load drifts affects both
 * alike. Each pair of forks gives one ratio (on / off); the median, least and greatest ratio per
 * case are printed with each side's bytes per operation ({@code gc.alloc.rate.norm}) and the load
 * average. Usage: {@code java -cp bench/target/benchmarks.jar dev.scalep.bench.jmh.CountersCost [pairs [case]]}
 * (default 5 pairs of every case, or of the cases whose name contains {@code case}; 3 warm-up and 5
 * measured iterations of 1 s per fork). The ratio of each fork's best iteration is printed too.
 */
public final class CountersCost {
    /** One measured case: a benchmark, its parameters and thread count. */
    record Case(String name, String benchmark, String param, String value, int threads) {
    }

    private static final List<Case> CASES = List.of(
            new Case("EndpointPostPoll static x1", EndpointPostPollBenchmark.class.getName() + ".write", "category",
                    "static", 1),
            new Case("EndpointPostPoll mpi-threads x2", EndpointPostPollBenchmark.class.getName() + ".write", "category",
                    "mpi-threads", 2),
            new Case("SharedQp locked x2", SharedQpBenchmark.class.getName() + ".write", "mode", "locked", 2),
            new Case("SharedQp combining x2", SharedQpBenchmark.class.getName() + ".write", "mode", "combining", 2));

    private CountersCost() {
    }

    public static void main(String[] args) throws RunnerException {
        int pairs = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        if (pairs < 1) {
            throw new IllegalArgumentException("pairs must be >= 1: " + pairs);
        }
        String only = args.length > 1 ? args[1] : "";
        double loadBefore = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        List<String> lines = new ArrayList<>();
        for (Case c : CASES) {
            if (!c.name().contains(only)) {
                continue;
            }
            double[] ratios = new double[pairs];
            double[] bestRatios = new double[pairs];
            double[] onScore = new double[pairs];
            double[] offScore = new double[pairs];
            double onAlloc = 0;
            double offAlloc = 0;
            for (int i = 0; i < pairs; i++) {
                boolean onFirst = i % 2 == 0;
                double[] first = fork(c, onFirst);
                double[] second = fork(c, !onFirst);
                double[] on = onFirst ? first : second;
                double[] off = onFirst ? second : first;
                onScore[i] = on[0];
                offScore[i] = off[0];
                ratios[i] = on[0] / off[0];
                bestRatios[i] = on[2] / off[2];
                onAlloc = Math.max(onAlloc, on[1]);
                offAlloc = Math.max(offAlloc, off[1]);
            }
            double[] sorted = ratios.clone();
            Arrays.sort(sorted);
            double[] best = bestRatios.clone();
            Arrays.sort(best);
            lines.add(String.format(Locale.ROOT,
                    "%-34s on/off median %.4f (min %.4f, max %.4f); of the best iterations %.4f (min %.4f, max %.4f)"
                            + "  on %s  off %s ops/us  B/op on %.3f off %.3f",
                    c.name(), median(sorted), sorted[0], sorted[sorted.length - 1], median(best), best[0],
                    best[best.length - 1], Arrays.toString(round(onScore)), Arrays.toString(round(offScore)), onAlloc,
                    offAlloc));
        }
        double loadAfter = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        System.out.println();
        System.out.printf(Locale.ROOT, "counters on vs off, %d alternated fork pairs per case, %d cpus, load average %.2f"
                + " before, %.2f after%n", pairs, Runtime.getRuntime().availableProcessors(), loadBefore, loadAfter);
        lines.forEach(System.out::println);
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static double[] round(double[] v) {
        double[] r = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            r[i] = Math.round(v[i] * 100) / 100.0;
        }
        return r;
    }

    /**
     * One fork of {@code c}: its throughput (ops/us), bytes allocated per operation, and its best
     * iteration's throughput (on a machine whose other load comes and goes, the iteration least
     * disturbed by it).
     */
    private static double[] fork(Case c, boolean counters) throws RunnerException {
        ChainedOptionsBuilder o = new OptionsBuilder()
                .include("^" + c.benchmark().replace(".", "\\.") + "$")
                .param(c.param(), c.value())
                .threads(c.threads())
                .forks(1)
                .warmupIterations(3).warmupTime(TimeValue.seconds(1))
                .measurementIterations(5).measurementTime(TimeValue.seconds(1))
                .jvmArgsAppend("-Dscalep.counters=" + counters)
                .addProfiler(GCProfiler.class)
                .shouldFailOnError(true);
        Collection<RunResult> results = new Runner(o.build()).run();
        RunResult r = results.iterator().next();
        double score = r.getPrimaryResult().getScore();
        Result<?> alloc = r.getSecondaryResults().get("gc.alloc.rate.norm");
        double best = 0;
        for (BenchmarkResult b : r.getBenchmarkResults()) {
            for (IterationResult it : b.getIterationResults()) {
                best = Math.max(best, it.getPrimaryResult().getScore());
            }
        }
        return new double[]{score, alloc == null ? Double.NaN : alloc.getScore(), best};
    }
}
