package dev.scalep.bench;

import dev.scalep.policies.SharingConfig;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code --categories} convention of {@code sweep} and {@code kernel}: each argument is a list of
 * category names separated by commas ({@code 2x-dynamic,static}) or one axes form
 * ({@code dynamic,cq=shared}); several axes forms are separated by {@code ;}.
 */
public final class Levels {
    private Levels() {
    }

    /** Label (as the user wrote it) to sharing configuration, in order; a bad level throws with its position. */
    public static Map<String, SharingConfig> parse(List<String> args) {
        Map<String, SharingConfig> out = new LinkedHashMap<>();
        for (String arg : args) {
            for (String part : arg.split(";")) {
                String s = part.strip();
                if (s.isEmpty()) {
                    continue;
                }
                if (s.contains("=")) {
                    out.put(s, SharingConfig.parse(s));
                } else {
                    for (String name : s.split(",")) {
                        String n = name.strip();
                        if (!n.isEmpty()) {
                            out.put(n, SharingConfig.parse(n));
                        }
                    }
                }
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("no sharing level given");
        }
        return out;
    }
}
