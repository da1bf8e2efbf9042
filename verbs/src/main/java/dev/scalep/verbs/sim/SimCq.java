package dev.scalep.verbs.sim;

import dev.scalep.verbs.AsyncEvent;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.VerbsException;
import dev.scalep.verbs.WorkCompletions;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A simulated CQ: a ring of {@link #depth()} CQEs written by the simulated NIC from any thread and
 * read by pollers. The ring is an allocation-free MPSC design: a producer claims a sequence with
 * {@code getAndIncrement} on the tail, writes the entry's fields, then publishes the slot's sequence
 * with a release store; the consumer reads the slot sequence with an acquire load and, after
 * copying the entry out, advances {@code head} with a volatile (release) store, which the producers'
 * overrun check reads. A claim {@code depth} or more ahead of {@code head} is an overrun: the CQE is
 * dropped, the CQ is dead ({@link #poll} returns -EIO) and every attached QP moves to ERR.
 *
 * <p>Pollers are serialised by a real lock ({@link SimLock}, the mlx5 CQ lock) unless the CQ was
 * created single-threaded. On a device that reorders (EFA), a poll that finds the ring empty drives
 * the device's progress (releases operations held in reordering windows) and looks once more; so
 * does a thread waiting in {@link #awaitEvent}, every millisecond.
 */
final class SimCq extends SimResource implements CompletionQueue {
    private static final VarHandle SEQ = MethodHandles.arrayElementVarHandle(long[].class);

    private final int depth;
    private final CqOptions options;
    private final long[] wrId;
    private final int[] status;
    private final int[] opcode;
    private final int[] byteLen;
    private final int[] imm;
    private final boolean[] withImm;
    private final int[] qpNum;
    private final int[] srcQp;
    private final long[] seq;
    private final AtomicLong tail = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private volatile long head;
    private volatile boolean overrun;
    private final SimLock pollLock;
    private final boolean reorders;

    private volatile SimQp[] attached = new SimQp[0];
    private int committed;

    private final AtomicBoolean armed = new AtomicBoolean();
    private volatile long armedAt;
    private volatile long armedNanos;
    private final Semaphore events = new Semaphore(0);
    private final AtomicInteger unacked = new AtomicInteger();
    private volatile int modCount;
    private volatile int modPeriodMicros;

    SimCq(SimContext ctx, int depth, CqOptions options) {
        super(ctx);
        this.depth = depth;
        this.options = options;
        wrId = new long[depth];
        status = new int[depth];
        opcode = new int[depth];
        byteLen = new int[depth];
        imm = new int[depth];
        withImm = new boolean[depth];
        qpNum = new int[depth];
        srcQp = new int[depth];
        seq = new long[depth];
        pollLock = options.singleThreaded() && ctx.caps.singleThreadedCq() ? null : new SimLock();
        reorders = !ctx.caps.inOrder();
    }

    @Override
    public Context context() {
        return ctx;
    }

    @Override
    public int depth() {
        return depth;
    }

    @Override
    public boolean singleThreaded() {
        return pollLock == null;
    }

    /**
     * Write one CQE (simulated NIC, any thread). Returns false when it was dropped (overrun or
     * destroyed CQ).
     */
    boolean push(long id, int st, int op, int len, int immData, boolean hasImm, int qp, int src) {
        if (overrun || isClosed()) {
            return false;
        }
        long c = tail.getAndIncrement();
        if (c - head >= depth) {
            dropped.incrementAndGet();
            overrun();
            return false;
        }
        int s = (int) (c % depth);
        wrId[s] = id;
        status[s] = st;
        opcode[s] = op;
        byteLen[s] = len;
        imm[s] = immData;
        withImm[s] = hasImm;
        qpNum[s] = qp;
        srcQp[s] = src;
        SEQ.setRelease(seq, s, c + 1); // pairs with getAcquire in drain()
        if (armed.get()) {
            int mc = modCount;
            if (mc <= 1 || c + 1 - armedAt >= mc) {
                fire();
            }
        }
        return true;
    }

    private void fire() {
        if (armed.compareAndSet(true, false)) {
            events.release();
        }
    }

    private void overrun() {
        if (overrun) {
            return;
        }
        overrun = true;
        ctx.raise(AsyncEvent.ofCq(AsyncEvent.CQ_ERR, this));
        for (SimQp q : attached) {
            if (!q.isClosed() && q.state != QpState.ERR) {
                ctx.raise(AsyncEvent.ofQp(AsyncEvent.QP_FATAL, q));
            }
            q.fatal();
        }
    }

    @Override
    public int poll(WorkCompletions out, int max) {
        checkOpen();
        if (overrun) {
            return -Errno.EIO;
        }
        int m = Math.min(max, out.capacity());
        int n = drainLocked(out, m);
        if (n == 0 && (reorders || ctx.device.fabric() != null)) {
            ctx.device.progressAll();
            n = drainLocked(out, m);
        }
        return n == 0 && overrun ? -Errno.EIO : n;
    }

    private int drainLocked(WorkCompletions out, int max) {
        SimLock l = pollLock;
        if (l == null) {
            return drain(out, max);
        }
        l.lock();
        try {
            return drain(out, max);
        } finally {
            l.unlock();
        }
    }

    private int drain(WorkCompletions out, int max) {
        long h = head;
        int n = 0;
        while (n < max) {
            int s = (int) (h % depth);
            if ((long) SEQ.getAcquire(seq, s) != h + 1) {
                break;
            }
            out.put(n, wrId[s], status[s], opcode[s], byteLen[s], imm[s], withImm[s], qpNum[s], srcQp[s]);
            h++;
            n++;
        }
        if (n > 0) {
            head = h; // release: the slots may now be reused by producers
        }
        return n;
    }

    @Override
    public void moderate(int count, int periodMicros) {
        checkOpen();
        if (count < 0 || periodMicros < 0) {
            throw new VerbsException("ibv_modify_cq", Errno.EINVAL, ctx.device.name(),
                    "cq_count=" + count + ", cq_period=" + periodMicros + " must be >= 0");
        }
        modCount = count;
        modPeriodMicros = periodMicros;
    }

    private void needChannel(String verb) {
        checkOpen();
        if (!options.completionChannel()) {
            throw new VerbsException(verb, Errno.EINVAL, ctx.device.name(),
                    "the CQ was created without a completion channel (CqOptions.withCompletionChannel(true))");
        }
    }

    @Override
    public void requestNotify() {
        needChannel("ibv_req_notify_cq");
        armedAt = tail.get() - dropped.get();
        armedNanos = System.nanoTime();
        armed.set(true); // CQEs already in the ring do not raise an event (ibv_req_notify_cq(3))
    }

    @Override
    public boolean awaitEvent(long timeoutNanos) {
        needChannel("ibv_get_cq_event");
        long deadline = System.nanoTime() + Math.max(0, timeoutNanos);
        try {
            while (true) {
                long now = System.nanoTime();
                long left = deadline - now;
                int period = modPeriodMicros;
                long slice = period > 0 ? Math.min(left, TimeUnit.MICROSECONDS.toNanos(period)) : left;
                if (reorders) {
                    // a thread blocked on the channel is a progress point too: release held operations
                    ctx.device.progressAll();
                    slice = Math.min(slice, TimeUnit.MILLISECONDS.toNanos(1));
                }
                if (events.tryAcquire(Math.max(0, slice), TimeUnit.NANOSECONDS)) {
                    unacked.incrementAndGet();
                    return true;
                }
                if (period > 0 && armed.get() && tail.get() - dropped.get() > armedAt
                        && System.nanoTime() - armedNanos >= TimeUnit.MICROSECONDS.toNanos(period)) {
                    fire();
                    continue;
                }
                if (System.nanoTime() >= deadline) {
                    return false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public void ackEvents(int n) {
        checkOpen();
        while (true) {
            int u = unacked.get();
            if (n < 0 || n > u) {
                throw new IllegalArgumentException("cannot acknowledge " + n + " events: " + u + " unacknowledged");
            }
            if (unacked.compareAndSet(u, u - n)) {
                return;
            }
        }
    }

    @Override
    public int unackedEvents() {
        return unacked.get();
    }

    @Override
    public boolean isOverrun() {
        return overrun;
    }

    @Override
    public long cqesWritten() {
        return tail.get() - dropped.get();
    }

    /** CQEs written and not yet polled. */
    long pending() {
        return tail.get() - dropped.get() - head;
    }

    void attach(SimQp qp, int demand) {
        SimQp[] a = attached;
        for (SimQp q : a) {
            if (q == qp) {
                committed += demand;
                return;
            }
        }
        SimQp[] b = Arrays.copyOf(a, a.length + 1);
        b[a.length] = qp;
        attached = b;
        committed += demand;
    }

    void detach(SimQp qp, int demand) {
        committed -= demand;
        SimQp[] a = attached;
        List<SimQp> l = new ArrayList<>(a.length);
        for (SimQp q : a) {
            if (q != qp) {
                l.add(q);
            }
        }
        attached = l.toArray(new SimQp[0]);
    }

    int committed() {
        return committed;
    }

    @Override
    void checkNoChildren() {
        if (attached.length > 0) {
            throw new VerbsException(options.extended() ? "ibv_destroy_cq (extended)" : "ibv_destroy_cq",
                    Errno.EBUSY, ctx.device.name(), "still used by " + Arrays.toString(attached));
        }
    }

    @Override
    void release() {
        unacked.set(0); // the runtime acknowledges outstanding events before ibv_destroy_cq
        ctx.cqs.remove(this);
        ctx.accounting.add(Accounting.CQS, -1);
        ctx.accounting.add(Accounting.MEMORY, -Accounting.CQ_BYTES_PER_CQE * depth);
    }

    @Override
    public String toString() {
        return "CQ (" + depth + " entries)";
    }
}
