package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.WcStatus;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;


import java.lang.invoke.MethodHandles;
import java.util.Arrays;
import java.lang.invoke.VarHandle;

import static dev.scalep.verbs.sim.FabricLayout.area;
import static dev.scalep.verbs.sim.FabricLayout.procOfQpn;

/**
 * The initiator side of one QP's work towards QPs of other processes (the QP's engine lock held).
 *
 * <p>One-sided operations (RDMA write and read, and 64-bit atomics: an atomic CPU instruction on
 * the peer's mapped word, see {@link RemoteAtomics}) run here, like a NIC's DMA engine: the target QP's
 * and MR's directory entries are checked, the MR's shared file is mapped (first use) and the bytes
 * are copied; an access violation also tells the target to move its QP to ERR. The last MR resolved
 * is kept for the rest of the engine run as an {@link MrWindow}, revalidated per WR by its entry's
 * epoch; the target QP's entry is checked once per run. Two-sided operations
 * (send, send-with-immediate, write-with-immediate) need the target's receive queue and CQ, which
 * live in the target process: the request, payload included, goes into the target's inbound ring;
 * the target's NIC agent executes it and answers with a status (an RNR NAK when no receive is
 * posted, retried while rnr_retry is 7).
 *
 * <p>On an RC QP (in order) two-sided requests are pipelined as on a wire ({@link #issue}): each is
 * sent as soon as it reaches the head of the send queue and moves to the pipe of requests in
 * flight, so the next one goes out without waiting for an answer; the pipe's head completes when
 * its answer arrives ({@link #collect}), in post order. The target's ring keeps one requester's
 * requests in order, and a target that refuses one (an RNR NAK, or an error) drops every later
 * request of that requester incarnation until the refused one comes again
 * ({@link QpResponder#outOfSequence}): go-back-N. So after the RNR timer the requester sends the
 * whole pipe again from its head, and nothing is delivered twice or out of order. The pipe's head
 * completes with RETRY_EXC_ERR past the retry timeout or once the target process is gone; so does a
 * request that found the target's ring full for a retry timeout (a ring a stuck or scribbled peer
 * never drains). On SRD each request is answered on its own (the window runs them in any order),
 * and UD sends are fire-and-forget.
 */
final class RemotePath {
    /** Returned by {@link #execute} while the WQE waits for its answer. */
    static final int WAIT = -2;
    /** Returned by {@link #issue}: the request was sent and is in the pipe (the engine takes it off its queue). */
    static final int PIPED = -3;
    /** Response status meaning "receiver not ready" (RNR NAK): {@link Receives#RNR}. */
    static final int RNR = Receives.RNR;

    static final int MSG_REQUEST = 1, MSG_RESPONSE = 2, MSG_ACCESS_ERROR = 3, MSG_INVALID_REQUEST = 4;
    static final int REQ_SRC = 0, REQ_DST = 4, REQ_SLOT = 8, REQ_OP = 12, REQ_SEQ = 16, REQ_IMM = 24,
            REQ_TYPE = 28, REQ_RADDR = 32, REQ_RKEY = 40, REQ_LEN = 44, REQ_INC = 48, REQ_DATA = 56;
    static final int RSP_DST = 0, RSP_SLOT = 4, RSP_SEQ = 8, RSP_STATUS = 16, RSP_BYTES = 20;

    private static final VarHandle SEQ = MethodHandles.arrayElementVarHandle(long[].class);
    private static final long RNR_DELAY_NANOS = 20_000;

    private final QpRequester qp;
    private final int qpn;
    private final QpType type;
    private final SendSlots sl;
    private final SimDevice dev;
    private final Fabric fabric;
    private final FabricDirectory dir;
    private final SharedMemory mem;
    private final long[] sentAt;
    /** When slot s first found the target's ring full (0: not waiting for room). */
    private final long[] fullSince;
    private final long[] answered;
    private final int[] status;
    /** The RC pipe: slots whose requests are in flight, in post order (a ring of {@code cap} entries). */
    private final int[] pipe;
    private int pipeHead;
    private int pipeSize;
    /** Pipe entries, from the head, sent in the current round (fewer than pipeSize while going back). */
    private int pipeSent;
    /** The peer QP the pipe's requests go to (RC: fixed while the pipe is not empty). */
    private int pipeDst;
    /** After a second RNR of one head, the head alone is sent again until it is answered; then the rest follows. */
    private boolean probing;
    /** The pipe's head met an RNR before (the next go-back probes with it alone). */
    private boolean rnrAgain;
    private final MrWindow window = new MrWindow();
    /** The peer QP, access and engine run of the last successful {@link FabricDirectory#checkQp}. */
    private int checkedQpn;
    private int checkedNeed;
    private long checkedRun = -1;
    /** Per peer process: its ring's consumer position when last looked at, and when that position last moved. */
    private final long[] peerTaken = new long[FabricLayout.MAX_PROCS];
    private final long[] peerMovedAt = new long[FabricLayout.MAX_PROCS];

    /** The path of QP {@code qpn} (of type {@code type}, on fabric-joined {@code dev}) whose send queue is {@code sl}. */
    RemotePath(QpRequester qp, int qpn, QpType type, SimDevice dev, SendSlots sl, int cap) {
        this.qp = qp;
        this.qpn = qpn;
        this.type = type;
        this.sl = sl;
        this.dev = dev;
        this.fabric = dev.fabric();
        this.dir = dev.directory();
        this.mem = dev.sharedMemory();
        this.sentAt = new long[cap];
        this.fullSince = new long[cap];
        this.answered = new long[cap];
        this.status = new int[cap];
        this.pipe = new int[Math.max(1, cap)];
    }

    /** Whether a QPN names a QP of another process on this fabric. */
    static boolean isRemote(SimDevice dev, int qpn) {
        return dev.fabric() != null && dev.directory().isPeer(procOfQpn(qpn));
    }

    /** Forget slot s's exchange (the slot is being reused or flushed). */
    void clear(int s) {
        sentAt[s] = 0;
        fullSince[s] = 0;
    }

    /** Forget every exchange (the QP is reset or destroyed): the slots are free again. */
    void reset() {
        Arrays.fill(sentAt, 0);
        Arrays.fill(fullSince, 0);
        pipeHead = 0;
        pipeSize = 0;
        pipeSent = 0;
        probing = false;
        rnrAgain = false;
    }

    /** Whether RC requests are in flight (later WQEs of other kinds wait until they are answered). */
    boolean busy() {
        return pipeSize != 0;
    }

    /** The slot at the pipe's head (there is one: {@link #busy}). */
    int pipeHead() {
        return pipe[pipeHead];
    }

    /** Take the pipe's head off (answered, failed or flushed) and return its slot. */
    int pipeTake() {
        int s = pipe[pipeHead];
        pipeHead = pipeHead + 1 == pipe.length ? 0 : pipeHead + 1;
        pipeSize--;
        if (pipeSent > 0) {
            pipeSent--;
        }
        probing = false;
        rnrAgain = false;
        sentAt[s] = 0;
        fullSince[s] = 0;
        return s;
    }

    /**
     * Send RC two-sided slot s (at the head of the send queue) towards peer QP {@code dqpn} without
     * waiting for an answer: {@link #PIPED} when it went out and joined the pipe, {@link #WAIT} when
     * it must stay queued (the target's ring is full, the pipe is being sent again after an RNR, or
     * it failed while earlier requests are in flight: its error is reported in order, once they are
     * answered), else the status to complete it with now.
     */
    int issue(int s, Opcode o, int dqpn) {
        if (pipeSize != 0 && (pipeSent < pipeSize || dqpn != pipeDst)) {
            qp.awaitRemote();
            return WAIT;
        }
        int st = request(s, o, dqpn);
        if (st == 0) {
            int tail = pipeHead + pipeSize;
            pipe[tail >= pipe.length ? tail - pipe.length : tail] = s;
            pipeSize++;
            pipeSent++;
            pipeDst = dqpn;
            qp.awaitRemote();
            return PIPED;
        }
        if (st == WAIT || pipeSize != 0) {
            qp.awaitRemote();
            return WAIT;
        }
        return st;
    }

    /**
     * The pipe's head (there is one: {@link #busy}): {@link #WAIT} while its answer is due, else the
     * status to complete it with, the slot taken off the pipe ({@link #pipeTake}; the caller reads
     * it first with {@link #pipeHead}). An RNR answer with rnr_retry 7 sends the pipe again from
     * its head once the RNR timer expired (the target dropped what followed).
     */
    int collect() {
        int s = pipe[pipeHead];
        if (pipeSent == 0) { // going back: the head is not sent yet
            int st = resend(probing ? 1 : pipeSize);
            if (st != 0 && st != WAIT) {
                pipeTake();
                return st;
            }
            qp.awaitRemote();
            return WAIT;
        }
        if ((long) SEQ.getAcquire(answered, s) != sl.seq(s) + 1) {
            if (timedOut(sentAt[s], procOfQpn(pipeDst))) {
                pipeTake();
                return WcStatus.RETRY_EXC_ERR;
            }
            if (!probing && pipeSent < pipeSize) {
                resend(pipeSize);
            }
            qp.awaitRemote();
            return WAIT;
        }
        int st = status[s];
        if (st == RNR) {
            if (qp.rnrRetry() < 7) {
                pipeTake();
                return WcStatus.RNR_RETRY_EXC_ERR;
            }
            if (System.nanoTime() - sentAt[s] < RNR_DELAY_NANOS) {
                qp.awaitRemote();
                return WAIT;
            }
            // the RNR timer expired: go back to the head (the target dropped every request after it) and
            // send the pipe again; when the same head meets RNR again, send it alone until it is taken
            for (int i = 0, k = pipeHead; i < pipeSize; i++, k = k + 1 == pipe.length ? 0 : k + 1) {
                SEQ.setRelease(answered, pipe[k], 0L);
                sentAt[pipe[k]] = 0;
            }
            pipeSent = 0;
            probing = rnrAgain;
            rnrAgain = true;
            return collect();
        }
        pipeTake();
        return st;
    }

    /**
     * Send the pipe's unsent entries again, in order, up to the first {@code upTo}: 0 when they went
     * out, {@link #WAIT} when the ring filled (or an entry past the head failed: it reports when it
     * reaches the head), else the head's status.
     */
    private int resend(int upTo) {
        while (pipeSent < Math.min(upTo, pipeSize)) {
            int k = pipeHead + pipeSent;
            int s = pipe[k >= pipe.length ? k - pipe.length : k];
            int st = request(s, sl.op(s), pipeDst);
            if (st != 0) {
                return st == WAIT || pipeSent > 0 ? WAIT : st;
            }
            pipeSent++;
        }
        return 0;
    }

    /**
     * Whether a request waiting since {@code since} (sent, or waiting for room in the ring) for
     * process {@code peer} has waited out the retry timeout: the peer is gone, or for a whole
     * timeout its NIC took nothing from its ring. A simulated NIC runs only when its process runs,
     * so time the OS gave neither process is not the peer's silence: the clock restarts whenever
     * the peer's ring moves, and never expires while this process's own ring holds answers not yet
     * read (its own NIC did not run either).
     */
    private boolean timedOut(long since, int peer) {
        if (fabric.peerGone(peer)) {
            return true;
        }
        long now = System.nanoTime();
        long timeout = dev.retryTimeoutNanos();
        if (now - since <= timeout) {
            return false;
        }
        long taken = fabric.ring(peer).consumerPosition();
        if (taken != peerTaken[peer] || peerMovedAt[peer] == 0) {
            peerTaken[peer] = taken;
            peerMovedAt[peer] = now | 1;
            return false;
        }
        if (now - peerMovedAt[peer] <= timeout) {
            return false;
        }
        ManyToOneRingBuffer own = fabric.ownRing();
        return own.producerPosition() == own.consumerPosition() || dev.fabricFailure() != null;
    }

    /**
     * Write RC slot s's request into peer QP dqpn's ring: 0 when sent (its clock started),
     * {@link #WAIT} while the ring is full (for one retry timeout at most), else the status to
     * complete it with.
     */
    private int request(int s, Opcode o, int dqpn) {
        int st = dir.checkQp(dqpn, qpn, type, 0);
        if (st != 0) {
            return st;
        }
        int claimed;
        try {
            claimed = send(s, o, dqpn);
        } catch (RuntimeException corrupt) { // the peer's ring trailer is scribbled: nothing gets through
            return WcStatus.RETRY_EXC_ERR;
        }
        if (claimed == -1) {
            return WcStatus.LOC_LEN_ERR;
        }
        if (claimed == 0) {
            long now = System.nanoTime() | 1;
            if (fullSince[s] == 0) {
                fullSince[s] = now;
            } else if (timedOut(fullSince[s], procOfQpn(dqpn))) {
                fullSince[s] = 0; // a ring that never drains (a stuck or scribbled peer) is a lost peer
                return WcStatus.RETRY_EXC_ERR;
            }
            return WAIT;
        }
        fullSince[s] = 0;
        sentAt[s] = System.nanoTime() | 1;
        return 0;
    }

    /**
     * Execute slot s towards peer QP {@code dqpn} in engine run {@code run}: a WcStatus to complete
     * with (SUCCESS included), or {@link #WAIT}.
     */
    int execute(int s, Opcode o, int dqpn, long run) {
        return switch (o) {
            case RDMA_WRITE -> oneSided(s, dqpn, false, run);
            case RDMA_READ -> oneSided(s, dqpn, true, run);
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> atomic(s, o, dqpn, run);
            default -> twoSided(s, o, dqpn);
        };
    }

    private int oneSided(int s, int dqpn, boolean read, long run) {
        int need = read ? Access.REMOTE_READ : Access.REMOTE_WRITE;
        int st = checkQp(dqpn, need, run);
        if (st == 0) {
            long len = sl.length(s);
            MrWindow w = resolve(run, sl.rkey(s), dqpn, dir.pdOfQp(dqpn), need);
            long off = w == null ? -1 : w.offsetOf(sl.remoteAddr(s), len);
            if (off < 0) {
                st = WcStatus.REM_ACCESS_ERR;
            } else if (read) {
                sl.scatterFrom(s, w.mapping, off);
            } else {
                sl.gather(s, 0, w.mapping, off, len);
            }
        }
        if (st == WcStatus.REM_ACCESS_ERR && type == QpType.RC) {
            notifyResponder(dqpn, MSG_ACCESS_ERROR);
        }
        return st;
    }

    /**
     * A 64-bit atomic on a word of the peer's shared memory, executed here as the CPU's atomic
     * instruction on the mapped file ({@link RemoteAtomics}): atomic against every atomic on that
     * word from any process, the owner's own NIC included. REMOTE_ATOMIC and the range are checked
     * as for reads (REM_ACCESS_ERR), then the alignment (REM_INV_REQ_ERR); the responder is told to
     * move to ERR on either.
     */
    private int atomic(int s, Opcode o, int dqpn, long run) {
        int st = checkQp(dqpn, Access.REMOTE_ATOMIC, run);
        if (st == 0) {
            long raddr = sl.remoteAddr(s);
            MrWindow w = resolve(run, sl.rkey(s), dqpn, dir.pdOfQp(dqpn), Access.REMOTE_ATOMIC);
            long off = w == null ? -1 : w.offsetOf(raddr, 8);
            if (off < 0) {
                st = WcStatus.REM_ACCESS_ERR;
            } else if (!RemoteAtomics.aligned(raddr)) {
                st = WcStatus.REM_INV_REQ_ERR;
            } else {
                sl.putAtomicResult(s, RemoteAtomics.apply(w.mapping, off, o, sl.compareAdd(s), sl.swap(s)));
            }
        }
        if (type == QpType.RC && (st == WcStatus.REM_ACCESS_ERR || st == WcStatus.REM_INV_REQ_ERR)) {
            notifyResponder(dqpn, st == WcStatus.REM_ACCESS_ERR ? MSG_ACCESS_ERROR : MSG_INVALID_REQUEST);
        }
        return st;
    }

    /**
     * The checks {@link DirectWrites} makes once per list of writes to peer QP {@code dqpn} (in
     * engine run {@code run}): the peer's PD id when the QP takes RDMA writes from this one, else -1
     * (the ordinary path reports).
     */
    int directTarget(int dqpn, long run) {
        return checkQp(dqpn, Access.REMOTE_WRITE, run) == 0 ? dir.pdOfQp(dqpn) : -1;
    }

    /**
     * The window of peer MR {@code rkey} (owned with QP {@code dqpn}, in PD {@code pd}) for a direct
     * RDMA write in engine run {@code run}, or null; the caller checks the range with
     * {@link MrWindow#offsetOf}.
     */
    MrWindow directWindow(int rkey, int dqpn, int pd, long run) {
        return resolve(run, rkey, dqpn, pd, Access.REMOTE_WRITE);
    }

    /**
     * The mapped window of peer MR rkey, reused while its directory entry is in the epoch it was
     * read in, else resolved and mapped again; null when the directory or the mapping refuses it.
     */
    private MrWindow resolve(long run, int rkey, int dqpn, int pd, int need) {
        MrWindow w = window;
        if (w.matches(run, rkey, dqpn, pd, need) && dir.mrCurrent(w)) {
            return w;
        }
        w.mapping = null;
        if (!dir.resolveMr(rkey, dqpn, pd, need, w)) {
            return null;
        }
        w.run = run;
        w.mapping = mem.peer(w.proc, w.file);
        return w.mapping == null ? null : w;
    }

    /**
     * {@link FabricDirectory#checkQp} for a one-sided operation, once per engine run and peer QP:
     * the WRs one run executes are one burst towards a QP whose state the run observed once.
     */
    private int checkQp(int dqpn, int need, long run) {
        if (run == checkedRun && dqpn == checkedQpn && need == checkedNeed) {
            return 0;
        }
        int st = dir.checkQp(dqpn, qpn, type, need);
        if (st == 0) {
            checkedQpn = dqpn;
            checkedNeed = need;
            checkedRun = run;
        }
        return st;
    }

    /** Tell the responder's process that QP dqpn refused a request ({@code msg}: access error or invalid request). */
    private void notifyResponder(int dqpn, int msg) {
        ManyToOneRingBuffer r = fabric.ring(procOfQpn(dqpn));
        try {
            int inc = dir.incarnationOf(dqpn); // the incarnation the refused request met
            int i = r.tryClaim(msg, 8);
            if (i > 0) {
                r.buffer().putInt(i, dqpn);
                r.buffer().putInt(i + 4, inc);
                r.commit(i);
            }
        } catch (RuntimeException corrupt) {
            // the peer's ring is scribbled: the notice is lost, as a packet to a broken node
        }
    }

    private int twoSided(int s, Opcode o, int dqpn) {
        if (sentAt[s] == 0) {
            int st = dir.checkQp(dqpn, qpn, type, 0);
            if (st != 0) {
                return type == QpType.UD ? WcStatus.SUCCESS : st;
            }
            int claimed;
            try {
                claimed = send(s, o, dqpn);
            } catch (RuntimeException corrupt) { // the peer's ring trailer is scribbled: nothing gets through
                return type == QpType.UD ? WcStatus.SUCCESS : WcStatus.RETRY_EXC_ERR;
            }
            if (type == QpType.UD) {
                return WcStatus.SUCCESS; // a datagram: the sender never learns what became of it
            }
            if (claimed == -1) {
                return WcStatus.LOC_LEN_ERR;
            }
            if (claimed == 0) { // ring full: try again at the next engine run, for one retry timeout at most
                long now = System.nanoTime() | 1;
                if (fullSince[s] == 0) {
                    fullSince[s] = now;
                } else if (timedOut(fullSince[s], procOfQpn(dqpn))) {
                    fullSince[s] = 0; // a ring that never drains (a stuck or scribbled peer) is a lost peer
                    return WcStatus.RETRY_EXC_ERR;
                }
                qp.awaitRemote();
                return WAIT;
            }
            fullSince[s] = 0;
            sentAt[s] = System.nanoTime() | 1;
            qp.awaitRemote();
            return WAIT;
        }
        long want = sl.seq(s) + 1;
        if ((long) SEQ.getAcquire(answered, s) != want) {
            if (timedOut(sentAt[s], procOfQpn(dqpn))) {
                sentAt[s] = 0;
                return WcStatus.RETRY_EXC_ERR;
            }
            qp.awaitRemote();
            return WAIT;
        }
        int st = status[s];
        if (st == RNR) {
            if (qp.rnrRetry() < 7) {
                sentAt[s] = 0;
                return WcStatus.RNR_RETRY_EXC_ERR;
            }
            if (System.nanoTime() - sentAt[s] < RNR_DELAY_NANOS) {
                qp.awaitRemote();
                return WAIT;
            }
            SEQ.setRelease(answered, s, 0L);
            sentAt[s] = 0;
            return twoSided(s, o, dqpn); // the RNR timer expired: send again
        }
        sentAt[s] = 0;
        return st;
    }

    /** Write slot s as a request into the target's ring: 1 sent, 0 ring full, -1 too long for a ring. */
    private int send(int s, Opcode o, int dqpn) {
        ManyToOneRingBuffer r = fabric.ring(procOfQpn(dqpn));
        long len = sl.length(s);
        if (len > r.maxMsgLength() - REQ_DATA) {
            return -1;
        }
        int i = r.tryClaim(MSG_REQUEST, REQ_DATA + (int) len);
        if (i <= 0) {
            return 0;
        }
        UnsafeBuffer b = (UnsafeBuffer) r.buffer();
        b.putInt(i + REQ_SRC, qpn);
        b.putInt(i + REQ_DST, dqpn);
        b.putInt(i + REQ_SLOT, s);
        b.putInt(i + REQ_OP, o.ordinal());
        b.putLong(i + REQ_SEQ, sl.seq(s) + 1);
        b.putInt(i + REQ_IMM, sl.imm(s));
        b.putInt(i + REQ_TYPE, type.ordinal());
        b.putLong(i + REQ_RADDR, sl.remoteAddr(s));
        b.putInt(i + REQ_RKEY, sl.rkey(s));
        b.putInt(i + REQ_LEN, (int) len);
        b.putInt(i + REQ_INC, qp.incarnation());
        long at = area(procOfQpn(dqpn)) + i + REQ_DATA;
        sl.gather(s, 0, fabric.segment, at, len);
        r.commit(i);
        return 1;
    }

    /** The target answered slot s (any thread): publish the status, then the sequence. */
    void onResponse(int s, long seq, int st) {
        if (s < 0 || s >= status.length) {
            return;
        }
        status[s] = st;
        SEQ.setRelease(answered, s, seq);
    }

    /** Whether slot s has a request in flight. */
    boolean inFlight(int s) {
        return sentAt[s] != 0;
    }
}
