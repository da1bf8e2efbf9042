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
            String open = "";
            for (PolicyKey<?> k : PolicyKeys.CLASS) {
                if (!k.isSetting()) {
                    continue;
                }
                open = enter(sb, open, k.section());
                int indent = 4 + 2 * depth(k.section());
                String value = k.spelledIn(c);
                if (k == PolicyKeys.SHARING) {
                    Category cat = c.sharing().category();
                    sb.append(" ".repeat(indent)).append(k.name()).append(": \"").append(value).append('"');
                    if (cat != null) {
                        sb.append("  # ").append(c.sharing());
                    }
                    sb.append('\n');
                } else if (value == null) {
                    sb.append(" ".repeat(indent)).append("# ").append(k.name()).append(": automatic (")
                            .append(k.defaultText()).append(")\n");
                } else {
                    sb.append(" ".repeat(indent)).append(k.name()).append(": ").append(value).append('\n');
                }
            }
        }
        return sb.toString();
    }

    /** Opens the sections from {@code open} to {@code section} (writing each new header); returns {@code section}. */
    private static String enter(StringBuilder sb, String open, String section) {
        if (section.equals(open)) {
            return open;
        }
        String common = open;
        while (!common.isEmpty() && !(section + ".").startsWith(common + ".")) {
            int dot = common.lastIndexOf('.');
            common = dot < 0 ? "" : common.substring(0, dot);
        }
        String rest = common.isEmpty() ? section : section.substring(common.length() + 1);
        String at = common;
        for (String part : rest.isEmpty() ? new String[0] : rest.split("\\.")) {
            sb.append(" ".repeat(4 + 2 * depth(at))).append(part).append(":\n");
            at = at.isEmpty() ? part : at + "." + part;
        }
        return section;
    }

    /** Dots in a section path plus one ("" is the class level, 0). */
    private static int depth(String section) {
        return section.isEmpty() ? 0 : section.split("\\.").length;
    }
}
