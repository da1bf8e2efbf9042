package dev.scalep.endpoints;

import dev.scalep.threading.Affinity;
import dev.scalep.threading.Completion;
import dev.scalep.threading.CompletionRouter;
import dev.scalep.threading.SendBatch;
import dev.scalep.threading.SendPath;
import dev.scalep.threading.WrIds;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SharedReceiveQueue;

import java.lang.foreign.MemorySegment;

/**
 * One thread's communication endpoint: its buffers, its (possibly shared) QP and CQ, and the
 * policy features on its post path (postlist p, every q-th request signaled, inline threshold).
 *
 * <p>Thread-bound: every data-path method must be called by the thread that acquired it from
 * {@link EndpointManager#acquire()}. Another thread is refused with {@link IllegalStateException}
 * before anything is posted: the runtime removed the driver's locks on that promise, and a second
 * thread on a lock-free QP would corrupt its send queue. Data-path methods do not allocate; back-pressure is the return code
 * {@link SendPath#EAGAIN} (poll completions, then retry).
 *
 * <p>Memory: four regions, cache-line aligned unless the BUF axis is shared: {@link #sendBuffer()}
 * (source of writes and sends, target of the peer's reads), {@link #targetBuffer()} (where the
 * peer's writes land), {@link #readBuffer()} (where this endpoint's reads land) and receive slots
 * ({@link #recvSlot(int)}). Ids are the caller's, 47 bits ({@link WrIds#USER_BITS}).
 */
public final class Endpoint {
    /** User id of the zero-byte signaled write {@link #flush()} posts to retire unsignaled work; never delivered. */
    static final long FLUSH_ID = WrIds.USER_MASK;

    private final EndpointManager manager;
    private final int index;
    private final int owner;
    private final SendPath path;
    private final CompletionRouter router;
    private final QueuePair qp;
    private final MemoryRegion mr;
    private final MemorySegment region;
    private final long sendAddr;
    private final long targetAddr;
    private final long readAddr;
    private final int lkey;
    private final int bufferBytes;
    private final int slotBytes;
    /** Where requests wait for their postlist: the poster's batch, or the chained path's pool. */
    private final SendStaging staging;
    /** Receive slots, posted to the QP or as this endpoint's share of an SRQ. */
    private final EndpointReceives receives;
    private final Completion scratch = new Completion();
    private final int signalEvery;
    private final int inline;
    private final int[] where;
    private final int qpSharers;
    private final int cqSharers;
    /** The pool-fed send path of a per-thread QP with chained posts or two-SGE posts; null otherwise. */
    private final ChainedPoster chain;
    private final boolean sgeHeaderPayload;

    private volatile Thread ownerThread;
    private Affinity.Result pinResult;
    private long peerTarget;
    private long peerSend;
    private int peerRkey;
    private int peerBytes;
    /** Every peer's buffers, by peer index; the selected one is copied into the four fields above. */
    private long[] peerTargets = new long[1];
    private long[] peerSends = new long[1];
    private int[] peerRkeys = new int[1];
    private int[] peerLengths = new int[1];
    private int peerIndex;
    private int sinceSignal;
    /** Status of the first error completion this endpoint polled or drained (0: none). */
    private int firstErrorStatus;

    Endpoint(EndpointManager manager, int index, int owner, SendPath path, CompletionRouter router, QueuePair qp,
             SharedReceiveQueue srq, MemoryRegion mr, MemorySegment region, int ctx, int pd, int mrIdx, int qpIdx,
             int cqIdx, int srqIdx, int tdIdx, int qpSharers, int cqSharers, Object recvLock) {
        this.manager = manager;
        this.index = index;
        this.owner = owner;
        this.path = path;
        this.router = router;
        this.qp = qp;
        this.mr = mr;
        this.region = region;
        EndpointPlan plan = manager.plan();
        EndpointOptions o = plan.options();
        this.bufferBytes = o.bufferBytes();
        this.slotBytes = o.recvSlotBytes();
        this.sendAddr = region.address();
        this.targetAddr = sendAddr + bufferBytes;
        this.readAddr = targetAddr + bufferBytes;
        this.receives = new EndpointReceives(index, owner, qp, srq, recvLock, readAddr + bufferBytes, mr.lkey(), plan);
        this.lkey = mr.lkey();
        this.signalEvery = plan.signalEvery();
        this.inline = plan.inlineThreshold();
        this.where = new int[]{ctx, pd, mrIdx, qpIdx, cqIdx, srqIdx, tdIdx};
        this.qpSharers = qpSharers;
        this.cqSharers = cqSharers;
        this.chain = path instanceof ChainedPoster c ? c : null;
        this.staging = chain != null ? new SendStaging.Chain(chain, o.postlist())
                : new SendStaging.Batch(new SendBatch(Math.min(o.postlist(), path.maxBatch())), path, router);
        this.sgeHeaderPayload = chain != null && plan.sgeHeaderPayload();
    }

    EndpointManager manager() {
        return manager;
    }

    /** Room for {@code n} peers (a connectionless QP that reaches several ranks). */
    void peers(int n) {
        peerTargets = new long[n];
        peerSends = new long[n];
        peerRkeys = new int[n];
        peerLengths = new int[n];
    }

    /** Peer {@code i}'s target buffer, send buffer, rkey and their length (control path). */
    void peer(int i, long target, long send, int rkey, int bytes) {
        peerTargets[i] = target;
        peerSends[i] = send;
        peerRkeys[i] = rkey;
        peerLengths[i] = bytes;
        if (i == peerIndex) {
            to(i);
        }
    }

    /**
     * Direct the following data-path calls to peer {@code i} (its buffers, and on a connectionless
     * QP its address handle). An endpoint of a two-manager pair has one peer, index 0. Does not
     * allocate; returns this endpoint.
     */
    public Endpoint to(int i) {
        if (i < 0 || i >= peerRkeys.length) {
            throw new IndexOutOfBoundsException("peer " + i + " of " + peerRkeys.length);
        }
        peerIndex = i;
        peerTarget = peerTargets[i];
        peerSend = peerSends[i];
        peerRkey = peerRkeys[i];
        peerBytes = peerLengths[i];
        return this;
    }

    /** The buffers a peer needs to reach this endpoint: target and send buffer addresses, rkey, their length. */
    long targetAddress() {
        return targetAddr;
    }

    long sendAddress() {
        return sendAddr;
    }

    int rkey() {
        return mr.rkey();
    }

    int bufferBytes() {
        return bufferBytes;
    }

    void bind(Thread t, boolean pin) {
        ownerThread = t;
        if (pin) {
            int[] cpus = Affinity.allowed();
            pinResult = cpus.length == 0 ? Affinity.pin(index) : Affinity.pin(cpus[index % cpus.length]);
        }
    }

    void unbind() {
        checkOwner("release");
        if (outstanding() != 0 || staged() != 0) {
            throw new IllegalStateException("endpoint " + index + " has " + (outstanding() + staged())
                    + " requests outstanding; flush() and poll them before release");
        }
        ownerThread = null;
    }

    private void checkOwner(String op) {
        Thread t = ownerThread;
        if (t != Thread.currentThread()) {
            throw new IllegalStateException("endpoint " + index + " is bound to "
                    + (t == null ? "no thread (acquire it first)" : "thread '" + t.getName() + "'")
                    + "; refused " + op + " from thread '" + Thread.currentThread().getName() + "' (nothing posted)");
        }
    }

    /** RDMA write {@code length} bytes at {@code offset} of the send buffer to the peer's target buffer at {@code remoteOffset}. */
    public int write(long wrId, int offset, int length, int remoteOffset) {
        checkOwner("write");
        checkArgs("write", wrId, offset, length, remoteOffset);
        return stage(wrId, Opcode.RDMA_WRITE, sendAddr + offset, length, peerTarget + remoteOffset, 0);
    }

    /** RDMA write with immediate data; consumes one of the peer's receives. */
    public int writeImm(long wrId, int offset, int length, int remoteOffset, int imm) {
        checkOwner("writeImm");
        checkArgs("writeImm", wrId, offset, length, remoteOffset);
        return stage(wrId, Opcode.RDMA_WRITE_WITH_IMM, sendAddr + offset, length, peerTarget + remoteOffset, imm);
    }

    /** RDMA read {@code length} bytes at {@code remoteOffset} of the peer's send buffer into this read buffer at {@code offset}. */
    public int read(long wrId, int offset, int length, int remoteOffset) {
        checkOwner("read");
        checkArgs("read", wrId, offset, length, remoteOffset);
        return stage(wrId, Opcode.RDMA_READ, readAddr + offset, length, peerSend + remoteOffset, 0);
    }

    /** Send {@code length} bytes at {@code offset} of the send buffer into the peer's next receive. */
    public int send(long wrId, int offset, int length) {
        checkOwner("send");
        checkArgs("send", wrId, offset, length, NO_REMOTE);
        return stage(wrId, Opcode.SEND, sendAddr + offset, length, 0, 0);
    }

    /** Send with immediate data. */
    public int sendImm(long wrId, int offset, int length, int imm) {
        checkOwner("sendImm");
        checkArgs("sendImm", wrId, offset, length, NO_REMOTE);
        return stage(wrId, Opcode.SEND_WITH_IMM, sendAddr + offset, length, 0, imm);
    }

    /**
     * Send a header and a payload, both ranges of the send buffer, as one message: one work request
     * with two SGEs (header first), nothing copied. Needs the sge-header-payload feature on this
     * endpoint ({@link #sgeHeaderPayload()}); otherwise {@link IllegalStateException}.
     */
    public int sendGather(long wrId, int headerOffset, int headerLength, int payloadOffset, int payloadLength) {
        checkOwner("sendGather");
        checkGather();
        checkArgs("sendGather", wrId, headerOffset, headerLength, NO_REMOTE);
        checkArgs("sendGather", wrId, payloadOffset, payloadLength, NO_REMOTE);
        return stage(wrId, Opcode.SEND, sendAddr + headerOffset, headerLength, sendAddr + payloadOffset,
                payloadLength, 0, 0);
    }

    /** As {@link #sendGather} for an RDMA write: header then payload land contiguously at {@code remoteOffset}. */
    public int writeGather(long wrId, int headerOffset, int headerLength, int payloadOffset, int payloadLength,
                           int remoteOffset) {
        checkOwner("writeGather");
        checkGather();
        checkArgs("writeGather", wrId, headerOffset, headerLength, NO_REMOTE);
        checkArgs("writeGather", wrId, payloadOffset, payloadLength, remoteOffset);
        if ((long) remoteOffset + headerLength + payloadLength > peerBytes) {
            throw rangeError("writeGather", "remote range [" + remoteOffset + ", " + ((long) remoteOffset + headerLength
                    + payloadLength) + ")", "the peer's target buffer of " + peerBytes + " bytes");
        }
        return stage(wrId, Opcode.RDMA_WRITE, sendAddr + headerOffset, headerLength, sendAddr + payloadOffset,
                payloadLength, peerTarget + remoteOffset, 0);
    }

    /**
     * What this endpoint knows is checked at the call, before anything is staged: a local range
     * outside its {@code bufferBytes} buffer, a remote range outside the peer's, and a wr id that
     * does not fit the {@link WrIds#USER_BITS} bits it travels in (the top value is reserved for
     * {@link #flush()}) throw {@link IllegalArgumentException} instead of failing later on the
     * device, where a protection error would take the QP down. {@code NO_REMOTE}: no remote range
     * (sends). Branches only; nothing is allocated unless it throws.
     */
    private static final int NO_REMOTE = Integer.MIN_VALUE;

    private void checkArgs(String op, long wrId, int offset, int length, int remoteOffset) {
        if (wrId < 0 || wrId >= FLUSH_ID) {
            throw new IllegalArgumentException("endpoint " + index + ": " + op + " wr id " + wrId + " is outside 0.."
                    + (FLUSH_ID - 1) + " (wr ids travel in " + WrIds.USER_BITS + " bits; the top value is reserved)");
        }
        if (offset < 0 || length < 0 || (long) offset + length > bufferBytes) {
            throw rangeError(op, "local range [" + offset + ", " + ((long) offset + length) + ")",
                    "this endpoint's buffer of " + bufferBytes + " bytes");
        }
        if (remoteOffset != NO_REMOTE && (remoteOffset < 0 || (long) remoteOffset + length > peerBytes)) {
            throw rangeError(op, "remote range [" + remoteOffset + ", " + ((long) remoteOffset + length) + ")",
                    peerBytes == 0 ? "no peer (connect the managers first)" : "the peer's buffer of " + peerBytes + " bytes");
        }
    }

    private IllegalArgumentException rangeError(String op, String what, String limit) {
        return new IllegalArgumentException("endpoint " + index + ": " + op + " " + what + " is outside " + limit
                + " (nothing posted)");
    }

    private void checkGather() {
        if (!sgeHeaderPayload) {
            throw new IllegalStateException("endpoint " + index + ": sge-header-payload is off"
                    + (chain == null ? " (it needs a per-thread QP and a device with 2 send SGEs)" : "")
                    + "; enable it in the policy class or EndpointOptions.withSgeHeaderPayload(true)");
        }
    }

    /** Whether {@link #sendGather}/{@link #writeGather} post header and payload as two SGEs of one WR. */
    public boolean sgeHeaderPayload() {
        return sgeHeaderPayload;
    }

    private int stage(long wrId, Opcode op, long laddr, int length, long raddr, int imm) {
        return stage(wrId, op, 0, 0, laddr, length, raddr, imm);
    }

    /**
     * The one send path: post first when the list is due, stage the request (signaled every q-th,
     * inline below the threshold), post when the list is due. Back-pressure while staging posts
     * what is staged (it holds credits) and reaps completions before reporting it.
     */
    private int stage(long wrId, Opcode op, long headerAddr, int headerLength, long laddr, int length, long raddr,
                      int imm) {
        SendStaging s = staging;
        if (s.due()) {
            int rc = s.post();
            if (rc != 0) {
                return rc;
            }
        }
        int before = sinceSignal;
        int flags = 0;
        if (++sinceSignal >= signalEvery) {
            flags = SendFlags.SIGNALED;
            sinceSignal = 0;
        }
        int total = headerLength + length;
        if (total > 0 && total <= inline && op != Opcode.RDMA_READ) {
            flags |= SendFlags.INLINE;
        }
        int rc = s.add(WrIds.send(owner, wrId), op, flags, headerAddr, headerLength, laddr, length, lkey, raddr,
                peerRkey, imm, peerIndex);
        if (rc != 0) {
            sinceSignal = before;
            int prc = s.post(); // what is staged holds credits: post it so completions can return them
            router.progress();
            return prc != 0 && prc != SendPath.EAGAIN ? prc : rc;
        }
        if (s.due()) {
            int prc = s.post();
            if (prc != 0 && prc != SendPath.EAGAIN) {
                return prc;
            }
        }
        return 0;
    }

    /**
     * Post everything staged (a partial postlist) with its last request signaled, so that all of
     * this endpoint's work completes; if nothing is staged but unsignaled requests are outstanding,
     * a zero-byte signaled write retires them (its completion is not delivered). Returns 0, or
     * {@link SendPath#EAGAIN} when the queue is full (poll, then flush again).
     */
    public int flush() {
        checkOwner("flush");
        SendStaging s = staging;
        if (s.staged() > 0) {
            s.signalLast();
            sinceSignal = 0;
            return s.post();
        }
        if (sinceSignal > 0) {
            if (s.due()) {
                s.post();
            }
            Opcode op = qp.pd().context().capabilities().rdmaWrite() ? Opcode.RDMA_WRITE : Opcode.SEND;
            int rc = s.add(WrIds.send(owner, FLUSH_ID), op, SendFlags.SIGNALED, 0, 0, 0, 0, lkey, peerTarget, peerRkey, 0, peerIndex);
            if (rc != 0) {
                router.progress();
                return rc;
            }
            rc = s.post();
            if (rc == 0) {
                sinceSignal = 0;
            } else if (rc == SendPath.EAGAIN) {
                s.discard();
            }
            return rc;
        }
        return 0;
    }

    /**
     * Take this endpoint's next completion into {@code out}, polling the CQ on the sharers' behalf
     * when none is waiting. Only signaled sends, receives and error completions are delivered.
     */
    public boolean poll(Completion out) {
        checkOwner("poll");
        for (;;) {
            if (!router.pollOrProgress(owner, out)) {
                path.postQueued(); // requests a combiner left queued at its drain limit (shared QP)
                return false;
            }
            if (!out.ok() && firstErrorStatus == 0) {
                firstErrorStatus = out.status();
            }
            if (out.isRecv() || out.wrId() != FLUSH_ID) {
                return true;
            }
        }
    }

    /** Poll until every request posted from this endpoint is retired or {@code timeoutNanos} pass; returns whether they were. Discards completions. */
    public boolean drain(long timeoutNanos) {
        checkOwner("drain");
        long deadline = System.nanoTime() + timeoutNanos;
        while (flush() == SendPath.EAGAIN) {
            router.progress();
            discardCompletions();
            if (System.nanoTime() > deadline) {
                return false;
            }
        }
        while (outstanding() > 0) {
            router.progress();
            discardCompletions();
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    /** Poll and drop this endpoint's delivered completions, remembering the first error status. */
    private void discardCompletions() {
        while (router.poll(owner, scratch)) {
            if (!scratch.ok() && firstErrorStatus == 0) {
                firstErrorStatus = scratch.status();
            }
        }
    }

    /**
     * The state of this endpoint's QP. {@link QpState#ERR} means the QP stopped: everything posted
     * completes with an error status ({@link #firstErrorStatus()} tells the first one), and the way
     * back is to {@link #drain} this endpoint, {@link EndpointManager#release release} it and close
     * and reopen its manager (and the peer's, for a connected QP), then connect again.
     */
    public QpState qpState() {
        return qp.state();
    }

    /** The {@link dev.scalep.verbs.WcStatus} of the first error completion this endpoint polled or drained, 0 if none. */
    public int firstErrorStatus() {
        return firstErrorStatus;
    }

    /**
     * Requests posted and not yet settled: neither retired by a completion nor refused by the
     * provider ({@link #rejected()}). Staged ones are not counted.
     */
    public long outstanding() {
        return staging.posted - path.retired(owner) - path.rejected(owner);
    }

    /**
     * Requests of this endpoint the provider refused at post time, whichever thread's post carried
     * them (on a combining QP another thread may have posted them). Each is settled: it never
     * completes and no longer counts as outstanding.
     */
    public long rejected() {
        return path.rejected(owner);
    }

    /** The errno of this endpoint's first refused request ({@link dev.scalep.verbs.Errno}), 0 if none. */
    public int firstPostError() {
        return path.firstRejectErrno(owner);
    }

    /** Requests staged in the postlist and not yet posted. */
    public int staged() {
        return staging.staged();
    }

    /** Post receive slot {@code slot} again (after reading it). Any receive completion names its slot as the wrId. */
    public int repost(int slot) {
        checkOwner("repost");
        return postRecv(slot);
    }

    void postInitialReceives() {
        receives.postInitial();
    }

    private int postRecv(int slot) {
        return receives.post(slot);
    }

    /** Receive slots this endpoint posts (its share of an SRQ, else its receive depth). */
    public int recvSlots() {
        return receives.slots();
    }

    /** {@code postRecv} calls made for this endpoint's receives on an SRQ (initial stock included); -1 without an SRQ. */
    public long recvPostCalls() {
        return receives.postCalls();
    }

    /** Receives posted for this endpoint on an SRQ (initial stock included); -1 without an SRQ. */
    public long recvPosted() {
        return receives.posted();
    }

    /** Consumed receives waiting for the next refill batch (0 without an SRQ). */
    public int recvWaiting() {
        return receives.waiting();
    }

    /** Records in this endpoint's WR pool (0 when it posts through the poster's own list). */
    public int chainPool() {
        return chain == null ? 0 : chain.poolSize();
    }

    /** Native address of the pool record the last request was staged into (0 without a pool). */
    long lastRecordAddress() {
        return chain == null ? 0 : chain.lastRecordAddress();
    }

    /** This endpoint's index in its manager. */
    public int index() {
        return index;
    }

    /** The owner index used in ids and completion routing (position among its CQ's threads). */
    public int owner() {
        return owner;
    }

    public MemorySegment sendBuffer() {
        return region.asSlice(0, bufferBytes);
    }

    public MemorySegment targetBuffer() {
        return region.asSlice(bufferBytes, bufferBytes);
    }

    public MemorySegment readBuffer() {
        return region.asSlice(2L * bufferBytes, bufferBytes);
    }

    public MemorySegment recvSlot(int slot) {
        return region.asSlice(3L * bufferBytes + (long) slot * slotBytes, slotBytes);
    }

    public QueuePair qp() {
        return qp;
    }

    /** The pin outcome when the manager pinned the acquiring thread, else null. */
    public Affinity.Result pinResult() {
        return pinResult;
    }

    /** Which of the manager's resources this endpoint uses and how widely they are shared. */
    public Usage usage() {
        return new Usage(where[0], where[1], where[2], where[3], where[4], where[5], where[6], qp.uuar(),
                qp.lockFree(), qpSharers, cqSharers, path.getClass().getSimpleName());
    }

    /**
     * An endpoint's own resources: indexes into its manager's contexts, PDs, MRs, QPs, CQs, SRQs and
     * TDs (-1 for none), the doorbell register its QP rings, whether the QP runs without the
     * provider's lock, how many threads share its QP and CQ, and the send path class.
     */
    public record Usage(int context, int pd, int mr, int qp, int cq, int srq, int td, int uuar, boolean lockFreeQp,
                        int qpSharers, int cqSharers, String sendPath) {
    }

    void closeLocal() {
        staging.discard();
        receives.close();
    }
}
