package dev.scalep.bench;

import dev.scalep.policies.Category;
import dev.scalep.policies.EffectivePolicy;
import dev.scalep.policies.EndpointClass;
import dev.scalep.policies.Policy;
import dev.scalep.policies.PolicyLoader;
import dev.scalep.policies.SharingConfig;
import dev.scalep.verbs.Device;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Turns the sweep's options into the list of configurations to run. Invalid options are rejected
 * with {@link IllegalArgumentException} before anything runs.
 */
public record SweepPlan(List<SweepPoint> points, int repeats, long messagesPerConfiguration,
                        List<String> notes) {

    /** The sharing level the sweep adds next to the six categories: MPI+threads with a combining shared QP. */
    public static final String COMBINING = "mpi-threads,qp=shared:combining";
    private static final Set<String> FEATURES = Set.of("postlist", "unsignaled", "inline", "blueflame");
    private static final Set<String> AXES = Set.of("buf", "ctx", "pd", "mr", "cq", "qp");

    /** What the user asked for; nulls take the defaults (or the --quick ones). */
    public record Request(Device device, List<Integer> threads, List<String> categories, String policy, Long messages,
                          int postlist, int unsignaled, int depth, List<String> without, String share, List<Integer> ways,
                          String qpMode, Integer repeat, boolean quick) {
    }

    public static SweepPlan build(Request r) {
        List<String> notes = new ArrayList<>();
        List<Integer> threads = r.threads() != null ? r.threads() : r.quick() ? List.of(1, 2, 4) : List.of(1, 2, 4, 8, 16);
        for (int t : threads) {
            if (t < 1 || t > 1024) {
                throw new IllegalArgumentException("--threads: " + t + " is out of range 1..1024");
            }
        }
        long messages = r.messages() != null ? r.messages() : r.quick() ? 1_000_000 : 2_000_000;
        if (messages < 1 || messages > 1_000_000_000L) {
            throw new IllegalArgumentException("--messages: " + messages + " is out of range 1..1000000000");
        }
        int repeats = r.repeat() != null ? r.repeat() : r.quick() ? 3 : 5;
        if (repeats < 1 || repeats > 100) {
            throw new IllegalArgumentException("--repeat: " + repeats + " is out of range 1..100");
        }
        if (r.depth() < 1 || r.depth() > r.device().capabilities().maxQpWr()) {
            throw new IllegalArgumentException("--depth: " + r.depth() + " is out of range 1.." + r.device().capabilities().maxQpWr()
                    + " (the device's max_qp_wr)");
        }
        if (r.postlist() < 1 || r.postlist() > r.depth()) {
            throw new IllegalArgumentException("--postlist: " + r.postlist() + " must be in 1..depth (" + r.depth() + ")");
        }
        if (r.unsignaled() < 1 || r.unsignaled() > r.depth()) {
            throw new IllegalArgumentException("--unsignaled: " + r.unsignaled() + " must be in 1..depth (" + r.depth()
                    + "): at least one of every queue-depth WQEs must be signaled");
        }
        for (String f : r.without()) {
            if (!FEATURES.contains(f.toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException("--without: unknown feature '" + f + "'; use postlist, unsignaled, inline or blueflame");
            }
        }
        if (!r.qpMode().equals("locked") && !r.qpMode().equals("combining")) {
            throw new IllegalArgumentException("--qp-mode: '" + r.qpMode() + "' is not locked or combining");
        }

        Map<String, String> levels = new LinkedHashMap<>(); // label -> sharing
        if (r.policy() != null) {
            if (r.categories() != null) {
                throw new IllegalArgumentException("--policy and --categories exclude each other");
            }
            Policy policy = r.policy().startsWith("catalog:")
                    ? PolicyLoader.loadCatalog(r.policy().substring("catalog:".length()))
                    : PolicyLoader.load(Path.of(r.policy()));
            EffectivePolicy eff = policy.effective(r.device());
            eff.degradations().forEach(d -> notes.add(d.message()));
            // Each class runs with all its features (EndpointOptions.from): depth, postlist, unsignaled interval,
            // inline threshold, BlueFlame, WR pool and chain length, SRQ sizing and refill, CQ depth and moderation.
            int maxThreadsP = threads.stream().mapToInt(Integer::intValue).max().orElse(1);
            boolean bfDev = r.device().capabilities().blueFlame();
            List<SweepPoint> classPoints = new ArrayList<>();
            if (r.threads() == null) { // the default thread counts that every class's x-way sharing divides
                threads = threads.stream().filter(t -> eff.classes().values().stream().allMatch(c -> fits(c.sharing(), t))).toList();
                if (threads.isEmpty()) {
                    throw new IllegalArgumentException("--policy " + r.policy() + ": no default thread count suits the x-way "
                            + "sharing of every class; give --threads");
                }
                notes.add("threads " + threads + ": the default thread counts that the x-way sharing of every class divides");
            }
            for (EndpointClass c : eff.classes().values()) {
                for (int t : threads) {
                    try {
                        c.sharing().checkThreads(t);
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException("--threads " + t + ": class " + c.name() + " of " + r.policy()
                                + ": " + e.getMessage());
                    }
                    classPoints.add(new SweepPoint(r.device().name(), c.name(), c.sharing().toString(), t, c.postlist(),
                            c.unsignaled(), c.queueDepth(), perThread(messages, t), c.inlineThreshold() >= SweepRunner.PAYLOAD,
                            bfDev && c.blueFlame() != dev.scalep.policies.BlueFlame.OFF, null, 1, "all", c));
                }
            }
            notes.add("policy " + r.policy() + ": " + eff.classes().size() + " endpoint classes, up to " + maxThreadsP + " threads");
            return new SweepPlan(List.copyOf(classPoints), repeats, messages, List.copyOf(notes));
        } else if (r.categories() != null) {
            Levels.parse(r.categories()).forEach((label, cfg) -> levels.put(label, cfg.toString()));
        } else {
            for (Category c : Category.values()) {
                levels.put(c.spelling(), c.config().toString());
            }
            levels.put("mpi-threads+combining", SharingConfig.parse(COMBINING).toString());
        }

        List<SweepPoint> points = new ArrayList<>();
        boolean bf = r.device().capabilities().blueFlame();
        if (r.share() != null) {
            String axis = r.share().toLowerCase(Locale.ROOT);
            if (!AXES.contains(axis)) {
                throw new IllegalArgumentException("--share: unknown axis '" + r.share() + "'; use buf, ctx, pd, mr, cq or qp");
            }
            for (int t : threads) {
                List<Integer> ways = r.ways();
                if (ways == null) { // 1, 2, 4, ... up to t: those that divide t
                    ways = new ArrayList<>();
                    for (int w = 1; w <= t; w *= 2) {
                        if (t % w == 0) {
                            ways.add(w);
                        }
                    }
                }
                for (int w : ways) {
                    String sharing = xWay(axis, w, r.qpMode());
                    try {
                        SharingConfig.parse(sharing).checkThreads(t);
                    } catch (IllegalArgumentException e) {
                        List<Integer> fit = new ArrayList<>();
                        for (int x = 1; x <= t; x++) {
                            if (t % x == 0) {
                                fit.add(x);
                            }
                        }
                        throw new IllegalArgumentException("--ways " + w + " with --threads " + t + ": x-way sharing needs a "
                                + "thread count that is a multiple of x (for " + t + " threads: --ways " + fit.toString()
                                .replaceAll("[\\[\\] ]", "") + ")");
                    }
                    points.add(new SweepPoint(r.device().name(), axis + " " + w + "-way", SharingConfig.parse(sharing).toString(),
                            t, r.postlist(), r.unsignaled(), r.depth(), perThread(messages, t), true, bf, axis, w, "all"));
                }
            }
        } else {
            for (Map.Entry<String, String> e : levels.entrySet()) {
                for (int t : threads) {
                    try {
                        SharingConfig.parse(e.getValue()).checkThreads(t);
                    } catch (IllegalArgumentException ex) {
                        throw new IllegalArgumentException("--categories " + e.getKey() + " with --threads " + t + ": " + ex.getMessage());
                    }
                    points.add(new SweepPoint(r.device().name(), e.getKey(), e.getValue(), t, r.postlist(), r.unsignaled(),
                            r.depth(), perThread(messages, t), true, bf, null, 1, "all"));
                    for (String f : r.without()) {
                        String fl = f.toLowerCase(Locale.ROOT);
                        points.add(new SweepPoint(r.device().name(), e.getKey(), e.getValue(), t,
                                fl.equals("postlist") ? 1 : r.postlist(), fl.equals("unsignaled") ? 1 : r.unsignaled(),
                                r.depth(), perThread(messages, t), !fl.equals("inline"), bf && !fl.equals("blueflame"), null, 1, "w/o " + fl));
                    }
                }
            }
        }
        if (points.isEmpty()) {
            throw new IllegalArgumentException("nothing to run: the options select no configuration");
        }
        return new SweepPlan(List.copyOf(points), repeats, messages, List.copyOf(notes));
    }

    private static boolean fits(SharingConfig cfg, int threads) {
        try {
            cfg.checkThreads(threads);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Messages each of {@code threads} senders posts so that together they post {@code total}. */
    static long perThread(long total, int threads) {
        return Math.max(1, (total + threads - 1) / threads);
    }

    /**
     * The sharing level of an x-way sweep of one axis: everything per thread (each thread its own
     * context, as in MPI everywhere) except the swept axis, shared by {@code w} threads, and the
     * parents it needs shared at least as widely (a QP shared by w threads needs their PD and CTX).
     */
    public static String xWay(String axis, int w, String qpMode) {
        String x = w == 1 ? "per-thread" : w + "way";
        String ctx = "per-thread";
        String pd = "per-thread";
        String mr = "per-thread";
        String buf = "per-thread";
        String qp = "per-thread";
        String cq = "per-qp";
        switch (axis) {
            case "ctx" -> ctx = x;
            case "pd" -> {
                ctx = x;
                pd = x;
            }
            case "mr" -> {
                ctx = x;
                pd = x;
                mr = x;
            }
            case "buf" -> buf = x;
            case "cq" -> {
                ctx = x;
                cq = w == 1 ? "per-qp" : x;
            }
            case "qp" -> {
                ctx = x;
                pd = x;
                qp = w == 1 ? "per-thread" : x + ":" + qpMode;
                cq = "per-qp";
            }
            default -> throw new IllegalArgumentException(axis);
        }
        return "ctx=" + ctx + ",td=none,pd=" + pd + ",mr=" + mr + ",buf=" + buf + ",qp=" + qp + ",cq=" + cq + ",srq=none";
    }
}
