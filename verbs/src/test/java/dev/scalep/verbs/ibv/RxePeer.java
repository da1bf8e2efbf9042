package dev.scalep.verbs.ibv;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.WorkCompletions;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * The other process of {@link RxeConnectionTest}: an RC responder on the device and with the path
 * MTU given as arguments. Line protocol on stdin/stdout: it prints {@code ADDR <hex>} (its
 * {@link QpAddress#toBytes()}), reads {@code PEER <hex>}, connects, posts a 16 KiB receive, prints
 * {@code READY <path MTU>}, waits for one receive and prints {@code RECV <status> <bytes> <sum>}.
 */
public final class RxePeer {
    private RxePeer() {
    }

    public static void main(String[] args) throws Exception {
        String device = args[0];
        int mtu = Integer.parseInt(args[1]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        Device d = new IbvProvider().devices().stream().filter(x -> x.name().equals(device)).findFirst()
                .orElseThrow(() -> new IllegalStateException(device + " not present"));
        try (Context c = d.open(); Arena arena = Arena.ofConfined(); WorkCompletions wc = new WorkCompletions(4);
             RecvWorkRequests r = new RecvWorkRequests(1, 1)) {
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(CqOptions.of(8));
            QueuePair qp = pd.createQp(QpInitAttr.of(QpType.RC, cq, 4)
                    .withConnection(ConnectionOptions.DEFAULTS.withPathMtu(mtu).withTimers(1, 20, 7, 7)));
            MemorySegment buf = arena.allocate(16384, 4096);
            MemoryRegion mr = pd.register(buf, Access.ALL_RDMA);
            System.out.println("ADDR " + HexFormat.of().formatHex(qp.address().toBytes()));
            System.out.flush();
            String peer = in.readLine();
            if (peer == null || !peer.startsWith("PEER ")) {
                throw new IllegalStateException("expected PEER <hex>, got " + peer);
            }
            qp.connect(QpAddress.fromBytes(HexFormat.of().parseHex(peer.substring(5))), Access.ALL_RDMA, 7);
            r.sge(r.add(7), mr, 0, 16384);
            if (qp.postRecv(r) != 0) {
                throw new IllegalStateException("postRecv failed");
            }
            System.out.println("READY " + qp.pathMtu());
            System.out.flush();
            long deadline = System.nanoTime() + 60_000_000_000L;
            int got = 0;
            while (got == 0 && System.nanoTime() < deadline) {
                got = cq.poll(wc, 1);
                if (got == 0) {
                    Thread.onSpinWait();
                }
            }
            if (got != 1) {
                System.out.println("RECV none");
                return;
            }
            long sum = 0;
            for (int i = 0; i < wc.byteLen(0); i++) {
                sum += buf.get(JAVA_BYTE, i) & 0xff;
            }
            System.out.println("RECV " + wc.status(0) + " " + wc.byteLen(0) + " " + sum);
            System.out.flush();
            qp.close();
            mr.close();
            cq.close();
            pd.close();
        }
    }
}
