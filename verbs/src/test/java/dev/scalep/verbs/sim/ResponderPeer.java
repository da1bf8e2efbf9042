package dev.scalep.verbs.sim;

import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.suite.LocalResponder;
import dev.scalep.verbs.suite.Responder;
import dev.scalep.verbs.suite.VerbsBehaviourSuite.Wc;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The responder process of the two-JVM behavioural suite: joins the parent's fabric job with its
 * own simulated device and runs {@link LocalResponder}s on the parent's behalf, one command per
 * line on stdin, one answer per line on stdout ({@code OK ...} or {@code ERR <exception>}); see
 * {@link ResponderProcess} for the commands. Anything else the process prints goes to stderr.
 */
public final class ResponderPeer {
    private static final HexFormat HEX = HexFormat.of();

    private final SimDevice device;
    private final Map<Integer, LocalResponder> responders = new HashMap<>();
    private int next;

    private ResponderPeer(SimDevice device) {
        this.device = device;
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        ResponderPeer peer = new ResponderPeer(FabricPeer.device(args[0], args[1]));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        out.println("READY " + ProcessHandle.current().pid());
        try {
            for (String line; (line = in.readLine()) != null && !line.equals("EXIT"); ) {
                String answer;
                try {
                    answer = peer.execute(line.split(" "));
                } catch (Throwable t) {
                    answer = "ERR " + (t + "").replace('\n', ' ');
                }
                out.println(answer);
            }
        } finally {
            peer.responders.values().forEach(LocalResponder::close);
        }
    }

    private String execute(String[] c) {
        if (c[0].equals("NEW")) {
            Responder.Spec s = new Responder.Spec(QpType.valueOf(c[1]), i(c[2]), i(c[3]), i(c[4]), i(c[5]), i(c[6]),
                    i(c[7]));
            LocalResponder r = new LocalResponder(device, ContextOptions.DEFAULTS, s);
            responders.put(next, r);
            StringBuilder b = new StringBuilder("OK " + next++ + " " + r.mrAddress() + " " + r.rkey());
            for (int k = 0; k < s.qps(); k++) {
                b.append(' ').append(HEX.formatHex(r.address(k).toBytes()));
            }
            return b.toString();
        }
        LocalResponder r = responders.get(i(c[1]));
        if (r == null) {
            throw new IllegalArgumentException("no responder " + c[1]);
        }
        return switch (c[0]) {
            case "CONNECT" -> {
                r.connect(i(c[2]), address(c[3]), i(c[4]), i(c[5]));
                yield "OK " + HEX.formatHex(r.address(i(c[2])).toBytes());
            }
            case "RECONNECT" -> {
                r.reconnect(address(c[2]));
                yield "OK " + HEX.formatHex(r.address(0).toBytes());
            }
            case "RECV" -> {
                Responder.RecvResult x = r.postRecv(l(c[2]), i(c[3]), l(c[4]), l(c[5]), i(c[6]));
                yield "OK " + x.rc() + " " + x.badIndex();
            }
            case "POLL" -> "OK" + wcs(r.poll(i(c[2]), l(c[3])));
            case "DRAIN" -> "OK" + wcs(r.drain());
            case "BYTES" -> "OK " + HEX.formatHex(r.bytes(l(c[2]), i(c[3])));
            case "FILL" -> {
                r.fill(l(c[2]), i(c[3]), i(c[4]));
                yield "OK";
            }
            case "CLOSEQP" -> {
                r.closeQp();
                yield "OK";
            }
            case "STATE" -> "OK " + r.state().name();
            case "MAXRECV" -> "OK " + r.maxRecvWr();
            case "PATHMTU" -> "OK " + r.pathMtu(i(c[2]));
            case "SRQPOSTED" -> "OK " + r.srqPosted();
            case "SRQCLOSE" -> "OK " + r.closeSrq();
            case "EVENTS" -> "OK" + r.events(l(c[2]), c[3].equals("1")).stream()
                    .map(e -> " " + e.type() + "," + e.typeName() + "," + e.qpNum() + "," + e.qpIndex())
                    .collect(Collectors.joining());
            case "ADDS" -> {
                r.startFetchAdds(i(c[2]), i(c[3]), l(c[4]));
                yield "OK";
            }
            case "JOINADDS" -> "OK" + Arrays.stream(r.joinFetchAdds()).mapToObj(v -> " " + v)
                    .collect(Collectors.joining());
            case "CLOSE" -> {
                responders.remove(i(c[1])).close();
                yield "OK";
            }
            default -> throw new IllegalArgumentException("unknown command " + c[0]);
        };
    }

    private static String wcs(List<Wc> l) {
        return l.stream().map(w -> " " + w.wrId() + "," + w.status() + "," + w.opcode() + "," + w.byteLen() + ","
                + w.imm() + "," + w.hasImm() + "," + w.qpNum() + "," + w.srcQp()).collect(Collectors.joining());
    }

    private static QpAddress address(String hex) {
        return QpAddress.fromBytes(HEX.parseHex(hex));
    }

    private static int i(String s) {
        return Integer.parseInt(s);
    }

    private static long l(String s) {
        return Long.parseLong(s);
    }
}
