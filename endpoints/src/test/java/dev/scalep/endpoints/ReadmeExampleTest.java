package dev.scalep.endpoints;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's library example, taken from the README itself, compiles against the modules and
 * runs: on the class path (the {@code ALL-UNNAMED} fallback) and as a named module on the module
 * path, where it can reach exported packages only and native access is granted to the library's
 * modules by name.
 */
class ReadmeExampleTest {
    /** What the example prints when endpoint 0's last write (message 999) landed in its peer's buffer. */
    private static final String EXPECTED = "wrote 4 x 1000 messages; the last one carried 999";
    /** The modules that call restricted FFM methods. */
    private static final String NATIVE_ACCESS = "dev.scalep.verbs,dev.scalep.spmd";

    static String example() throws Exception {
        return example("## Using it as a library");
    }

    /** The first java block after the README heading {@code heading}. */
    static String example(String heading) throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        int section = readme.indexOf(heading);
        assertTrue(section >= 0, "README has a section " + heading);
        int start = readme.indexOf("```java\n", section);
        int end = readme.indexOf("```", start + 7);
        assertTrue(start > 0 && end > start, "the section has a java block");
        return readme.substring(start + "```java\n".length(), end);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theReadmeExampleCompilesAndRunsOnTheClassPath(@TempDir Path tmp) throws Exception {
        String code = example();
        assertTrue(code.contains("public class Example"), code);
        Path src = Files.writeString(tmp.resolve("Example.java"), code);
        String diag = javac("-d", tmp.toString(), "-cp", System.getProperty("java.class.path"), src.toString());
        assertEquals("", diag);

        PrintStream out = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (URLClassLoader cl = new URLClassLoader(new URL[]{tmp.toUri().toURL()}, getClass().getClassLoader())) {
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            cl.loadClass("Example").getMethod("main", String[].class).invoke(null, (Object) new String[0]);
        } finally {
            System.setOut(out);
        }
        assertEquals(EXPECTED, printed.toString(StandardCharsets.UTF_8).strip());
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theReadmeExampleIsAModuleThatNeedsOnlyExportedPackages(@TempDir Path tmp) throws Exception {
        String modulePath = libraryModulePath();
        // A named module cannot use the unnamed package: the example goes into package 'example'
        // unchanged otherwise, next to its module declaration (a test resource).
        Path srcDir = Files.createDirectories(tmp.resolve("src/example"));
        Path src = Files.writeString(srcDir.resolve("Example.java"), "package example;\n\n" + example());
        Path info = tmp.resolve("src/module-info.java");
        try (InputStream in = getClass().getResourceAsStream("/readme-example/module-info.java")) {
            assertNotNull(in, "the example's module-info.java is a test resource");
            Files.write(info, in.readAllBytes());
        }
        Path classes = tmp.resolve("classes");
        String diag = javac("-d", classes.toString(), "--module-path", modulePath, "-cp", emptyDir(tmp), info.toString(), src.toString());
        assertEquals("", diag);

        // A fresh JVM, nothing on the class path; native access is granted to the library's modules
        // by name and denied to everything else, so a restricted call from any other module fails.
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(),
                "--module-path", modulePath + File.pathSeparator + classes,
                "--enable-native-access=" + NATIVE_ACCESS, "--illegal-native-access=deny",
                "--sun-misc-unsafe-memory-access=allow",
                "-m", "example/example.Example")
                .redirectErrorStream(true).start();
        p.getOutputStream().close();
        String printed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), printed);
        assertEquals(0, p.exitValue(), printed);
        assertEquals(EXPECTED, printed.strip());
    }

    /**
     * The README's windows-and-atomics example, as an application module that reads only the
     * exported API, in a fresh JVM: two ranks (threads, LocalWorld) add, put and fetch-and-add into
     * each other's window, and each finds the other's operations in its words.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theWindowsExampleRunsAsAModuleOnTheExportedApi(@TempDir Path tmp) throws Exception {
        String code = example("## Windows and atomics");
        assertTrue(code.contains("public class WindowsExample"), code);
        String modulePath = libraryModulePath();
        Path srcDir = Files.createDirectories(tmp.resolve("src/example"));
        Path src = Files.writeString(srcDir.resolve("WindowsExample.java"), "package example;\n\n" + code);
        Path info = tmp.resolve("src/module-info.java");
        try (InputStream in = getClass().getResourceAsStream("/readme-example/module-info.java")) {
            assertNotNull(in, "the example's module-info.java is a test resource");
            Files.write(info, in.readAllBytes());
        }
        Path classes = tmp.resolve("classes");
        assertEquals("", javac("-d", classes.toString(), "--module-path", modulePath, "-cp", emptyDir(tmp), info.toString(),
                src.toString()));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(),
                "--module-path", modulePath + File.pathSeparator + classes,
                "--enable-native-access=" + NATIVE_ACCESS, "--illegal-native-access=deny",
                "--sun-misc-unsafe-memory-access=allow",
                "-m", "example/example.WindowsExample")
                .redirectErrorStream(true).start();
        p.getOutputStream().close();
        String printed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), printed);
        assertEquals(0, p.exitValue(), printed);
        assertEquals("rank 0: word 0 = 1000, word 1 = 43, word 2 = 5, fetched 0\n"
                + "rank 1: word 0 = 1000, word 1 = 42, word 2 = 5, fetched 0", printed.strip());
    }

    /**
     * The README's tagged-message and allreduce example, as an application module on the exported
     * API, in a fresh JVM: three ranks (threads, LocalWorld) exchange halos by tagged send and
     * receive and allreduce the residual until it is small; every rank stops at the same iteration
     * with the same residual.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theMessagesExampleRunsAsAModuleOnTheExportedApi(@TempDir Path tmp) throws Exception {
        String code = example("## Tagged messages and collectives");
        assertTrue(code.contains("public class HaloExample"), code);
        assertEquals(HALO_EXPECTED, runAsModule(tmp, "HaloExample", code));
    }

    /** What the halo example prints: one line per rank, the same iteration count and residual on each. */
    private static final String HALO_EXPECTED = "rank 0: 231 iterations, residual 9.567e-07, first cell 0.002201\n"
            + "rank 1: 231 iterations, residual 9.567e-07, first cell 0.008600\n"
            + "rank 2: 231 iterations, residual 9.567e-07, first cell 0.007570";

    /** Compile {@code code} as class {@code name} of an application module and run it in a fresh JVM; its output, stripped. */
    private static String runAsModule(Path tmp, String name, String code) throws Exception {
        String modulePath = libraryModulePath();
        Path srcDir = Files.createDirectories(tmp.resolve("src/example"));
        Path src = Files.writeString(srcDir.resolve(name + ".java"), "package example;\n\n" + code);
        Path info = tmp.resolve("src/module-info.java");
        try (InputStream in = ReadmeExampleTest.class.getResourceAsStream("/readme-example/module-info.java")) {
            assertNotNull(in, "the example's module-info.java is a test resource");
            Files.write(info, in.readAllBytes());
        }
        Path classes = tmp.resolve("classes");
        assertEquals("", javac("-d", classes.toString(), "--module-path", modulePath, "-cp", emptyDir(tmp), info.toString(),
                src.toString()));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(),
                "--module-path", modulePath + File.pathSeparator + classes,
                "--enable-native-access=" + NATIVE_ACCESS, "--illegal-native-access=deny",
                "--sun-misc-unsafe-memory-access=allow",
                "-m", "example/example." + name)
                .redirectErrorStream(true).start();
        p.getOutputStream().close();
        String printed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), printed);
        assertEquals(0, p.exitValue(), printed);
        return printed.strip();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aModuleCannotReachTheSendPaths(@TempDir Path tmp) throws Exception {
        String modulePath = libraryModulePath();
        // The module reads dev.scalep.threading explicitly, so only the missing export can refuse it.
        Path src = Files.createDirectories(tmp.resolve("src/intruder"));
        Path info = Files.writeString(tmp.resolve("src/module-info.java"),
                "module intruder {\n    requires dev.scalep.endpoints;\n    requires dev.scalep.threading;\n}\n");
        String probe = "package intruder;\n\nimport dev.scalep.%s;\n\npublic class Probe {\n    static Class<?> c = %s.class;\n}\n";

        // The control: the same module compiles when it imports an exported type.
        Path ok = Files.writeString(src.resolve("Probe.java"), probe.formatted("endpoints.Endpoint", "Endpoint"));
        assertEquals("", javac("-d", tmp.resolve("ok").toString(), "--module-path", modulePath, "-cp", emptyDir(tmp),
                info.toString(), ok.toString()));

        Path bad = Files.writeString(src.resolve("Probe.java"), probe.formatted("threading.SendPath", "SendPath"));
        String diag = javac("-d", tmp.resolve("bad").toString(), "--module-path", modulePath, "-cp", emptyDir(tmp),
                info.toString(), bad.toString());
        assertTrue(diag.contains("package dev.scalep.threading is not visible")
                && diag.contains("does not export it to module intruder"), diag);
    }

    /**
     * An empty class path for a module compile: javac in-process would otherwise take this JVM's
     * class path, where the library's packages also sit in the unnamed module.
     */
    private static String emptyDir(Path tmp) throws Exception {
        return Files.createDirectories(tmp.resolve("empty-class-path")).toString();
    }

    /** Runs javac in-process; its diagnostics, or "" when it compiled cleanly. */
    private static String javac(String... args) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "tests run on a JDK");
        ByteArrayOutputStream diag = new ByteArrayOutputStream();
        int rc = javac.run(null, diag, diag, args);
        String text = diag.toString(StandardCharsets.UTF_8);
        if (rc == 0) {
            assertEquals("", text.strip(), "compiled, with diagnostics");
        } else {
            assertNotEquals("", text, "javac failed silently");
        }
        return text;
    }

    /**
     * The module path of an application of the endpoint API: dev.scalep.endpoints and everything it
     * requires, transitively, picked from this test's class path by module name (the library's own
     * class directories or jars, JCTools, Agrona, SnakeYAML Engine). Nothing else goes on it, so the
     * test's own classes and JUnit stay out.
     */
    private static String libraryModulePath() {
        Map<String, Path> byName = new LinkedHashMap<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path path = Path.of(entry);
            boolean module = Files.isRegularFile(path) ? entry.endsWith(".jar") : Files.isRegularFile(path.resolve("module-info.class"));
            if (module) {
                for (ModuleReference ref : ModuleFinder.of(path).findAll()) {
                    byName.putIfAbsent(ref.descriptor().name(), path);
                }
            }
        }
        ModuleFinder system = ModuleFinder.ofSystem();
        List<String> picked = new ArrayList<>();
        Map<String, Boolean> seen = new LinkedHashMap<>();
        Deque<String> todo = new ArrayDeque<>(List.of("dev.scalep.endpoints"));
        while (!todo.isEmpty()) {
            String name = todo.pop();
            if (seen.put(name, true) != null || system.find(name).isPresent()) {
                continue;
            }
            Path path = byName.get(name);
            assertNotNull(path, "module " + name + " is on the test class path; found " + byName.keySet());
            picked.add(path.toString());
            Optional<ModuleReference> ref = ModuleFinder.of(path).find(name);
            for (ModuleDescriptor.Requires r : ref.orElseThrow().descriptor().requires()) {
                todo.push(r.name());
            }
        }
        assertTrue(picked.size() >= 8, "the library's five modules and their three dependencies: " + picked);
        return String.join(File.pathSeparator, picked);
    }
}
