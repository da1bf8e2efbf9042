package dev.scalep.verbs.sim;

import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.suite.Responder;
import dev.scalep.verbs.suite.VerbsBehaviourSuite.Wc;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM ({@link ResponderPeer}) joined to the same fabric job, holding the responders of the
 * two-JVM behavioural suite. {@link #create} gives a {@link Responder} whose every step (QPs, MRs,
 * CQ, receive posts, polls, memory reads and writes, events) runs in the child. Each call waits a
 * bounded time for its answer; an exception in the child comes back as an {@link AssertionError}
 * on the calling (test) thread; {@link #close} always ends the child.
 */
public final class ResponderProcess implements AutoCloseable {
    /** Longer than any step the suite asks for (its polls give up after 10 s). */
    private static final long ANSWER_SECONDS = 90;
    private static final String EOF = "\u0000EOF";
    private static final HexFormat HEX = HexFormat.of();

    private final Process process;
    private final Writer in;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();

    /** Starts the child on this JVM's class path; {@code personality} is {@code mlx5} or {@code efa}. */
    public ResponderProcess(String personality, String job) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        process = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), ResponderPeer.class.getName(), personality, job)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    answers.add(line);
                }
            } catch (IOException ignored) {
                // the child is gone: EOF below
            }
            answers.add(EOF);
        }, "responder-process-reader");
        reader.setDaemon(true);
        reader.start();
        String ready = answer("start");
        if (!ready.startsWith("READY ")) {
            close();
            throw new AssertionError("responder process did not start: " + ready);
        }
    }

    public long pid() {
        return process.pid();
    }

    /** Sends one command and returns the words of its {@code OK} answer (without {@code OK}). */
    synchronized String[] call(String command) {
        try {
            in.write(command + "\n");
            in.flush();
        } catch (IOException e) {
            throw new AssertionError("responder process " + process.pid() + " took no command " + command + ": " + e);
        }
        String a = answer(command);
        if (a.equals("OK")) {
            return new String[0];
        }
        if (a.startsWith("OK ")) {
            return a.substring(3).split(" ");
        }
        throw new AssertionError("responder process " + process.pid() + " failed " + command.split(" ")[0] + ": " + a);
    }

    private String answer(String what) {
        String a;
        try {
            a = answers.poll(ANSWER_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new AssertionError("interrupted waiting for the responder process (" + what + ")");
        }
        if (a == null || a.equals(EOF)) {
            process.destroyForcibly();
            throw new AssertionError("responder process " + process.pid() + (a == null
                    ? " did not answer " + what + " within " + ANSWER_SECONDS + " s" : " exited before answering " + what));
        }
        return a;
    }

    /** A responder in the child, made as {@code spec} says. */
    public Responder create(Responder.Spec s) {
        String[] a = call("NEW " + s.type().name() + " " + s.depth() + " " + s.inline() + " " + s.mrAccess() + " "
                + s.qps() + " " + s.srqDepth() + " " + s.pathMtu());
        return new Remote(Integer.parseInt(a[0]), Long.parseLong(a[1]), Integer.parseInt(a[2]),
                Arrays.stream(a, 3, a.length).map(ResponderProcess::address).toArray(QpAddress[]::new));
    }

    private static QpAddress address(String hex) {
        return QpAddress.fromBytes(HEX.parseHex(hex));
    }

    private static List<Wc> wcs(String[] a) {
        List<Wc> out = new ArrayList<>();
        for (String w : a) {
            String[] f = w.split(",");
            out.add(new Wc(Long.parseLong(f[0]), Integer.parseInt(f[1]), Integer.parseInt(f[2]),
                    Integer.parseInt(f[3]), Integer.parseInt(f[4]), Boolean.parseBoolean(f[5]),
                    Integer.parseInt(f[6]), Integer.parseInt(f[7])));
        }
        return out;
    }

    /** Asks the child to close its responders and leave, then ends it whatever it did. */
    @Override
    public void close() {
        try {
            if (process.isAlive()) {
                in.write("EXIT\n");
                in.flush();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (IOException | InterruptedException ignored) {
            // ended below
        } finally {
            process.destroyForcibly();
        }
    }

    /** The proxy: what the suite calls, executed in the child. */
    private final class Remote implements Responder {
        private final int id;
        private final long mrAddress;
        private final int rkey;
        private final QpAddress[] addresses;

        Remote(int id, long mrAddress, int rkey, QpAddress[] addresses) {
            this.id = id;
            this.mrAddress = mrAddress;
            this.rkey = rkey;
            this.addresses = addresses;
        }

        private String[] call(String command, Object... args) {
            StringBuilder b = new StringBuilder(command).append(' ').append(id);
            for (Object o : args) {
                b.append(' ').append(o instanceof QpAddress q ? HEX.formatHex(q.toBytes()) : o);
            }
            return ResponderProcess.this.call(b.toString());
        }

        @Override
        public QpAddress address(int qp) {
            return addresses[qp];
        }

        @Override
        public long mrAddress() {
            return mrAddress;
        }

        @Override
        public int rkey() {
            return rkey;
        }

        @Override
        public void connect(int qp, QpAddress peer, int retryCount, int rnrRetry) {
            addresses[qp] = ResponderProcess.address(call("CONNECT", qp, peer, retryCount, rnrRetry)[0]);
        }

        @Override
        public void reconnect(QpAddress peer) {
            addresses[0] = ResponderProcess.address(call("RECONNECT", peer)[0]);
        }

        @Override
        public RecvResult postRecv(long firstId, int n, long off, long stride, int len) {
            String[] a = call("RECV", firstId, n, off, stride, len);
            return new RecvResult(Integer.parseInt(a[0]), Integer.parseInt(a[1]));
        }

        @Override
        public List<Wc> poll(int n, long timeoutNanos) {
            return wcs(call("POLL", n, timeoutNanos));
        }

        @Override
        public List<Wc> drain() {
            return wcs(call("DRAIN"));
        }

        @Override
        public byte[] bytes(long off, int len) {
            return HEX.parseHex(call("BYTES", off, len)[0]);
        }

        @Override
        public void fill(long off, int len, int seed) {
            call("FILL", off, len, seed);
        }

        @Override
        public void closeQp() {
            call("CLOSEQP");
        }

        @Override
        public QpState state() {
            return QpState.valueOf(call("STATE")[0]);
        }

        @Override
        public int maxRecvWr() {
            return Integer.parseInt(call("MAXRECV")[0]);
        }

        @Override
        public int pathMtu(int qp) {
            return Integer.parseInt(call("PATHMTU", qp)[0]);
        }

        @Override
        public int srqPosted() {
            return Integer.parseInt(call("SRQPOSTED")[0]);
        }

        @Override
        public int closeSrq() {
            return Integer.parseInt(call("SRQCLOSE")[0]);
        }

        @Override
        public List<Event> events(long nanos, boolean untilQpEvent) {
            List<Event> out = new ArrayList<>();
            for (String e : call("EVENTS", nanos, untilQpEvent ? 1 : 0)) {
                String[] f = e.split(",");
                out.add(new Event(Integer.parseInt(f[0]), f[1], Integer.parseInt(f[2]), Integer.parseInt(f[3])));
            }
            return out;
        }

        @Override
        public void startFetchAdds(int qp, int n, long off) {
            call("ADDS", qp, n, off);
        }

        @Override
        public long[] joinFetchAdds() {
            return Arrays.stream(call("JOINADDS")).mapToLong(Long::parseLong).toArray();
        }

        @Override
        public void close() {
            call("CLOSE");
        }
    }
}
