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
        // The list rule of every command (no empty item, none twice): ';' between levels, ',' between category names.
        for (String level : dev.scalep.cli.Checks.items("--categories", args, ";")) {
            List<String> labels = level.contains("=") ? List.of(level) : dev.scalep.cli.Checks.items("--categories", List.of(level), ",");
            for (String label : labels) {
                if (out.put(label, SharingConfig.parse(label)) != null) {
                    throw new dev.scalep.cli.UserException("--categories: '" + label + "' is given twice");
                }
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("no sharing level given");
        }
        return out;
    }
}
