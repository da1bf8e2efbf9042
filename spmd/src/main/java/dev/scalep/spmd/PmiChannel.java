package dev.scalep.spmd;

import dev.scalep.spmd.ffm.Fd;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.ffm.Native;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * The byte stream to a PMI server: the socket a launcher passed as an inherited descriptor
 * ({@code PMI_FD}, read and written through libc) or a TCP connection to {@code PMI_PORT}. On top
 * of it the two framings of the wire protocols: PMI-1 lines ({@code key=value ...\n}) and PMI-2
 * frames (a 6-character decimal length, then {@code cmd=...;key=value;...}). Every message goes
 * out in one write (Slurm's PMI-1 server reads a request with one {@code read()}). Failures are
 * {@link PmiException}s naming the verb, the errno and the channel.
 */
abstract class PmiChannel implements AutoCloseable {
    /** The longest message either way; the client's own stay far below (values are split at {@link PmiKvs#SEGMENT}). */
    static final int MAX_MESSAGE = 64 * 1024;

    private byte[] buf = new byte[4096];
    private int start;
    private int end;

    /** Where the channel leads, e.g. {@code PMI_FD=6} or {@code PMI_PORT=host:1234}. */
    abstract String where();

    /** Write all of {@code b} in one call where the transport allows. */
    abstract void write(byte[] b);

    /** Read at least one byte into {@code b} at {@code off}; 0 at end of stream. */
    abstract int read(byte[] b, int off, int len);

    @Override
    public abstract void close();

    /** Send one PMI-1 line; the newline is added. */
    void sendLine(String line) {
        if (line.indexOf('\n') >= 0) {
            throw new IllegalArgumentException("a PMI-1 line holds no newline: " + line);
        }
        write((line + "\n").getBytes(StandardCharsets.US_ASCII));
    }

    /** Receive one PMI-1 line, without its newline. */
    String readLine() {
        while (true) {
            for (int i = start; i < end; i++) {
                if (buf[i] == '\n') {
                    String s = new String(buf, start, i - start, StandardCharsets.US_ASCII);
                    start = i + 1;
                    return s;
                }
            }
            fill("a reply line");
        }
    }

    /** Send one PMI-2 frame: the body's length in 6 characters, then the body. */
    void sendFrame(String body) {
        byte[] b = body.getBytes(StandardCharsets.US_ASCII);
        if (b.length > 999_999) {
            throw new IllegalArgumentException("a PMI-2 message of " + b.length + " bytes does not fit its 6-digit length");
        }
        write((String.format("%-6d", b.length) + body).getBytes(StandardCharsets.US_ASCII));
    }

    /** Receive one PMI-2 frame's body. Lengths padded on either side are accepted (Slurm pads right, MPICH left). */
    String readFrame() {
        byte[] head = take(6, "a PMI-2 length");
        String h = new String(head, StandardCharsets.US_ASCII).strip();
        int n;
        try {
            n = Integer.parseInt(h);
        } catch (NumberFormatException e) {
            throw new PmiException("the PMI server on " + where() + " sent '" + h + "' where a PMI-2 message length belongs");
        }
        if (n < 0 || n > MAX_MESSAGE) {
            throw new PmiException("the PMI server on " + where() + " announced a PMI-2 message of " + n + " bytes (limit "
                    + MAX_MESSAGE + ")");
        }
        return new String(take(n, "a PMI-2 message"), StandardCharsets.US_ASCII);
    }

    private byte[] take(int n, String what) {
        while (end - start < n) {
            fill(what);
        }
        byte[] out = new byte[n];
        System.arraycopy(buf, start, out, 0, n);
        start += n;
        return out;
    }

    private void fill(String what) {
        if (start > 0) {
            System.arraycopy(buf, start, buf, 0, end - start);
            end -= start;
            start = 0;
        }
        if (end == buf.length) {
            if (buf.length >= MAX_MESSAGE) {
                throw new PmiException("the PMI server on " + where() + " sent more than " + MAX_MESSAGE
                        + " bytes without ending " + what);
            }
            buf = Arrays.copyOf(buf, buf.length * 2);
        }
        int n = read(buf, end, buf.length - end);
        if (n == 0) {
            throw new PmiException("the PMI server on " + where() + " closed the connection while this rank waited for " + what
                    + " (the launcher ended the job?)");
        }
        end += n;
    }

    /** The inherited descriptor {@code PMI_FD}; refused unless it is an open socket. */
    static PmiChannel fd(int fd) {
        Path link = Path.of("/proc/self/fd", Integer.toString(fd));
        String target;
        try {
            target = Files.readSymbolicLink(link).toString();
        } catch (IOException | UnsupportedOperationException e) {
            throw new PmiException("PMI_FD=" + fd + " is not an open descriptor of this process (" + e.getMessage()
                    + "): was it started by the launcher itself, not by a child of a rank?");
        }
        if (!target.startsWith("socket:")) {
            throw new PmiException("PMI_FD=" + fd + " is " + target + ", not the socket a PMI launcher passes");
        }
        return new FdChannel(fd);
    }

    /** A TCP connection to {@code PMI_PORT} ({@code host:port}). */
    static PmiChannel port(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        int port;
        try {
            port = colon <= 0 ? -1 : Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535) {
            throw new PmiException("PMI_PORT='" + hostPort + "' is not host:port");
        }
        String host = hostPort.substring(0, colon);
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(host, port), 30_000);
            return new SocketChannel(s, "PMI_PORT=" + hostPort);
        } catch (IOException e) {
            try {
                s.close();
            } catch (IOException ignored) {
                // the connect failure is the error
            }
            throw new PmiException("connect to the PMI server at PMI_PORT=" + hostPort + " failed: " + e.getMessage());
        }
    }

    /** The descriptor, read and written with libc through FFM; its buffers are owned and freed on close. */
    private static final class FdChannel extends PmiChannel {
        private static final int EAGAIN = 11;
        private final int fd;
        private final Arena arena = Arena.ofShared();
        private final MemorySegment inBuf = arena.allocate(4096);
        private final MemorySegment outBuf = arena.allocate(MAX_MESSAGE);
        private final MemorySegment state = Native.callState(arena);
        private boolean closed;

        FdChannel(int fd) {
            this.fd = fd;
        }

        @Override
        String where() {
            return "PMI_FD=" + fd;
        }

        @Override
        synchronized void write(byte[] b) {
            if (b.length > outBuf.byteSize()) {
                throw new IllegalArgumentException("a PMI message of " + b.length + " bytes (limit " + outBuf.byteSize() + ")");
            }
            MemorySegment.copy(b, 0, outBuf, JAVA_BYTE, 0, b.length);
            long n = Fd.writeAll(fd, outBuf.asSlice(0, b.length), state);
            if (n < 0) {
                throw new PmiException("write to the PMI server on " + where() + " failed: " + errnoName((int) -n));
            }
        }

        @Override
        synchronized int read(byte[] b, int off, int len) {
            while (true) {
                MemorySegment into = inBuf.asSlice(0, Math.min(len, inBuf.byteSize()));
                long n = Fd.read(fd, into, state);
                if (n >= 0) {
                    MemorySegment.copy(inBuf, JAVA_BYTE, 0, b, off, (int) n);
                    return (int) n;
                }
                if (-n == EAGAIN) { // a non-blocking descriptor: wait until it is readable
                    int rc = Native.pollIn(fd, -1);
                    if (rc >= 0 || -rc == Fd.EINTR) {
                        continue;
                    }
                    n = rc;
                }
                throw new PmiException("read from the PMI server on " + where() + " failed: " + errnoName((int) -n));
            }
        }

        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                Fd.close(fd, state);
                arena.close();
            }
        }
    }

    /** {@code PMI_PORT}: a plain TCP socket. */
    private static final class SocketChannel extends PmiChannel {
        private final Socket socket;
        private final String where;
        private final InputStream in;
        private final OutputStream out;

        SocketChannel(Socket socket, String where) throws IOException {
            this.socket = socket;
            this.where = where;
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }

        @Override
        String where() {
            return where;
        }

        @Override
        void write(byte[] b) {
            try {
                out.write(b);
                out.flush();
            } catch (IOException e) {
                throw new PmiException("write to the PMI server on " + where + " failed: " + e.getMessage());
            }
        }

        @Override
        int read(byte[] b, int off, int len) {
            try {
                int n = in.read(b, off, len);
                return Math.max(n, 0);
            } catch (IOException e) {
                throw new PmiException("read from the PMI server on " + where + " failed: " + e.getMessage());
            }
        }

        @Override
        public void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // leaving the job: nothing more to say to the server
            }
        }
    }

    static String errnoName(int errno) {
        return switch (errno) {
            case 9 -> "EBADF";
            case 32 -> "EPIPE";
            case 88 -> "ENOTSOCK";
            case 104 -> "ECONNRESET";
            default -> Errno.name(errno);
        };
    }
}
