package dev.scalep.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The {@code ./scalep} launcher in a checkout its user cannot write (another user's, a read-only
 * mount): a built jar runs without the build lock, and a stale one is a one-line refusal, not a
 * shell error. The checkout here is a copy of the launcher, its JDK finder, the pom and a jar, owned by root
 * and run as {@code nobody}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LauncherScriptTest {
    private static final Path ROOT = Path.of("..");

    private static boolean root() throws IOException {
        return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") == 0;
    }

    /** A checkout of the launcher with a jar whose main is {@link ScriptProbe}; world-readable, writable by root only. */
    private static Path checkout(Path tmp) throws Exception {
        Path co = Files.createDirectory(tmp.resolve("checkout"));
        Files.createDirectories(co.resolve("tools"));
        Files.createDirectories(co.resolve("bench/target"));
        Files.createDirectories(co.resolve("bench/src/main/java"));
        Files.copy(ROOT.resolve("scalep"), co.resolve("scalep"));
        Files.copy(ROOT.resolve("tools/jdk.sh"), co.resolve("tools/jdk.sh"));
        Path pom = Files.copy(ROOT.resolve("pom.xml"), co.resolve("pom.xml")); // the JDK finder reads the release
        Files.setLastModifiedTime(pom, FileTime.from(Instant.now().minusSeconds(3600)));
        Path src = Files.writeString(co.resolve("bench/src/main/java/A.java"), "class A {}\n");
        Files.setLastModifiedTime(src, FileTime.from(Instant.now().minusSeconds(3600)));
        Path classes = Path.of(ScriptProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        String jar = Path.of(System.getProperty("java.home"), "bin", "jar").toString();
        Process p = new ProcessBuilder(jar, "--create", "--file", co.resolve("bench/target/scalep.jar").toString(),
                "--main-class", ScriptProbe.class.getName(), "-C", classes.toString(),
                ScriptProbe.class.getName().replace('.', '/') + ".class").inheritIO().start();
        assertEquals(0, p.waitFor());
        new ProcessBuilder("chmod", "-R", "a+rX,go-w", tmp.toString()).start().waitFor();
        return co;
    }

    private static String[] asNobody(Path co, String... args) {
        String[] cmd = new String[5 + args.length];
        cmd[0] = "runuser";
        cmd[1] = "-u";
        cmd[2] = "nobody";
        cmd[3] = "--";
        cmd[4] = co.resolve("scalep").toString();
        System.arraycopy(args, 0, cmd, 5, args.length);
        return cmd;
    }

    private static String run(int expect, String... cmd) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(expect, p.exitValue(), out);
        return out;
    }

    @Test
    void aBuiltJarRunsFromACheckoutTheUserCannotWrite(@TempDir Path tmp) throws Exception {
        assumeTrue(root(), "needs root to run the launcher as another user");
        Path co = checkout(tmp);
        String out = run(0, asNobody(co, "hello"));
        assertTrue(out.contains("probe ran hello"), out);
        assertFalse(Files.exists(co.resolve(".scalep-build.lock")), "no lock file is needed to run");
    }

    @Test
    void aStaleJarInACheckoutTheUserCannotWriteIsOneLineExit3(@TempDir Path tmp) throws Exception {
        assumeTrue(root(), "needs root to run the launcher as another user");
        Path co = checkout(tmp);
        Files.setLastModifiedTime(co.resolve("bench/target/scalep.jar"), FileTime.from(Instant.now().minusSeconds(7200)));
        String out = run(3, asNobody(co, "hello"));
        List<String> lines = out.lines().filter(l -> !l.isBlank()).toList();
        assertEquals(1, lines.size(), out);
        assertTrue(out.contains("is not writable by nobody"), out);
        assertFalse(out.contains("probe ran"), out);
    }
}
