package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
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
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * The other process of the cross-process tests: one QP, CQ and 64 KiB of PD memory on a simulated
 * device joined to the job given on the command line, driven by one-line commands on stdin and
 * answering on stdout (see {@link CrossProcessTest}). Only what real peers exchange crosses the
 * pipe: the QP address as bytes, the MR's address and rkey.
 */
public final class FabricPeer {
    static final int MEM = 64 * 1024;

    private FabricPeer() {
    }

    static SimDevice device(String personality, String job) {
        return personality.equals("efa") ? SimDevice.efa(1, SimDevice.DEFAULT_EFA_WINDOW, true, false, job)
                : SimDevice.mlx5(job);
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        SimDevice dev = device(args[0], args[1]);
        HexFormat hex = HexFormat.of();
        try (Context ctx = dev.open()) {
            boolean efa = dev.isEfa();
            ProtectionDomain pd = ctx.allocPd();
            CompletionQueue cq = ctx.createCq(CqOptions.of(256).withExtended(efa));
            QueuePair qp = pd.createQp(QpInitAttr.of(efa ? QpType.SRD : QpType.RC, cq, 64).withSges(1, 1));
            MemorySegment mem = pd.allocate(MEM, 4096);
            MemoryRegion mr = pd.register(mem, Access.ALL_RDMA);
            qp.init(Access.ALL_RDMA);
            out.println("ADDR " + hex.formatHex(qp.address().toBytes()) + " " + mr.address() + " " + mr.rkey() + " "
                    + dev.sharedFilePrefix());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            AddressHandle ah = null;
            for (String line; (line = in.readLine()) != null; ) {
                String[] c = line.trim().split(" ");
                switch (c[0]) {
                    case "CONNECT" -> {
                        QpAddress peer = QpAddress.fromBytes(hex.parseHex(c[1]));
                        qp.readyToReceive(efa ? null : peer);
                        qp.readyToSend(7, 7);
                        if (efa) {
                            ah = pd.createAh(peer);
                        }
                        out.println("OK");
                    }
                    case "RECV" -> {
                        int n = Integer.parseInt(c[1]);
                        int len = Integer.parseInt(c[2]);
                        try (RecvWorkRequests r = new RecvWorkRequests(n, 1)) {
                            for (int k = 0; k < n; k++) {
                                r.sge(r.add(k), mr, MEM / 2 + (long) k * len, len);
                            }
                            out.println(qp.postRecv(r) == 0 ? "OK" : "ERR");
                        }
                    }
                    case "POLL" -> {
                        int n = Integer.parseInt(c[1]);
                        long deadline = System.nanoTime() + 20_000_000_000L;
                        try (WorkCompletions wc = new WorkCompletions(16)) {
                            int got = 0;
                            while (got < n && System.nanoTime() < deadline) {
                                int r = cq.poll(wc, Math.min(16, n - got));
                                for (int i = 0; i < r; i++) {
                                    out.println("WC " + wc.wrId(i) + " " + wc.status(i) + " " + wc.opcode(i) + " "
                                            + wc.byteLen(i) + " " + wc.imm(i));
                                }
                                got += Math.max(r, 0);
                                if (r <= 0) {
                                    Thread.onSpinWait();
                                }
                            }
                        }
                        out.println("OK");
                    }
                    case "FILL" -> {
                        long off = Long.parseLong(c[1]);
                        int len = Integer.parseInt(c[2]);
                        int seed = Integer.parseInt(c[3]);
                        for (int i = 0; i < len; i++) {
                            mem.set(JAVA_BYTE, off + i, (byte) (seed + i * 7));
                        }
                        out.println("OK");
                    }
                    case "DUMP" -> out.println("DATA " + hex.formatHex(
                            mem.asSlice(Long.parseLong(c[1]), Integer.parseInt(c[2])).toArray(JAVA_BYTE)));
                    case "EXIT" -> {
                        out.println("BYE");
                        return;
                    }
                    default -> out.println("ERR unknown command " + c[0]);
                }
            }
            if (ah != null) {
                ah.close();
            }
        }
    }
}
