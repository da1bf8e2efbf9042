package dev.scalep.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The rate/resources frontier (Pareto set): the configurations that no other configuration beats
 * on both rate and resources. {@code b} beats {@code a} when b's rate is at least a's, each of b's
 * costs is at most a's, and b is strictly better in one of them; configurations equal in everything
 * are all kept.
 */
public final class Frontier {
    private Frontier() {
    }

    /** The members of {@code items} on the frontier, in their original order. */
    public static <T> List<T> of(List<T> items, ToDoubleFunction<T> rate, List<ToDoubleFunction<T>> costs) {
        List<T> out = new ArrayList<>();
        for (T a : items) {
            boolean beaten = false;
            for (T b : items) {
                if (a != b && beats(b, a, rate, costs)) {
                    beaten = true;
                    break;
                }
            }
            if (!beaten) {
                out.add(a);
            }
        }
        return out;
    }

    private static <T> boolean beats(T b, T a, ToDoubleFunction<T> rate, List<ToDoubleFunction<T>> costs) {
        double rb = rate.applyAsDouble(b);
        double ra = rate.applyAsDouble(a);
        if (rb < ra) {
            return false;
        }
        boolean strict = rb > ra;
        for (ToDoubleFunction<T> c : costs) {
            double cb = c.applyAsDouble(b);
            double ca = c.applyAsDouble(a);
            if (cb > ca) {
                return false;
            }
            strict |= cb < ca;
        }
        return strict;
    }

    /** The resource a sweep's rate-vs-resources chart plots: UAR pages where the device has them, else software memory. */
    public static String chartResource(List<Map<String, Object>> rows) {
        return rows.stream().anyMatch(r -> ((Number) r.get("uarPages")).longValue() > 0) ? "uarPages" : "memoryBytes";
    }

    /**
     * The frontier of a sweep's summary rows at each thread count, on the chart's resource: only the rows
     * the rate-vs-resources chart plots (every feature on, no x-way sweep). One entry per thread count
     * with the resource and the frontier's rows (category, rate, resource), cheapest first.
     */
    public static List<Map<String, Object>> ofSweep(List<Map<String, Object>> summary) {
        List<Map<String, Object>> base = summary.stream()
                .filter(r -> "".equals(r.get("shareAxis")) && "all".equals(r.get("variant"))).toList();
        List<Map<String, Object>> out = new ArrayList<>();
        if (base.isEmpty()) {
            return out;
        }
        String resource = chartResource(base);
        ToDoubleFunction<Map<String, Object>> rate = r -> ((Number) r.get("mmsgPerSec")).doubleValue();
        ToDoubleFunction<Map<String, Object>> cost = r -> ((Number) r.get(resource)).doubleValue();
        base.stream().map(r -> ((Number) r.get("threads")).intValue()).distinct().sorted().forEach(t -> {
            List<Map<String, Object>> at = base.stream().filter(r -> ((Number) r.get("threads")).intValue() == t).toList();
            List<Map<String, Object>> points = new ArrayList<>();
            for (Map<String, Object> r : of(at, rate, List.of(cost))) {
                Map<String, Object> point = new LinkedHashMap<>();
                point.put("category", r.get("category"));
                point.put("mmsgPerSec", r.get("mmsgPerSec"));
                point.put(resource, r.get(resource));
                points.add(point);
            }
            points.sort(Comparator.comparingDouble(cost));
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("threads", t);
            entry.put("resource", resource);
            entry.put("points", points);
            out.add(entry);
        });
        return out;
    }
}
