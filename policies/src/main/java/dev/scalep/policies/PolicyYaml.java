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
            if (only == null || only.equals(d.className())) {
                sb.append("# degraded: ").append(d.message()).append('\n');
            }
        }
        for (String n : p.notes()) {
            if (only == null || n.startsWith("class " + only + ":")) {
                sb.append("# note: ").append(n).append('\n');
            }
        }
        sb.append("version: 1\nclasses:\n");
        for (EndpointClass c : p.classes().values()) {
            if (only != null && !only.equals(c.name())) {
                continue;
            }
            sb.append("  ").append(c.name()).append(":\n");
            Category cat = c.sharing().category();
            sb.append("    sharing: \"").append(cat != null ? cat.spelling() : c.sharing().toString()).append("\"");
            if (cat != null) {
                sb.append("  # ").append(c.sharing());
            }
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
            var k = c.connection();
            sb.append("    connection:\n");
            line(sb, 6, "port", k.port());
            auto(sb, "gid-index", k.gidIndex() < 0 ? null : k.gidIndex(), "chosen by gid-type and address-family");
            line(sb, 6, "gid-type", k.gidType() == null ? "any" : k.gidType().spelling());
            line(sb, 6, "address-family", k.family().spelling());
            auto(sb, "path-mtu", k.pathMtu() == 0 ? null : k.pathMtu(), "the port's active MTU, lowered to the peer's");
            line(sb, 6, "min-rnr-timer", k.minRnrTimer());
            line(sb, 6, "timeout", k.timeout());
            line(sb, 6, "retry-count", k.retryCount());
            line(sb, 6, "rnr-retry", k.rnrRetry());
            auto(sb, "max-rd-atomic", k.maxRdAtomic() == 0 ? null : k.maxRdAtomic(), "the device's limit, at most 16");
            auto(sb, "max-dest-rd-atomic", k.maxDestRdAtomic() == 0 ? null : k.maxDestRdAtomic(),
                    "the device's limit, at most 16");
            line(sb, 6, "service-level", k.serviceLevel());
            line(sb, 6, "traffic-class", k.trafficClass());
            line(sb, 6, "hop-limit", k.hopLimit());
            line(sb, 4, "on-unsupported", c.onUnsupported().spelling());
        }
        return sb.toString();
    }

    /** A connection key: its value, or (automatic) a comment saying what is used, so the output loads again. */
    private static void auto(StringBuilder sb, String key, Object value, String automatic) {
        if (value != null) {
            line(sb, 6, key, value);
        } else {
            sb.append("      # ").append(key).append(": automatic (").append(automatic).append(")\n");
        }
    }

    private static void line(StringBuilder sb, int indent, String key, Object value) {
        sb.append(" ".repeat(indent)).append(key).append(": ").append(value).append('\n');
    }
}
