package dev.scalep.bench;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The output directory of one run. Files are written into a staging directory inside it and moved
 * into place by {@link #commit()} with atomic renames, so that the directory never holds a
 * half-written file; the files a run wrote are recorded in {@link #MANIFEST} (name, size,
 * modification time and file identity), and the next run removes the files of the previous run it
 * did not write again (its charts do not linger beside new CSV), but only a regular file that is
 * still exactly the one recorded: a name listed by hand, a file the user replaced or edited, a
 * directory or a link is left alone. {@link #interrupted()} says, for a Ctrl-C, what the directory
 * holds.
 */
public final class RunOutput {
    /** Lists the files the last completed run wrote, one name a line. */
    public static final String MANIFEST = ".scalep-run";
    private static final long MAX_MANIFEST = 1 << 20;

    private final Path dir;
    private final Object commitLock = new Object();
    private Path staging;
    private boolean committed;

    public RunOutput(Path dir) {
        this.dir = dir;
    }

    public Path dir() {
        return dir;
    }

    /** The directory this run writes its files into before {@link #commit()}; created on first use. */
    public synchronized Path staging() throws IOException {
        if (staging == null) {
            Files.createDirectories(dir);
            staging = Files.createTempDirectory(dir, ".scalep-staging-");
        }
        return staging;
    }

    /**
     * Move every staged file into the directory (each an atomic rename), remove the files of the
     * previous run that this run did not write, and record this run's files. Returns their paths.
     */
    public List<Path> commit() throws IOException {
        synchronized (commitLock) {
            Path s = staging();
            List<String> names = new ArrayList<>();
            try (Stream<Path> files = Files.list(s)) {
                files.sorted().forEach(f -> names.add(f.getFileName().toString()));
            }
            List<Path> out = new ArrayList<>();
            for (String n : names) {
                out.add(move(s.resolve(n), dir.resolve(n)));
            }
            Map<String, String> before = previousRecords();
            for (Map.Entry<String, String> old : before.entrySet()) {
                String n = old.getKey();
                if (!names.contains(n) && safeName(n) && old.getValue().equals(identity(dir.resolve(n)))) {
                    try {
                        Files.deleteIfExists(dir.resolve(n));
                    } catch (IOException e) {
                        // not removable (a permission, a race): it stays, as any file not ours would
                    }
                }
            }
            StringBuilder manifest = new StringBuilder();
            for (String n : names) {
                String id = identity(dir.resolve(n));
                if (id != null) {
                    manifest.append(n).append('\t').append(id).append('\n');
                }
            }
            Path m = Files.writeString(s.resolve(MANIFEST), manifest.toString());
            move(m, dir.resolve(MANIFEST));
            Files.deleteIfExists(s);
            committed = true;
            return out;
        }
    }

    /** The files the last completed run in this directory wrote (empty when none is recorded). */
    public List<String> previous() throws IOException {
        return List.copyOf(previousRecords().keySet());
    }

    /** The manifest's records: name to identity ("" for a line without one, which is never deleted). */
    private Map<String, String> previousRecords() {
        Path m = dir.resolve(MANIFEST);
        Map<String, String> out = new LinkedHashMap<>();
        try {
            BasicFileAttributes a = Files.readAttributes(m, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile() || a.size() > MAX_MANIFEST) {
                return out;
            }
            for (String line : Files.readAllLines(m)) {
                if (!line.isBlank()) {
                    int tab = line.indexOf('\t');
                    out.put((tab < 0 ? line : line.substring(0, tab)).strip(), tab < 0 ? "" : line.substring(tab + 1));
                }
            }
        } catch (IOException | RuntimeException e) {
            // no manifest, or not one scalep wrote: nothing is known to be ours
        }
        return out;
    }

    /** A plain file name in the directory (no separator, not hidden, not . or ..). */
    private static boolean safeName(String n) {
        return !n.isEmpty() && !n.contains("/") && !n.contains("\0") && !n.startsWith(".");
    }

    /** Size, modification time and file identity of a regular file (links not followed), or null. */
    private static String identity(Path f) {
        try {
            BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile()) {
                return null;
            }
            return a.size() + "\t" + a.lastModifiedTime().to(TimeUnit.NANOSECONDS) + "\t" + a.fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * For a run cut short (Ctrl-C): waits for a commit in progress, removes what was staged, and
     * returns one line saying what the directory holds.
     */
    public String interrupted() {
        synchronized (commitLock) {
            if (committed) {
                return "interrupted after the results were written: " + dir + " holds this run";
            }
            try {
                if (staging != null && Files.isDirectory(staging)) {
                    try (Stream<Path> files = Files.list(staging)) {
                        for (Path f : files.toList()) {
                            Files.deleteIfExists(f);
                        }
                    }
                    Files.deleteIfExists(staging);
                }
                List<String> prev = previous();
                return "interrupted: no result of this run was kept; " + dir
                        + (prev.isEmpty() ? " is as it was" : " still holds the previous run (" + String.join(", ", prev) + ")");
            } catch (IOException e) {
                return "interrupted: no result of this run was kept (" + e.getMessage() + ")";
            }
        }
    }

    /** Whether {@link #commit()} completed. */
    public boolean committed() {
        synchronized (commitLock) {
            return committed;
        }
    }

    private static Path move(Path from, Path to) throws IOException {
        try {
            return Files.move(from, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            return Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
