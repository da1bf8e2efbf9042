package dev.scalep.bench.tune;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The hardware and software resources a tune weighs, in the spelling of {@code --order}. */
public enum Resource {
    /** UAR pages (doorbell pages) allocated; 0 on devices without them (EFA). */
    UAR_PAGES("uar-pages"),
    /** Queue pairs. */
    QPS("qps"),
    /** Software memory of contexts, PDs, MRs, QPs and CQs, in bytes. */
    MEMORY("memory");

    /** Default order of "fewest resources": UAR pages, then QPs, then memory. */
    public static final List<Resource> DEFAULT_ORDER = List.of(UAR_PAGES, QPS, MEMORY);

    private final String spelling;

    Resource(String spelling) {
        this.spelling = spelling;
    }

    public String spelling() {
        return spelling;
    }

    /**
     * An order written as comma-separated names ({@code qps,uar-pages}); resources not named follow in
     * the default order. Unknown or repeated names are an {@link IllegalArgumentException}.
     */
    public static List<Resource> parseOrder(String text) {
        List<Resource> out = new ArrayList<>();
        for (String part : text.split(",")) {
            String s = part.strip().toLowerCase(Locale.ROOT);
            Resource r = null;
            for (Resource c : values()) {
                if (c.spelling.equals(s)) {
                    r = c;
                }
            }
            if (r == null) {
                throw new IllegalArgumentException("--order: '" + part.strip() + "' is not a resource; use uar-pages, qps, memory");
            }
            if (out.contains(r)) {
                throw new IllegalArgumentException("--order: " + r.spelling + " is named twice");
            }
            out.add(r);
        }
        for (Resource r : DEFAULT_ORDER) {
            if (!out.contains(r)) {
                out.add(r);
            }
        }
        return List.copyOf(out);
    }

    /** "uar-pages, qps, memory". */
    public static String spell(List<Resource> order) {
        return String.join(", ", order.stream().map(Resource::spelling).toList());
    }
}
