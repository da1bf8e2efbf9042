package dev.scalep.cli;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Mistakes are caught before any work: one line, exit 2, nothing measured, nothing written. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UpFrontChecksTest {
    static final String[] SMALL = {"--messages", "100", "--repeat", "1", "--no-progress"};

    static SweepCommandTest.Run mistake(String... args) {
        SweepCommandTest.Run r = SweepCommandTest.run(args);
        String what = String.join(" ", args) + " -> " + r.out() + r.err();
        assertEquals(2, r.rc(), what);
        String err = r.err().strip();
        assertEquals(1, err.lines().count(), what);
        assertFalse(err.contains("Exception") || err.contains("\tat "), what);
        assertFalse(r.out().contains("warming up"), "nothing may run before the check: " + what);
        return r;
    }

    static String[] sweep(Path out, String... args) {
        String[] all = new String[args.length + SMALL.length + 3];
        all[0] = "sweep";
        System.arraycopy(args, 0, all, 1, args.length);
        System.arraycopy(SMALL, 0, all, 1 + args.length, SMALL.length);
        all[all.length - 2] = "--out";
        all[all.length - 1] = out.toString();
        return all;
    }

    @Test
    void unwritableOutputIsRefusedBeforeMeasuring(@TempDir Path tmp) throws Exception {
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        for (String out : new String[]{file.toString(), "/dev/null", "/proc/scalep-results", file.resolve("sub").toString()}) {
            SweepCommandTest.Run r = mistake("sweep", "--threads", "1", "--categories", "static", "--messages", "100",
                    "--repeat", "1", "--no-progress", "--out", out);
            assertTrue(r.err().contains("--out"), r.err());
        }
        assertTrue(mistake("sweep", "--threads", "1", "--out", "").err().contains("--out is empty"));
        assertEquals("x", Files.readString(file), "the file named by --out is untouched");
    }

    /** A directory nobody, root included, can create files in (ext4's immutable attribute), or null. */
    static Path immutableDir(Path tmp) throws Exception {
        Path d = Files.createDirectory(tmp.resolve("immutable"));
        Process p = new ProcessBuilder("chattr", "+i", d.toString()).redirectErrorStream(true).start();
        return p.waitFor() == 0 ? d : null;
    }

    static void mutable(Path d) throws Exception {
        if (d != null) {
            new ProcessBuilder("chattr", "-i", d.toString()).start().waitFor();
        }
    }

    @Test
    void tuneRefusesOutputsItCannotWriteBeforeMeasuring(@TempDir Path tmp) throws Exception {
        Path ro = immutableDir(tmp);
        try {
            List<String[]> cases = new ArrayList<>();
            for (String out : new String[]{"/proc/tuned.yaml", "/dev/null", tmp.toString(), "/sys/tuned.yaml"}) {
                cases.add(new String[]{"--out", out});
            }
            cases.add(new String[]{"--out", tmp.resolve("ok.yaml").toString(), "--results", "/proc/scalep-results"});
            cases.add(new String[]{"--out", tmp.resolve("ok.yaml").toString(), "--results", "/dev/null"});
            if (ro != null) {
                cases.add(new String[]{"--out", ro.resolve("tuned.yaml").toString()});
                cases.add(new String[]{"--out", tmp.resolve("ok.yaml").toString(), "--results", ro.resolve("res").toString()});
            }
            for (String[] c : cases) {
                List<String> args = new ArrayList<>(List.of("policy", "tune", "--device", "sim:mlx5", "--threads", "1",
                        "--within", "20%", "--messages", "100", "--repeat", "1", "--confirm", "0"));
                args.addAll(List.of(c));
                SweepCommandTest.Run r = mistake(args.toArray(String[]::new));
                assertFalse(r.out().contains("policy tune on"), "nothing measured: " + r.out());
                assertTrue(r.err().contains(c[c.length - 2]), r.err());
            }
            assertFalse(Files.exists(tmp.resolve("ok.yaml")));
        } finally {
            mutable(ro);
        }
    }

    @Test
    void aReadOnlyDirectoryIsRefused(@TempDir Path tmp) throws Exception {
        Path ro = Files.createDirectory(tmp.resolve("ro"));
        Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            boolean writable;
            try { // root writes anyway: then there is nothing to refuse
                Files.delete(Files.createTempFile(ro, "probe", ""));
                writable = true;
            } catch (IOException e) {
                writable = false;
            }
            Assumptions.assumeFalse(writable, "running as root: permissions do not stop writes");
            assertTrue(mistake(sweep(ro, "--threads", "1")).err().contains("cannot write to " + ro));
        } finally {
            Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    @Test
    void optionsThatWouldBeIgnoredAreRefused(@TempDir Path tmp) {
        String[][] cases = {
                sweep(tmp, "--ways", "1,2"),
                sweep(tmp, "--share", "cq", "--qp-mode", "combining"),
                sweep(tmp, "--qp-mode", "locked"),
                sweep(tmp, "--share", "qp", "--categories", "static"),
                sweep(tmp, "--policy", "catalog:recommended-mlx5", "--share", "qp"),
                sweep(tmp, "--policy", "catalog:recommended-mlx5", "--without", "postlist"),
                sweep(tmp, "--policy", "catalog:recommended-mlx5", "--unsignaled", "8"),
                {"resources", "--threads", "2", "--class", "bulk"},
                {"kernel", "stencil", "--tile", "8"},
                {"kernel", "dgemm", "--iterations", "5"}};
        for (String[] c : cases) {
            assertTrue(mistake(c).err().contains("would be ignored"), String.join(" ", c));
        }
    }

    @Test
    void everyCommandUsesTheSameListRule(@TempDir Path tmp) {
        String[][] cases = {
                sweep(tmp, "--threads", "1,2,"),
                sweep(tmp, "--threads", "2,2,2"),
                sweep(tmp, "--threads", "1,,2"),
                sweep(tmp, "--categories", "static;"),
                sweep(tmp, "--categories", "static,,dynamic"),
                sweep(tmp, "--categories", "static", "--categories", "static"),
                sweep(tmp, "--share", "qp", "--ways", "1,1"),
                sweep(tmp, "--without", "postlist", "--without", "postlist"),
                {"kernel", "dgemm", "--categories", "static,static"},
                {"kernel", "stencil", "--categories", "dynamic;;static"}};
        for (String[] c : cases) {
            String err = mistake(c).err();
            assertTrue(err.contains("empty item") || err.contains("given twice"), String.join(" ", c) + ": " + err);
        }
    }

    @Test
    void xWayWidthsMustDivideTheThreadCountEverywhere(@TempDir Path tmp) {
        String[][] cases = {
                sweep(tmp, "--share", "qp", "--ways", "3", "--threads", "4"),
                sweep(tmp, "--categories", "mpi-threads,qp=5way", "--threads", "4"),
                sweep(tmp, "--categories", "mpi-threads,qp=3way", "--threads", "4"),
                sweep(tmp, "--policy", "catalog:recommended-mlx5", "--threads", "2"),
                {"resources", "--threads", "4", "--category", "mpi-threads,qp=3way"},
                {"kernel", "stencil", "--threads", "4", "--categories", "mpi-threads,qp=3way"}};
        for (String[] c : cases) {
            String err = mistake(c).err();
            assertTrue(err.contains("multiple of x"), String.join(" ", c) + ": " + err);
        }
    }

    @Test
    void sizesTheMachineCannotHoldAreRefused() {
        assertTrue(mistake("check", "ordering", "--ops", "2000000000").err().contains("out of range"));
        assertTrue(mistake("kernel", "stencil", "--size", "100000").err().contains("out of range"));
        String err = mistake("kernel", "dgemm", "--size", "4096", "--tile", "4096").err();
        assertTrue(err.contains("out of range") || err.contains("memory") || err.contains("heap"), err);
        err = mistake("kernel", "dgemm", "--size", "0").err();
        assertTrue(err.contains("--size: 0") && !err.contains("--tile 0"), err);
    }

    @Test
    void aTypeErrorIsOneLineWithTheHelpHint() {
        for (String[] c : new String[][]{{"sweep", "--threads", "abc"}, {"kernel", "dgemm", "--size", "x"},
                {"resources", "--threads", "2", "--bogus"}, {"check", "ordering", "--ops", "1e9"}}) {
            String err = mistake(c).err();
            assertTrue(err.contains("--help"), err);
        }
    }

    @Test
    void anInconsistentLevelSaysWhereTheValueCameFrom() {
        String err = mistake("resources", "--threads", "2", "--category", "ctx=per-thread").err();
        assertTrue(err.contains("pd not given, so taken from category static"), err);
        assertTrue(err.contains("mpi-everywhere"), err);
    }

    @Test
    void everyCommandPrintsTheVersion() {
        for (String[] c : new String[][]{{"-V"}, {"sweep", "-V"}, {"kernel", "-V"}, {"check", "ordering", "-V"}}) {
            SweepCommandTest.Run r = SweepCommandTest.run(c);
            assertEquals(0, r.rc(), r.err());
            assertEquals("scalep " + Main.VERSION, r.out().strip(), String.join(" ", c));
        }
    }
}
