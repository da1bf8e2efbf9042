package dev.scalep.verbs.sim;

import dev.scalep.verbs.AsyncEvent;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.WcStatus;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

import java.util.concurrent.atomic.AtomicBoolean;

import static dev.scalep.verbs.sim.FabricLayout.area;
import static dev.scalep.verbs.sim.FabricLayout.procOfQpn;
import static dev.scalep.verbs.sim.RemotePath.MSG_ACCESS_ERROR;
import static dev.scalep.verbs.sim.RemotePath.MSG_INVALID_REQUEST;
import static dev.scalep.verbs.sim.RemotePath.MSG_REQUEST;
import static dev.scalep.verbs.sim.RemotePath.MSG_RESPONSE;
import static dev.scalep.verbs.sim.RemotePath.REQ_DATA;
import static dev.scalep.verbs.sim.RemotePath.REQ_DST;
import static dev.scalep.verbs.sim.RemotePath.REQ_IMM;
import static dev.scalep.verbs.sim.RemotePath.REQ_INC;
import static dev.scalep.verbs.sim.RemotePath.REQ_LEN;
import static dev.scalep.verbs.sim.RemotePath.REQ_OP;
import static dev.scalep.verbs.sim.RemotePath.REQ_RADDR;
import static dev.scalep.verbs.sim.RemotePath.REQ_RKEY;
import static dev.scalep.verbs.sim.RemotePath.REQ_SEQ;
import static dev.scalep.verbs.sim.RemotePath.REQ_SLOT;
import static dev.scalep.verbs.sim.RemotePath.REQ_SRC;
import static dev.scalep.verbs.sim.RemotePath.REQ_TYPE;
import static dev.scalep.verbs.sim.RemotePath.RSP_BYTES;
import static dev.scalep.verbs.sim.RemotePath.RSP_DST;
import static dev.scalep.verbs.sim.RemotePath.RSP_SEQ;
import static dev.scalep.verbs.sim.RemotePath.RSP_SLOT;
import static dev.scalep.verbs.sim.RemotePath.RSP_STATUS;

/**
 * This process's half of the simulated NIC for traffic from other processes: it drains the inbound
 * ring and executes each request against the local target QP (receive consumption, data placement,
 * the receive completion, the QP's error transitions), answers the initiator, hands answers to the
 * local initiators, and sweeps peer liveness. It runs in a daemon thread (so a process that is not
 * polling still acknowledges, as a NIC does) and in any thread whose poll finds its CQ empty;
 * a CAS lets one drainer at a time read the single-consumer ring. Every field of every message is
 * range-checked before use; a malformed message is answered with an error status or dropped.
 */
final class FabricAgent implements MessageHandler, Runnable {
    private static final Opcode[] OPS = Opcode.values();
    private static final QpType[] TYPES = QpType.values();
    private static final long SWEEP_NANOS = 50_000_000L;

    private final SimDevice dev;
    private final Fabric fabric;
    private final ManyToOneRingBuffer inbound;
    private final AtomicBoolean draining = new AtomicBoolean();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile RuntimeException failure;
    /** The request being executed (one drainer at a time: see {@link #drain}). */
    private final Receives.Message msg = new Receives.Message();

    FabricAgent(SimDevice dev, Fabric fabric) {
        this.dev = dev;
        this.fabric = fabric;
        this.inbound = fabric.ownRing();
        this.thread = Thread.ofPlatform().daemon().name("scalep-nic-" + fabric.slot).unstarted(this);
    }

    void start() {
        thread.start();
    }

    /** Stop the thread and wait for it (before the segment is unmapped). */
    void stop() {
        running = false;
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Why the inbound ring could not be read (a corrupt segment), or null. */
    RuntimeException failure() {
        return failure;
    }

    @Override
    public void run() {
        IdleStrategy idle = new BackoffIdleStrategy(64, 16, 1_000, 1_000_000);
        long nextSweep = 0;
        while (running) {
            int n = 0;
            try {
                n = drain();
                long now = System.nanoTime();
                if (now - nextSweep >= 0) {
                    fabric.sweepLiveness();
                    nextSweep = now + SWEEP_NANOS;
                }
                dev.nudgeRemoteWaiting();
            } catch (RuntimeException e) {
                // a QP's engine failed on this thread: the poster's thread meets the same state; keep the NIC alive
            }
            idle.idle(n);
        }
    }

    /** Execute what is queued for this process; 0 when another thread is draining. */
    int drain() {
        if (failure != null || inbound.producerPosition() == inbound.consumerPosition()
                || !draining.compareAndSet(false, true)) {
            return 0;
        }
        try {
            return inbound.read(this, 256);
        } catch (RuntimeException e) {
            failure = e; // a scribbled ring: stop reading it, report through polls
            return 0;
        } finally {
            draining.set(false);
        }
    }

    @Override
    public void onMessage(int type, MutableDirectBuffer buffer, int index, int length) {
        switch (type) {
            case MSG_REQUEST -> request(buffer, index, length);
            case MSG_RESPONSE -> response(buffer, index, length);
            case MSG_ACCESS_ERROR, MSG_INVALID_REQUEST -> {
                if (length >= 4) { // a notice for an earlier incarnation of the QP (before a reset) is stale
                    QpResponder t = dev.qps.get(buffer.getInt(index));
                    if (t != null) {
                        t.responderFault(length < 8 ? t.incarnation() : buffer.getInt(index + 4),
                                type == MSG_ACCESS_ERROR ? AsyncEvent.QP_ACCESS_ERR : AsyncEvent.QP_REQ_ERR, true);
                    }
                }
            }
            default -> {
                // unknown message: dropped
            }
        }
    }

    private void response(DirectBuffer b, int i, int length) {
        if (length < RSP_BYTES) {
            return;
        }
        QpRequester q = dev.qps.get(b.getInt(i + RSP_DST));
        if (q != null) {
            q.answered(b.getInt(i + RSP_SLOT), b.getLong(i + RSP_SEQ), b.getInt(i + RSP_STATUS));
        }
    }

    private void request(DirectBuffer b, int i, int length) {
        if (length < REQ_DATA) {
            return;
        }
        int src = b.getInt(i + REQ_SRC);
        int dst = b.getInt(i + REQ_DST);
        int op = b.getInt(i + REQ_OP);
        int ty = b.getInt(i + REQ_TYPE);
        int len = b.getInt(i + REQ_LEN);
        int srcProc = procOfQpn(src);
        if (!dev.directory().isPeer(srcProc) || !dev.directory().senderCurrent(src, b.getInt(i + REQ_INC))) {
            return; // no one to answer, or a request of a QP that has since failed or been reset (checked
            // again where a receive is consumed: Receives.deliver)
        }
        boolean rc = ty == QpType.RC.ordinal();
        int inc = b.getInt(i + REQ_INC);
        long seq = b.getLong(i + REQ_SEQ);
        QpResponder t = rc ? dev.qps.get(dst) : null;
        if (t != null && t.outOfSequence(src, inc, seq)) {
            return; // after a refused request of this requester: dropped until that one comes again (go-back-N)
        }
        int st;
        if (op < 0 || op >= OPS.length || ty < 0 || ty >= TYPES.length || len < 0 || len > length - REQ_DATA
                || (long) i + REQ_DATA + len > FabricLayout.RING_CAPACITY) {
            st = WcStatus.REM_INV_REQ_ERR;
        } else {
            st = deliver(src, inc, dst, OPS[op], TYPES[ty], b.getInt(i + REQ_IMM), b.getLong(i + REQ_RADDR),
                    b.getInt(i + REQ_RKEY), area(fabric.slot) + i + REQ_DATA, len);
            if (st == Receives.STALE) {
                return; // the sender left its incarnation while the request was executed: dropped as above
            }
        }
        if (t != null && st != WcStatus.SUCCESS && t.accepts(QpType.RC, src)) {
            t.refused(src, inc, seq);
        }
        if (ty == QpType.UD.ordinal()) {
            return;
        }
        ManyToOneRingBuffer r = fabric.ring(srcProc);
        try {
            int at = r.tryClaim(MSG_RESPONSE, RSP_BYTES);
            if (at > 0) {
                UnsafeBuffer rb = (UnsafeBuffer) r.buffer();
                rb.putInt(at + RSP_DST, src);
                rb.putInt(at + RSP_SLOT, b.getInt(i + REQ_SLOT));
                rb.putLong(at + RSP_SEQ, seq);
                rb.putInt(at + RSP_STATUS, st);
                r.commit(at);
            }
        } catch (RuntimeException corrupt) {
            // a scribbled ring at the initiator: the answer is lost
        } // a lost answer: the initiator's retry timer turns it into RETRY_EXC_ERR
    }

    /**
     * Execute one request of QP src (sent in its incarnation {@code inc}) at local QP dst: the status
     * the initiator completes with (or RNR), or {@link Receives#STALE} (no answer). The responder's
     * half is {@link Receives#deliver}, the path a requester of this process takes too.
     */
    private int deliver(int src, int inc, int dst, Opcode o, QpType type, int imm, long raddr, int rkey, long dataOff,
                        int len) {
        QpResponder t = dev.qps.get(dst);
        int tInc = t == null ? 0 : t.incarnation(); // before t's checks: a fault names the incarnation they met
        if (t == null || !t.accepts(type, src)) {
            return WcStatus.RETRY_EXC_ERR;
        }
        SimMr target = o == Opcode.RDMA_WRITE_WITH_IMM ? dev.mrs.get(rkey) : null;
        msg.of(o, type, src, imm, raddr, len).fromSegment(fabric.segment, dataOff).fromPeer(inc);
        int st = Receives.deliver(dev, t, tInc, msg, target, null);
        if (msg.targetFailed) {
            t.nudge();
        }
        return st;
    }
}
