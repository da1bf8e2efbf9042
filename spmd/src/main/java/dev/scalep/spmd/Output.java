package dev.scalep.spmd;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.Charset;
import java.util.Arrays;

/**
 * Output of several ranks shares the launcher's stdout and stderr, and two writes of one line can
 * interleave with another rank's. {@link #line} writes a line with one call; {@link #install}
 * makes {@code System.out} and {@code System.err} hand the OS whole lines, one write each.
 */
public final class Output {
    private Output() {
    }

    /** Write {@code text} and a newline to {@code out} as one write, then flush. */
    public static void line(PrintStream out, String text) {
        synchronized (out) {
            out.print(text + System.lineSeparator());
            out.flush();
        }
    }

    /** Replace {@code System.out} and {@code System.err} with line-buffered streams on the same descriptors. */
    public static void install() {
        Charset cs = System.out.charset();
        System.setOut(new PrintStream(new Lines(new FileOutputStream(FileDescriptor.out)), true, cs));
        System.setErr(new PrintStream(new Lines(new FileOutputStream(FileDescriptor.err)), true, cs));
    }

    /** Collects bytes up to and including a newline and passes each complete line on in one write. */
    static final class Lines extends OutputStream {
        private final OutputStream out;
        /** A line longer than this is passed on in pieces. */
        private static final int LIMIT = 1 << 16;
        private byte[] buf = new byte[512];
        private int n;

        Lines(OutputStream out) {
            this.out = out;
        }

        @Override
        public synchronized void write(int b) throws IOException {
            append((byte) b);
            if (b == '\n' || n >= LIMIT) {
                emit();
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) throws IOException {
            for (int i = off; i < off + len; i++) {
                append(b[i]);
                if (b[i] == '\n' || n >= LIMIT) {
                    emit();
                }
            }
        }

        private void append(byte b) {
            if (n == buf.length) {
                buf = Arrays.copyOf(buf, buf.length * 2);
            }
            buf[n++] = b;
        }

        private void emit() throws IOException {
            out.write(buf, 0, n);
            n = 0;
        }

        /** A flush hands on only whole lines; a partial line waits for its newline (or close). */
        @Override
        public synchronized void flush() throws IOException {
            out.flush();
        }

        @Override
        public synchronized void close() throws IOException {
            if (n > 0) {
                emit();
            }
            out.close();
        }
    }
}
