package dev.scalep.bench;

import dev.scalep.spmd.Launch;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RoundJit} against the JVM's own JIT, in fresh JVMs whose flags settle what the JIT does:
 * with {@code -Xcomp} every method is compiled before its first call, in the calling thread, so
 * the first {@code String.format} compiles its formatter inside the watched span; with {@code
 * -Xint} nothing is ever compiled.
 */
class RoundJitTest {
    static final String SAYS = "scalep-probe: compiled=";

    /** The child JVM: watch a span in which the formatter runs for the first time, and print the verdict. */
    public static void main(String[] args) {
        RoundJit jit = new RoundJit();
        jit.start();
        String s = String.format(Locale.ROOT, "%08.3f|%-12s|%x|%,d", Math.PI, "scalep", 48879, 1L << 40);
        System.out.println(SAYS + jit.compiled() + " " + s);
        System.out.flush();
    }

    private static String verdict(String flag) throws Exception {
        Launch.Result r = Launch.run(Launch.jvm(List.of(flag), RoundJitTest.class), Map.of(), 120);
        assertEquals(0, r.exit(), r.output());
        String line = r.lines().stream().filter(l -> l.startsWith(SAYS)).findFirst().orElse(null);
        assertTrue(line != null && line.endsWith("0003.142|scalep      |beef|1,099,511,627,776"), r.output());
        return line.substring(SAYS.length(), line.indexOf(' ', SAYS.length()));
    }

    @Test
    void aSpanInWhichTheJitCompiledIsSeen() throws Exception {
        assertEquals("true", verdict("-Xcomp"), "-Xcomp compiled the formatter's methods inside the span");
    }

    @Test
    void aSpanWithoutCompilationIsNot() throws Exception {
        assertEquals("false", verdict("-Xint"), "-Xint compiles nothing");
    }
}
