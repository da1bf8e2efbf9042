package dev.scalep.bench;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The output directory of one run. Files are written into a staging directory inside it and moved
 * into place by {@link #commit()} with atomic renames, so that the directory never holds a
 * half-written file; the names a run wrote are recorded in {@link #MANIFEST}, and the next run
 * removes the files of the previous run it did not write again (its charts do not linger beside
 * new CSV). Files the user put there are never touched. {@link #interrupted()} says, for a Ctrl-C,
 * what the directory holds.
 */
public final class RunOutput {
    /** Lists the files the last completed run wrote, one name a line. */
    public static final String MANIFEST = ".scalep-run";

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
            for (String old : previous()) {
                if (!names.contains(old) && !old.contains("/") && !old.startsWith(".")) {
                    Files.deleteIfExists(dir.resolve(old));
                }
            }
            Path m = Files.writeString(s.resolve(MANIFEST), String.join("\n", names) + "\n");
            move(m, dir.resolve(MANIFEST));
            Files.deleteIfExists(s);
            committed = true;
            return out;
        }
    }

    /** The files the last completed run in this directory wrote (empty when none is recorded). */
    public List<String> previous() throws IOException {
        Path m = dir.resolve(MANIFEST);
        if (!Files.isRegularFile(m)) {
            return List.of();
        }
        Set<String> names = new LinkedHashSet<>();
        for (String line : Files.readAllLines(m)) {
            if (!line.isBlank()) {
                names.add(line.strip());
            }
        }
        return List.copyOf(names);
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
