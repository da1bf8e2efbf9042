package dev.scalep.endpoints;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The README's library example, taken from the README itself, compiles against the modules and runs. */
class ReadmeExampleTest {
    static String example() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        int section = readme.indexOf("## Using it as a library");
        assertTrue(section >= 0, "README has a library section");
        int start = readme.indexOf("```java\n", section);
        int end = readme.indexOf("```", start + 7);
        assertTrue(start > 0 && end > start, "the section has a java block");
        return readme.substring(start + "```java\n".length(), end);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theReadmeExampleCompilesAndRuns(@TempDir Path tmp) throws Exception {
        String code = example();
        assertTrue(code.contains("public class Example"), code);
        Path src = Files.writeString(tmp.resolve("Example.java"), code);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "tests run on a JDK");
        ByteArrayOutputStream diag = new ByteArrayOutputStream();
        int rc = javac.run(null, diag, diag, "-d", tmp.toString(), "-cp", System.getProperty("java.class.path"), src.toString());
        assertEquals(0, rc, diag.toString(StandardCharsets.UTF_8));

        PrintStream out = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (URLClassLoader cl = new URLClassLoader(new URL[]{tmp.toUri().toURL()}, getClass().getClassLoader())) {
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            cl.loadClass("Example").getMethod("main", String[].class).invoke(null, (Object) new String[0]);
        } finally {
            System.setOut(out);
        }
        // The last write of endpoint 0 (message 999) landed in its peer's target buffer.
        assertEquals("wrote 4 x 1000 messages; the last one carried 999", printed.toString(StandardCharsets.UTF_8).strip());
    }
}
