package dev.scalep.threading;

import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.DeviceKind;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;
import dev.scalep.verbs.QpCounters;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WorkCompletions;

import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A tiny in-test RC queue pair for the ring and combiner unit tests: records every posted wr_id,
 * enforces the send-queue depth exactly as a NIC would (a slot frees only when a completion that
 * retires it is polled), and writes a CQE for every signaled request into a {@link FakeCq}. The
 * behavioural tests against the simulated devices live in the endpoints module.
 */
final class FakeQp implements QueuePair {
    final int qpNum;
    final int depth;
    final FakeCq cq;
    final ProtectionDomain pd;
    final QpInitAttr attr;
    final AtomicLong doorbells = new AtomicLong();
    /** Posted wr_ids in post order (the provider's view). */
    final long[] posted;
    /** The first SGE's address and the remote address of each posted request, in post order. */
    final long[] postedLocal;
    final long[] postedRemote;
    final AtomicLong postedCount = new AtomicLong();
    private long sqPos;
    volatile long retiredUpTo;
    volatile int concurrentPosters;
    volatile boolean overlapSeen;
    /** When not 0, every post is refused with this errno from its first request on (bad index 0). */
    volatile int refuseWith;
    /** When set, run at the start of every post (a test holds the poster inside postSend). */
    volatile Runnable beforePost;

    FakeQp(int qpNum, int depth, FakeCq cq, int maxRecords) {
        this.qpNum = qpNum;
        this.depth = depth;
        this.cq = cq;
        this.posted = new long[maxRecords];
        this.postedLocal = new long[maxRecords];
        this.postedRemote = new long[maxRecords];
        DeviceCapabilities caps = new DeviceCapabilities(DeviceKind.values()[0], Set.of(QpType.RC), 1024, 32768, 16, 16,
                1024, 1 << 22, 1024, 1L << 40, 1024, 0, 0, 64, false, false, true, true, true, true, true, false,
                false, 0);
        Context ctx = (Context) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{Context.class},
                (p, m, a) -> m.getName().equals("capabilities") ? caps : null);
        this.pd = (ProtectionDomain) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[]{ProtectionDomain.class}, (p, m, a) -> m.getName().equals("context") ? ctx : null);
        this.attr = QpInitAttr.of(QpType.RC, cq, depth);
    }

    @Override
    public int postSend(SendWorkRequests wrs) {
        // Not a lock: detects two threads inside postSend at once (a combiner bug).
        synchronized (this) {
            if (concurrentPosters++ > 0) {
                overlapSeen = true;
            }
        }
        try {
            Runnable hook = beforePost;
            if (hook != null) {
                hook.run();
            }
            int n = wrs.count();
            if (refuseWith != 0) {
                wrs.badIndex(0);
                return refuseWith;
            }
            long outstanding = sqPos - retiredUpTo;
            if (outstanding + n > depth) {
                wrs.badIndex((int) Math.max(0, depth - outstanding));
                int ok = (int) Math.max(0, depth - outstanding);
                for (int i = 0; i < ok; i++) {
                    accept(wrs, i);
                }
                return Errno.ENOMEM;
            }
            for (int i = 0; i < n; i++) {
                accept(wrs, i);
            }
            doorbells.incrementAndGet();
            wrs.badIndex(-1);
            return 0;
        } finally {
            synchronized (this) {
                concurrentPosters--;
            }
        }
    }

    private void accept(SendWorkRequests wrs, int i) {
        long pos = sqPos++;
        int at = (int) postedCount.getAndIncrement();
        posted[at] = wrs.wrId(i);
        postedLocal[at] = wrs.numSge(i) > 0 ? wrs.sgeAddr(i, 0) : 0;
        postedRemote[at] = wrs.remoteAddr(i);
        if ((wrs.flags(i) & SendFlags.SIGNALED) != 0) {
            cq.queue.add(new long[]{wrs.wrId(i), qpNum, pos, wrs.opcode(i)});
        }
    }

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public QpType type() {
        return QpType.RC;
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    @Override
    public QpState state() {
        return QpState.values()[QpState.values().length - 1];
    }

    @Override
    public QpInitAttr attributes() {
        return attr;
    }

    @Override
    public boolean lockFree() {
        return false;
    }

    @Override
    public int uuar() {
        return -1;
    }

    @Override
    public QpAddress address() {
        return new QpAddress("fake", new byte[16], 0, qpNum, 0);
    }

    @Override
    public void init(int accessFlags) {
    }

    @Override
    public void readyToReceive(QpAddress remote) {
    }

    @Override
    public void readyToSend(int retryCount, int rnrRetry) {
    }

    @Override
    public void toError() {
    }

    @Override
    public void reset() {
    }

    @Override
    public int postRecv(RecvWorkRequests wrs) {
        return Errno.EOPNOTSUPP;
    }

    @Override
    public int outstandingSends() {
        return (int) (sqPos - retiredUpTo);
    }

    @Override
    public QpCounters counters() {
        return new QpCounters() {
            @Override
            public long doorbells() {
                return doorbells.get();
            }

            @Override
            public long wqes() {
                return postedCount.get();
            }

            @Override
            public long inlineWqes() {
                return 0;
            }

            @Override
            public long blueFlameWrites() {
                return 0; // a fake device without BlueFlame
            }

            @Override
            public long receivesPosted() {
                return 0;
            }
        };
    }

    @Override
    public void close() {
    }

    /** A CQ fed by {@link FakeQp}s; polling a CQE frees its QP's slots up to it (like a NIC's SQ tail). */
    static final class FakeCq implements CompletionQueue {
        final ConcurrentLinkedQueue<long[]> queue = new ConcurrentLinkedQueue<>();
        final Map<Integer, FakeQp> qps = new ConcurrentHashMap<>();
        final AtomicLong polled = new AtomicLong();

        @Override
        public int poll(WorkCompletions out, int max) {
            int n = 0;
            long[] e;
            while (n < Math.min(max, out.capacity()) && (e = queue.poll()) != null) {
                FakeQp qp = qps.get((int) e[1]);
                qp.retiredUpTo = Math.max(qp.retiredUpTo, e[2] + 1);
                out.put(n++, e[0], 0, WcOpcode.RDMA_WRITE, 8, 0, false, (int) e[1], 0);
            }
            polled.addAndGet(n);
            return n;
        }

        @Override
        public Context context() {
            return null;
        }

        @Override
        public int depth() {
            return 1 << 20;
        }

        @Override
        public boolean singleThreaded() {
            return false;
        }

        @Override
        public void moderate(int count, int periodMicros) {
        }

        @Override
        public void requestNotify() {
        }

        @Override
        public boolean awaitEvent(long timeoutNanos) {
            return false;
        }

        @Override
        public void ackEvents(int n) {
        }

        @Override
        public int unackedEvents() {
            return 0;
        }

        @Override
        public boolean isOverrun() {
            return false;
        }

        @Override
        public long cqesWritten() {
            return polled.get();
        }

        @Override
        public void close() {
        }
    }
}
