package dev.scalep.bench.jmh;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WorkCompletions;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The raw verbs data path, no endpoint layer: one thread, one QP of depth d = 256 writing 2 bytes
 * (inline where the device allows) to a second QP on the same device. One operation is one work
 * request: requests are staged into a {@link SendWorkRequests} list and posted with one doorbell
 * every {@code postlist} requests; every {@code unsignaled}-th request is signaled and the CQ is
 * polled when the queue cannot take the next list. On a device without unsignaled or in-order
 * completions (sim:efa) q is forced to 1 (reported on stderr at setup).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class VerbsPostPollBenchmark {
    static final int DEPTH = 256;

    @Param({"sim:mlx5", "sim:efa"})
    public String device;

    @Param({"1", "32"})
    public int postlist;

    @Param({"1", "64"})
    public int unsignaled;

    Context ctx;
    Context peerCtx;
    Arena arena;
    MemoryRegion mr;
    MemoryRegion peerMr;
    CompletionQueue cq;
    CompletionQueue peerCq;
    QueuePair qp;
    QueuePair peerQp;
    AddressHandle ah;
    SendWorkRequests wrs;
    WorkCompletions wcs;
    boolean srd;
    int q;
    int flagsBase;
    long local;
    long remote;
    int lkey;
    int rkey;
    int peerQpn;
    long posted;
    long retired;
    long seq;

    @Setup(Level.Trial)
    public void open() {
        Device dev = Devices.byName(device);
        DeviceCapabilities caps = dev.capabilities();
        q = caps.unsignaled() && caps.inOrder() ? unsignaled : 1;
        if (q != unsignaled) {
            System.err.println("note: " + device + " completes out of order or cannot post unsignaled requests; q = 1");
        }
        QpType type = caps.qpTypes().contains(QpType.RC) ? QpType.RC : QpType.SRD;
        srd = type == QpType.SRD;
        arena = Arena.ofShared();
        ctx = dev.open();
        peerCtx = dev.open();
        ProtectionDomain pd = ctx.allocPd();
        ProtectionDomain peerPd = peerCtx.allocPd();
        MemorySegment mem = pd.allocate(4096, 4096);
        MemorySegment peerMem = peerPd.allocate(4096, 4096);
        mr = pd.register(mem, Access.ALL_RDMA);
        peerMr = peerPd.register(peerMem, Access.ALL_RDMA);
        cq = ctx.createCq(CqOptions.of(DEPTH + 1).withExtended(caps.extendedCqOnly()));
        peerCq = peerCtx.createCq(CqOptions.of(DEPTH + 1).withExtended(caps.extendedCqOnly()));
        int inline = Math.min(2, caps.maxInline());
        qp = pd.createQp(new QpInitAttr(type, cq, cq, null, DEPTH, 1, 1, 1, inline, false));
        peerQp = peerPd.createQp(new QpInitAttr(type, peerCq, peerCq, null, DEPTH, 1, 1, 1, inline, false));
        if (srd) {
            qp.connect(null, Access.ALL_RDMA, 7);
            peerQp.connect(null, Access.ALL_RDMA, 7);
            ah = pd.createAh(peerQp.address());
        } else {
            qp.connect(peerQp.address(), Access.ALL_RDMA, 7);
            peerQp.connect(qp.address(), Access.ALL_RDMA, 7);
        }
        flagsBase = inline >= 2 ? SendFlags.INLINE : 0;
        wrs = new SendWorkRequests(postlist, 1);
        wcs = new WorkCompletions(Math.max(1, DEPTH / q));
        local = mem.address();
        remote = peerMem.address();
        lkey = mr.lkey();
        rkey = peerMr.rkey();
        peerQpn = peerQp.qpNum();
    }

    @TearDown(Level.Trial)
    public void close() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        if (wrs.count() > 0) {
            wrs.flags(wrs.count() - 1, wrs.flags(wrs.count() - 1) | SendFlags.SIGNALED);
            post();
        }
        while (qp.outstandingSends() > 0 && System.nanoTime() < deadline) {
            reap();
        }
        wrs.close();
        wcs.close();
        qp.close();
        peerQp.close();
        ctx.close();
        peerCtx.close();
        arena.close();
    }

    @Benchmark
    public int write() {
        long n = seq++;
        int flags = flagsBase;
        if ((n + 1) % q == 0) {
            flags |= SendFlags.SIGNALED;
        }
        int i = wrs.add(n, Opcode.RDMA_WRITE, flags);
        wrs.sge(i, local, 2, lkey);
        if (srd) {
            wrs.srdRdma(i, ah, peerQpn, QueuePair.QKEY, remote, rkey);
        } else {
            wrs.rdma(i, remote, rkey);
        }
        if (i + 1 == postlist) {
            while (posted - retired + postlist > DEPTH) {
                reap();
            }
            return post();
        }
        return 0;
    }

    private int post() {
        int n = wrs.count();
        int rc = qp.postSend(wrs);
        if (rc != 0) {
            throw new IllegalStateException("ibv_post_send on " + device + " failed: errno " + rc + " (" + Errno.name(rc) + ")");
        }
        posted += n;
        wrs.clear();
        return rc;
    }

    private void reap() {
        int got = cq.poll(wcs);
        if (got < 0) {
            throw new IllegalStateException("ibv_poll_cq on " + device + " failed: " + got);
        }
        for (int k = 0; k < got; k++) {
            if (wcs.status(k) != 0) {
                throw new IllegalStateException("completion error status " + wcs.status(k));
            }
        }
        retired += (long) got * q;
    }
}
