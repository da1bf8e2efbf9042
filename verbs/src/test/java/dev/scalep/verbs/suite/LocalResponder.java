package dev.scalep.verbs.suite;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.AsyncEvent;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.SharedReceiveQueue;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import dev.scalep.verbs.suite.VerbsBehaviourSuite.Wc;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A {@link Responder} whose objects live in this JVM: the suite's in-process responder, and what a
 * responder process runs for each responder its parent asks for.
 */
public final class LocalResponder implements Responder {
    /** Bytes of PD memory each responder registers. */
    public static final int MEM = 64 * 1024;

    private final QpType type;
    private final Context ctx;
    private final ProtectionDomain pd;
    private final SharedReceiveQueue srq;
    private final QueuePair[] qps;
    private final CompletionQueue cq;
    private final MemorySegment mem;
    private final MemoryRegion mr;
    private AddressHandle ah;
    /** The thread of {@link #startFetchAdds} and what it left. */
    private Thread adder;
    private volatile long[] addResult;
    private volatile Throwable addFailure;
    private static final int ADD_WINDOW = 16;

    public LocalResponder(Device device, ContextOptions options, Spec s) {
        type = s.type();
        ctx = device.open(options);
        try {
            pd = ctx.allocPd();
            cq = ctx.createCq(CqOptions.of(4 * s.depth() * Math.max(1, (s.qps() + 1) / 2)).withExtended(ctx.capabilities().extendedCqOnly()));
            srq = s.srqDepth() > 0 ? pd.createSrq(s.srqDepth(), 1) : null;
            QpInitAttr a = QpInitAttr.of(type, cq, s.depth()).withSges(Math.min(2, ctx.capabilities().maxSge()), 1)
                    .withInline(s.inline());
            if (srq != null) {
                a = a.withSrq(srq);
            }
            if (s.pathMtu() > 0) {
                a = a.withConnection(ConnectionOptions.DEFAULTS.withPathMtu(s.pathMtu()));
            }
            qps = new QueuePair[s.qps()];
            for (int k = 0; k < qps.length; k++) {
                qps[k] = pd.createQp(a);
            }
            mem = pd.allocate(MEM, 64);
            mr = pd.register(mem, s.mrAccess());
            for (QueuePair qp : qps) {
                qp.init(qpAccess());
            }
        } catch (RuntimeException | Error e) {
            ctx.close();
            throw e;
        }
    }

    /** What the responder's QPs grant: RDMA read and write, and atomics where the device has them. */
    private int qpAccess() {
        return Access.ALL_RDMA | (ctx.capabilities().atomicCap().supported() ? Access.REMOTE_ATOMIC : 0);
    }

    /** Copies {@code k} completions of a batch into {@code out}. */
    static void collect(WorkCompletions wc, int k, List<Wc> out) {
        for (int i = 0; i < k; i++) {
            out.add(new Wc(wc.wrId(i), wc.status(i), wc.opcode(i), wc.byteLen(i), wc.imm(i), wc.hasImm(i),
                    wc.qpNum(i), wc.srcQp(i)));
        }
    }

    @Override
    public QpAddress address(int qp) {
        return qps[qp].address();
    }

    @Override
    public long mrAddress() {
        return mr.address();
    }

    @Override
    public int rkey() {
        return mr.rkey();
    }

    @Override
    public void connect(int qp, QpAddress peer, int retryCount, int rnrRetry) {
        if (type == QpType.RC) {
            qps[qp].readyToReceive(peer);
        } else {
            qps[qp].readyToReceive(null);
            if (ah == null) {
                ah = pd.createAh(peer);
            }
        }
        qps[qp].readyToSend(retryCount, rnrRetry);
    }

    @Override
    public void reconnect(QpAddress peer) {
        qps[0].reset();
        qps[0].init(qpAccess());
        qps[0].readyToReceive(type == QpType.RC ? peer : null);
        qps[0].readyToSend(7, 7);
    }

    @Override
    public RecvResult postRecv(long firstId, int n, long off, long stride, int len) {
        try (RecvWorkRequests r = new RecvWorkRequests(n, 1)) {
            for (int k = 0; k < n; k++) {
                r.sge(r.add(firstId + k), mr, off + k * stride, len);
            }
            int rc = srq != null ? srq.postRecv(r) : qps[0].postRecv(r);
            return new RecvResult(rc, r.badIndex());
        }
    }

    @Override
    public List<Wc> poll(int n, long timeoutNanos) {
        List<Wc> out = new ArrayList<>();
        try (WorkCompletions wc = new WorkCompletions(16)) {
            long deadline = System.nanoTime() + timeoutNanos;
            while (out.size() < n) {
                int k = cq.poll(wc, Math.min(16, n - out.size()));
                if (k < 0) {
                    throw new IllegalStateException("ibv_poll_cq returned " + k);
                }
                collect(wc, k, out);
                if (k == 0) {
                    if (System.nanoTime() - deadline > 0) {
                        break;
                    }
                    Thread.onSpinWait();
                }
            }
        }
        return out;
    }

    @Override
    public List<Wc> drain() {
        List<Wc> out = new ArrayList<>();
        try (WorkCompletions wc = new WorkCompletions(16)) {
            for (int round = 0; round < 50; round++) {
                collect(wc, cq.poll(wc), out);
            }
        }
        return out;
    }

    @Override
    public byte[] bytes(long off, int len) {
        return mem.asSlice(off, len).toArray(JAVA_BYTE);
    }

    @Override
    public void fill(long off, int len, int seed) {
        VerbsBehaviourSuite.fill(mem, off, len, seed);
    }

    @Override
    public void closeQp() {
        qps[0].close();
    }

    @Override
    public QpState state() {
        return qps[0].state();
    }

    @Override
    public int maxRecvWr() {
        return qps[0].attributes().maxRecvWr();
    }

    @Override
    public int pathMtu(int qp) {
        return qps[qp].pathMtu();
    }

    @Override
    public int srqPosted() {
        return srq.posted();
    }

    @Override
    public int closeSrq() {
        try {
            srq.close();
            return 0;
        } catch (VerbsException e) {
            return e.errno();
        }
    }

    @Override
    public List<Event> events(long nanos, boolean untilQpEvent) {
        List<Event> out = new ArrayList<>();
        long deadline = System.nanoTime() + nanos;
        while (!(untilQpEvent && out.stream().anyMatch(e -> e.qpIndex() == 0))) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            AsyncEvent e = ctx.pollAsyncEvent(left);
            if (e != null) {
                int idx = -1;
                for (int k = 0; k < qps.length; k++) {
                    if (e.qp() == qps[k]) {
                        idx = k;
                    }
                }
                out.add(new Event(e.type(), e.typeName(), e.qpNum(), idx));
            }
        }
        return out;
    }

    @Override
    public void startFetchAdds(int qp, int n, long off) {
        if (adder != null) {
            throw new IllegalStateException("fetch-and-adds already started");
        }
        CompletionQueue lcq = ctx.createCq(CqOptions.of(2 * ADD_WINDOW).withExtended(ctx.capabilities().extendedCqOnly()));
        QueuePair loop = pd.createQp(QpInitAttr.of(QpType.RC, lcq, ADD_WINDOW).withSges(1, 1));
        MemorySegment res = pd.allocate(8 * ADD_WINDOW, 64);
        MemoryRegion rmr = pd.register(res, Access.LOCAL_WRITE);
        loop.init(Access.ALL_RDMA);
        loop.readyToReceive(qps[qp].address());
        connect(qp, loop.address(), 7, 7);
        loop.readyToSend(7, 7);
        long[] fetched = new long[n];
        adder = new Thread(() -> {
            try (SendWorkRequests w = new SendWorkRequests(ADD_WINDOW, 1); WorkCompletions wc = new WorkCompletions(16)) {
                for (int done = 0; done < n; ) {
                    int k = Math.min(ADD_WINDOW, n - done);
                    w.clear();
                    for (int j = 0; j < k; j++) {
                        int i = w.add(done + j, Opcode.ATOMIC_FETCH_AND_ADD, SendFlags.SIGNALED);
                        w.sge(i, rmr, 8L * j, 8).atomic(i, mr.address() + off, mr.rkey(), 1, 0);
                    }
                    int rc = loop.postSend(w);
                    if (rc != 0) {
                        throw new IllegalStateException("loopback fetch-and-add post: errno " + rc);
                    }
                    for (int got = 0; got < k; ) {
                        int r = lcq.poll(wc, k - got);
                        for (int i = 0; i < r; i++) {
                            if (wc.status(i) != WcStatus.SUCCESS || wc.opcode(i) != WcOpcode.FETCH_ADD) {
                                throw new IllegalStateException("loopback fetch-and-add " + wc.wrId(i) + ": status "
                                        + WcStatus.name(wc.status(i)) + ", opcode " + wc.opcode(i));
                            }
                        }
                        got += Math.max(0, r);
                    }
                    for (int j = 0; j < k; j++) {
                        fetched[done + j] = res.get(ValueLayout.JAVA_LONG, 8L * j);
                    }
                    done += k;
                }
                addResult = fetched;
            } catch (Throwable t) {
                addFailure = t;
            }
        }, "responder-fetch-adds");
        adder.start();
    }

    @Override
    public long[] joinFetchAdds() {
        try {
            adder.join(TimeUnit.SECONDS.toMillis(60));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for the fetch-and-adds");
        }
        if (adder.isAlive()) {
            throw new IllegalStateException("the responder's fetch-and-adds did not end within 60 s");
        }
        adder = null;
        if (addFailure != null) {
            throw new IllegalStateException("the responder's fetch-and-adds failed", addFailure);
        }
        return addResult;
    }

    @Override
    public void close() {
        ctx.close();
    }
}
