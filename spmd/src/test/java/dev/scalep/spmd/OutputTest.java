package dev.scalep.spmd;

import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Several ranks share one stdout: each line must reach the OS in one write. */
class OutputTest {
    /** Records every write call it receives as one string. */
    static final class Writes extends OutputStream {
        final List<String> calls = new ArrayList<>();

        @Override
        public void write(int b) {
            calls.add(String.valueOf((char) b));
        }

        @Override
        public void write(byte[] b, int off, int len) {
            calls.add(new String(b, off, len, StandardCharsets.UTF_8));
        }
    }

    @Test
    void printfAndPrintlnReachTheStreamAsWholeLines() {
        Writes w = new Writes();
        PrintStream ps = new PrintStream(new Output.Lines(w), true, StandardCharsets.UTF_8);
        ps.printf("%-6s %5d%n", "rank", 3); // PrintStream writes the text and the newline separately
        ps.println("second line");
        ps.print("partial ");
        ps.flush();
        assertEquals(List.of("rank       3" + System.lineSeparator(), "second line" + System.lineSeparator()), w.calls);
        ps.print("line\n");
        assertEquals("partial line\n", w.calls.get(2));
        ps.close();
        assertEquals(3, w.calls.size());
    }

    @Test
    void lineIsOneCall() {
        Writes w = new Writes();
        Output.line(new PrintStream(new Output.Lines(w), true, StandardCharsets.UTF_8), "spmd: one");
        assertEquals(List.of("spmd: one" + System.lineSeparator()), w.calls);
    }
}
