package dev.scalep.bench.tune;

import dev.scalep.bench.SweepPlan;
import dev.scalep.bench.SweepPoint;
import dev.scalep.bench.Workload;
import dev.scalep.policies.BlueFlame;
import dev.scalep.policies.Category;
import dev.scalep.policies.ChainedPosts;
import dev.scalep.policies.CqSettings;
import dev.scalep.policies.EffectivePolicy;
import dev.scalep.policies.EndpointClass;
import dev.scalep.policies.Policy;
import dev.scalep.policies.SharingConfig;
import dev.scalep.policies.TdMode;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceCapabilities;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The candidate endpoint configurations of a tune on one device for N threads: the six categories
 * (those that need thread domains only where the device has them), MPI+threads with a combining
 * shared QP, and the x-way variants N allows (a QP shared by x threads through the combining
 * poster, a context shared by x threads, for every divisor 1 &lt; x &lt; N); each with every feature
 * on and, for each feature the device supports and the user left open, without it. Each candidate
 * is an effective policy class, so that the written policy runs exactly what was measured.
 */
public final class TuneCandidates {
    /** Queue depth of every candidate (the sweep's and the catalog's default). */
    public static final int DEPTH = EndpointClass.DEFAULT_QUEUE_DEPTH;

    /**
     * One candidate.
     *
     * @param name    level and variant, as printed ({@code static}, {@code qp 2-way w/o inline})
     * @param level   the sharing level's label
     * @param variant "all" or "w/o FEATURE"
     * @param cls     the effective class it runs
     * @param point   the sweep point that measures it
     */
    public record Entry(String name, String level, String variant, EndpointClass cls, SweepPoint point) {
    }

    /**
     * What the user fixed.
     *
     * @param postlist   p, or null: the tune tries 32 and 1
     * @param unsignaled q, or null: the tune tries 64 and 1 where the device allows unsignaled WRs
     */
    public record Features(Integer postlist, Integer unsignaled) {
    }

    private TuneCandidates() {
    }

    /** The sharing levels for {@code threads} on a device with these capabilities: label to sharing (axes form). */
    public static Map<String, String> levels(DeviceCapabilities caps, int threads) {
        Map<String, String> levels = new LinkedHashMap<>();
        for (Category c : Category.values()) {
            if (caps.threadDomains() || c.config().td() == TdMode.NONE) {
                levels.put(c.spelling(), c.config().toString());
            }
        }
        levels.put("mpi-threads+combining", SharingConfig.parse(SweepPlan.COMBINING).toString());
        for (int x = 2; x < threads; x++) {
            if (threads % x == 0) {
                levels.put("qp " + x + "-way", SharingConfig.parse("static,qp=" + x + "way:combining").toString());
                levels.put("ctx " + x + "-way", SharingConfig.parse(SweepPlan.xWay("ctx", x, "combining")).toString());
            }
        }
        return levels;
    }

    /** Every candidate, in level order, each level's "all" first. */
    public static List<Entry> build(Device device, int threads, Workload w, Features f, long messagesPerThread) {
        DeviceCapabilities caps = device.capabilities();
        List<String> variants = new ArrayList<>(List.of("all"));
        if (f.postlist() == null) {
            variants.add("w/o postlist");
        }
        if (f.unsignaled() == null && caps.unsignaled()) {
            variants.add("w/o unsignaled");
        }
        if (w.inlinable(caps)) {
            variants.add("w/o inline");
        }
        if (caps.blueFlame()) {
            variants.add("w/o blueflame");
        }
        List<Entry> out = new ArrayList<>();
        for (Map.Entry<String, String> level : levels(caps, threads).entrySet()) {
            for (String v : variants) {
                EndpointClass cls = effective(device, candidateClass(level.getValue(), v, f, caps, w));
                String name = v.equals("all") ? level.getKey() : level.getKey() + " " + v;
                SweepPoint p = new SweepPoint(device.name(), level.getKey(), cls.sharing().toString(), threads, cls.postlist(),
                        cls.unsignaled(), cls.queueDepth(), messagesPerThread, cls.inlineThreshold() >= w.size(),
                        caps.blueFlame() && cls.blueFlame() != BlueFlame.OFF, null, 1, v, cls);
                out.add(new Entry(name, level.getKey(), v, cls, p));
            }
        }
        return out;
    }

    /** The class of one candidate: the level with every feature on, less the one the variant names. */
    static EndpointClass candidateClass(String sharing, String variant, Features f, DeviceCapabilities caps, Workload w) {
        int p = variant.equals("w/o postlist") ? 1 : f.postlist() != null ? f.postlist() : EndpointClass.DEFAULT_POSTLIST;
        int q = variant.equals("w/o unsignaled") || !caps.unsignaled() ? 1
                : f.unsignaled() != null ? f.unsignaled() : EndpointClass.DEFAULT_UNSIGNALED;
        // inline the payload: the policy default (32 bytes), or the payload size when larger, within the device's limit
        int inline = variant.equals("w/o inline") || !w.inlinable(caps) ? 0
                : Math.min(caps.maxInline(), Math.max(w.size(), EndpointClass.DEFAULT_INLINE));
        BlueFlame bf = variant.equals("w/o blueflame") || !caps.blueFlame() ? BlueFlame.OFF : BlueFlame.ON;
        EndpointClass d = EndpointClass.defaults("tuned");
        SharingConfig s = SharingConfig.parse(sharing);
        // the CQ holds what its queues need at this sharing (the loader's default when cq.depth is left out)
        CqSettings cq = new CqSettings(CqSettings.entriesNeeded(s, DEPTH), d.cq().moderationCount(), d.cq().moderationPeriodUs());
        return new EndpointClass("tuned", s, DEPTH, p, q, inline, bf,
                new ChainedPosts(true, EndpointClass.DEFAULT_CHAIN_POOL, Math.min(p, EndpointClass.DEFAULT_CHAIN_POOL)),
                d.sgeHeaderPayload(), d.srq(), cq, d.srd(), d.onUnsupported());
    }

    /** The class as {@code device} will run it (the device's limits applied). */
    static EndpointClass effective(Device device, EndpointClass c) {
        EffectivePolicy e = Policy.of("tune", c).effective(device);
        return e.endpointClass(c.name());
    }
}
