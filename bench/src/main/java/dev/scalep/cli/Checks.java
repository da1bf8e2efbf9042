package dev.scalep.cli;

import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The checks every command applies to what the user asked for before any work starts. Each throws
 * {@link UserException} (one line, exit 2). There is one rule for lists ({@link #items}), one for
 * numbers ({@link #range}), one for options that would be ignored ({@link #refuseUnless}) and one
 * for output directories ({@link #outputDir}) and files ({@link #outputFile}); the divisibility rule of x-way sharing is
 * {@link dev.scalep.policies.SharingConfig#checkThreads(int)}.
 */
public final class Checks {
    private Checks() {
    }

    /**
     * The list rule of every command: each value is split on {@code separator}; an empty item (a
     * stray or doubled separator) and an item given twice are mistakes. Items are stripped.
     */
    public static List<String> items(String option, List<String> values, String separator) {
        Set<String> seen = new LinkedHashSet<>();
        for (String value : values) {
            String[] parts = value.split(Pattern.quote(separator), -1);
            for (String part : parts) {
                String item = part.strip();
                if (item.isEmpty()) {
                    throw new UserException(option + ": empty item in '" + value + "' (a stray '" + separator + "'?)");
                }
                if (!seen.add(item)) {
                    throw new UserException(option + ": '" + item + "' is given twice");
                }
            }
        }
        return List.copyOf(seen);
    }

    /** {@link #items} of whole numbers, each in {@code min..max}. */
    public static List<Integer> ints(String option, List<String> values, int min, int max) {
        List<Integer> out = new ArrayList<>();
        for (String item : items(option, values, ",")) {
            long v;
            try {
                v = Long.parseLong(item);
            } catch (NumberFormatException e) {
                throw new UserException(option + ": '" + item + "' is not a whole number (see --help)");
            }
            out.add((int) range(option, v, min, max, ""));
        }
        return List.copyOf(out);
    }

    /** {@code value} if it is in {@code min..max}; otherwise a mistake naming the range and {@code why} (may be empty). */
    public static long range(String option, long value, long min, long max, String why) {
        if (value < min || value > max) {
            throw new UserException(option + ": " + value + " is out of range " + min + ".." + max
                    + (why == null || why.isEmpty() ? "" : " (" + why + ")"));
        }
        return value;
    }

    /** Whether the user gave {@code option} on the command line (defaults do not count). */
    public static boolean given(CommandLine.Model.CommandSpec spec, String option) {
        return spec.commandLine().getParseResult().hasMatchedOption(option);
    }

    /** Refuse {@code option} when given while {@code needed} is false: it would be ignored. */
    public static void refuseUnless(CommandLine.Model.CommandSpec spec, String option, boolean needed, String why) {
        if (given(spec, option) && !needed) {
            throw new UserException(option + " would be ignored: " + why);
        }
    }

    /**
     * Check that {@code dir} can take a run's files before anything is measured: not empty, not an
     * existing file, creatable, and writable (a file is created and removed there).
     */
    public static Path outputDir(String option, String dir) {
        if (dir == null || dir.isBlank()) {
            throw new UserException(option + " is empty; name a directory (for the working directory write '.')");
        }
        Path p = Path.of(dir);
        if (Files.exists(p) && !Files.isDirectory(p)) {
            throw new UserException(option + ": " + dir + " exists and is not a directory");
        }
        refuseKernelFs(option, p);
        try {
            Files.createDirectories(p);
            Path probe = Files.createTempFile(p, ".scalep-probe", ".tmp");
            Files.delete(probe);
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            throw new UserException(option + ": cannot write to " + dir + " (" + reason(e) + ")");
        }
        return p;
    }

    /**
     * Check that {@code file} can be written whole (a temporary file next to it, then a rename)
     * before anything is measured: its directory exists and takes a new file, and the file, when it
     * exists, is a regular file (not a directory, a device or a pipe); nothing under /proc or /sys.
     */
    public static Path outputFile(String option, Path file) {
        if (file.toString().isBlank()) {
            throw new UserException(option + " is empty; name a file");
        }
        Path abs = file.toAbsolutePath().normalize();
        Path dir = abs.getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new UserException(option + ": " + file + " must be a file in an existing directory");
        }
        if (Files.exists(file) && !Files.isRegularFile(file)) {
            throw new UserException(option + ": " + file + " exists and is not a regular file"
                    + (Files.isDirectory(file) ? " (a directory)" : " (a device, pipe or socket)"));
        }
        refuseKernelFs(option, abs);
        try {
            Path probe = Files.createTempFile(dir, ".scalep-probe", ".tmp");
            Files.delete(probe);
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            throw new UserException(option + ": cannot write to " + dir + " (" + reason(e) + ")");
        }
        if (Files.exists(file) && !Files.isWritable(file) && !Files.isWritable(dir)) {
            throw new UserException(option + ": cannot replace " + file);
        }
        return file;
    }

    /** Results never go into the kernel's pseudo file systems (/proc, /sys), links resolved. */
    private static void refuseKernelFs(String option, Path p) {
        Path q = p.toAbsolutePath().normalize();
        while (q != null && !Files.exists(q)) {
            q = q.getParent();
        }
        try {
            Path real = q == null ? null : q.toRealPath();
            if (real != null && (real.startsWith("/proc") || real.startsWith("/sys"))) {
                throw new UserException(option + ": " + p + " is inside " + (real.startsWith("/proc") ? "/proc" : "/sys")
                        + ", which holds no results");
            }
        } catch (IOException e) {
            throw new UserException(option + ": cannot resolve " + p + " (" + reason(e) + ")");
        }
    }

    private static String reason(Exception e) {
        String m = e.getMessage();
        String kind = e.getClass().getSimpleName().replace("Exception", "").replaceAll("([a-z])([A-Z])", "$1 $2").toLowerCase();
        return m == null || m.isEmpty() ? kind : kind + ": " + m;
    }
}
