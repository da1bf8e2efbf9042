package dev.scalep.policies;

/** Writes effective policies in the policy file format. */
final class PolicyYaml {
    private PolicyYaml() {
    }

    static String write(EffectivePolicy p, String only) {
        StringBuilder sb = new StringBuilder();
        sb.append("# effective policy from ").append(p.source());
        sb.append(p.device() == null ? " (no device: device-independent checks only)" : " on " + p.device()).append('\n');
        for (Degradation d : p.degradations()) {
            if (only == null || only.equals(d.className())) sb.append("# degraded: ").append(d.message()).append('\n');
        }
        for (String n : p.notes()) {
            if (only == null || n.startsWith("class " + only + ":")) sb.append("# note: ").append(n).append('\n');
        }
        sb.append("version: 1\nclasses:\n");
        for (EndpointClass c : p.classes().values()) {
            if (only != null && !only.equals(c.name())) continue;
            sb.append("  ").append(c.name()).append(":\n");
            Category cat = c.sharing().category();
            sb.append("    sharing: \"").append(cat != null ? cat.spelling() : c.sharing().toString()).append("\"");
            if (cat != null) sb.append("  # ").append(c.sharing());
            sb.append('\n');
            line(sb, 4, "queue-depth", c.queueDepth());
            line(sb, 4, "postlist", c.postlist());
            line(sb, 4, "unsignaled", c.unsignaled());
            line(sb, 4, "inline", c.inlineThreshold());
            line(sb, 4, "blueflame", c.blueFlame().spelling());
            sb.append("    chained:\n");
            line(sb, 6, "enabled", c.chained().enabled());
            line(sb, 6, "pool", c.chained().poolSize());
            line(sb, 6, "max-length", c.chained().maxLength());
            line(sb, 4, "sge-header-payload", c.sgeHeaderPayload());
            sb.append("    srq:\n");
            line(sb, 6, "depth", c.srq().depth());
            line(sb, 6, "refill-threshold", c.srq().refillThreshold());
            line(sb, 6, "refill-batch", c.srq().refillBatch());
            sb.append("    cq:\n");
            line(sb, 6, "depth", c.cq().depth());
            sb.append("      moderation:\n");
            line(sb, 8, "count", c.cq().moderationCount());
            line(sb, 8, "period-us", c.cq().moderationPeriodUs());
            sb.append("    srd:\n");
            line(sb, 6, "ordering", c.srd().ordering().spelling());
            line(sb, 6, "atomics-emulation", c.srd().atomicsEmulation());
            line(sb, 4, "on-unsupported", c.onUnsupported().spelling());
        }
        return sb.toString();
    }

    private static void line(StringBuilder sb, int indent, String key, Object value) {
        sb.append(" ".repeat(indent)).append(key).append(": ").append(value).append('\n');
    }
}
