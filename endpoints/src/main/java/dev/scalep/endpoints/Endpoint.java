package dev.scalep.endpoints;

import dev.scalep.threading.Affinity;
import dev.scalep.threading.ChainedPoster;
import dev.scalep.threading.CompletionRouter;
import dev.scalep.threading.ExclusivePoster;
import dev.scalep.threading.RoutedCompletion;
import dev.scalep.threading.SendBatch;
import dev.scalep.threading.SendPath;
import dev.scalep.threading.WrIds;
import dev.scalep.verbs.ClosedException;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SharedReceiveQueue;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.counters.Counters;

import java.lang.foreign.MemorySegment;

/**
 * One thread's communication endpoint: its buffers, its (possibly shared) QP and CQ, and the
 * policy features on its post path (postlist p, every q-th request signaled, inline threshold).
 *
 * <p>Thread-bound: every data-path method must be called by the thread that acquired it from
 * {@link EndpointManager#acquire()} ({@code try (Endpoint ep = manager.acquire()) {...}}: closing
 * the endpoint gives it back). Another thread is refused with {@link IllegalStateException}
 * before anything is posted: the runtime removed the driver's locks on that promise, and a second
 * thread on a lock-free QP would corrupt its send queue. After its
 * manager is closed every data-path call throws {@link ClosedException}. Data-path methods do not
 * allocate. In a {@link WorldEndpoints} opened with {@link ProgressMode#THREAD} the rank's progress
 * thread also progresses the endpoint while its thread makes no call, never during one: each
 * data-path call then enters and leaves the slot's guard (a CAS and a store).
 *
 * <p>Outcomes: every posting call returns {@link #OK} when the request was accepted (it completes
 * later; {@link #poll} or {@link #drain} tell how), {@link #BACK_PRESSURED} when nothing was
 * taken because the send queue is full and polling the CQ on the endpoint's behalf freed nothing
 * (its completions fill what holds them for it: poll completions, then call again), or another positive
 * value: the errno with which the device refused this endpoint's requests ({@link #outcomeName}
 * names it; the QP has usually stopped, see {@link #qpState()}). Mistakes in the arguments throw
 * {@link IllegalArgumentException} before anything is posted.
 *
 * <p>Memory: four regions, cache-line aligned unless the BUF axis is shared: {@link #sendBuffer()}
 * (source of writes and sends, target of the peer's reads), {@link #targetBuffer()} (where the
 * peer's writes land), {@link #readBuffer()} (where this endpoint's reads land) and receive slots
 * ({@link #recvSlot(int)}). Ids are the caller's, 47 bits ({@link WrIds#USER_BITS}).
 */
public final class Endpoint implements AutoCloseable {
    /** Outcome: the request was accepted. */
    public static final int OK = 0;
    /** What {@code startRun} returns when the request starts no run (it is staged instead); no errno. */
    private static final int NO_RUN = Integer.MIN_VALUE;
    /** Outcome: nothing was taken, the send queue is full even after progressing the CQ; poll, then call again. */
    public static final int BACK_PRESSURED = SendPath.EAGAIN;
    /**
     * The slot a {@link #poll} reports for a write with immediate that a window flush took while
     * waiting and already gave back to the device (do not {@link #repost} it).
     */
    public static final long REPOSTED = -1;
    /** User id of the zero-byte signaled write {@link #flush()} posts to retire unsignaled work; never delivered. */
    static final long FLUSH_ID = WrIds.USER_MASK;
    /** User id of the atomics emulation's replies (the one other id the runtime keeps); never delivered. */
    static final long REPLY_ID = FLUSH_ID - 1;
    /** Ids of the tagged messages' control sends ({@link Messages}): {@code CONTROL_BASE + entry}, below {@link #REPLY_ID}. */
    static final int CONTROL_IDS = 256;
    /** The first id of the control sends; user ids end below it. */
    static final long CONTROL_BASE = REPLY_ID - CONTROL_IDS;
    /** Ids the runtime keeps at the top of the range: the control sends', {@link #REPLY_ID} and {@link #FLUSH_ID}. */
    static final int RESERVED_COUNT = CONTROL_IDS + 2;

    /**
     * What serves the atomics emulation on a device without RDMA atomics ({@link WorldEndpoints}):
     * offered every successful receive of a send with immediate before it is delivered.
     */
    interface Emulation {
        /**
         * Take the receive in slot {@code slot} ({@code length} bytes at {@code offset} of
         * {@code region}, immediate {@code imm}) if it is an emulation message, and return true; the
         * slot then belongs to the emulation, which gives it back with {@link Endpoint#repostSlot}
         * (at once: no receive waits on anything) and may send a reply with {@link Endpoint#reply}.
         * False leaves it to the endpoint's caller. Does not allocate.
         */
        boolean receive(Endpoint e, int slot, MemorySegment region, long offset, int imm, int length);
    }

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
    /**
     * Requests staged for the next postlist (at most the postlist, at most the path's batch), on
     * paths other than {@link #direct}.
     */
    private final SendBatch batch;
    /**
     * The path itself when it is a per-thread QP's {@link ExclusivePoster} (else null): requests are
     * staged straight into its native records, without {@link #batch}.
     */
    private final ExclusivePoster direct;
    /** Requests accepted by the send path (posted or handed to a combiner), refused ones included. */
    private long posted;
    /** {@link #posted} when {@link #settledNow} last found nothing in flight (-1 before), and the refused count then. */
    private long settledAt = -1;
    private long settledRejected;
    /** Receive slots, posted to the QP or as this endpoint's share of an SRQ. */
    private final EndpointReceives receives;
    private final RoutedCompletion scratch = new RoutedCompletion();
    private final int signalEvery;
    private final int inline;
    private final EndpointPlan.Placement at;
    private final boolean sgeHeaderPayload;
    /** Whether the flush request can be a zero-byte RDMA write (else a zero-byte send). */
    private final boolean rdmaWrite;
    /** This endpoint's counters, written by its owner thread when {@link Counters#ENABLED}. */
    private final EndpointCounters counters;

    private volatile Thread ownerThread;
    private volatile boolean closed;
    private Pinning pinResult;
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
    /** See {@link #destinationQps(int)}. */
    private int destinationQps;
    private int sinceSignal;
    /**
     * A run of plain writes, reads or sends on {@link #direct}, counted instead of staged: requests
     * of one operation with the same offsets and length and consecutive wr ids, which
     * {@link #write}, {@link #read} and {@link #send} accept with a few compares on this object's
     * own fields. {@link #materializeRun} stages them into the path's records
     * before anything else looks at or adds to what is staged, so the order of requests and every
     * count stay as if each request had been staged when it was called. The run holds the ids
     * {@code [runFirst, runNext)}; {@code runFirst} -1: no run (ids are never negative). A full run
     * the queue had no room for is kept whole ({@code runOpen} null: no request continues it) and
     * posted by the next write, read, send or poll that finds room ({@link #postKeptRun}).
     */
    private long runFirst = -1;
    /** The run's operation: {@link Opcode#RDMA_WRITE}, {@link Opcode#RDMA_READ} or {@link Opcode#SEND}. */
    private Opcode runOp;
    /**
     * The operation a request must have to continue the run: {@code runOp}, or null when there is
     * no run or it is full and kept (so that the request's compares need no other test).
     */
    private Opcode runOpen;
    /**
     * The id past the run's last: it may hold the records left free when it started, at most, and
     * is posted when its next id reaches this one.
     */
    private long runEnd;
    private int runOffset;
    private int runLength;
    private int runRemote;
    /** The wr id the run's next request carries. */
    private long runNext;
    /** The run's local and remote addresses, key and peer, fixed when it started. */
    private long runLaddr;
    private long runRaddr;
    private int runRkey;
    private int runPeer;
    /** Status of the first error completion this endpoint polled or drained (0: none). */
    private int firstErrorStatus;
    /**
     * Receives a window flush polled while waiting for its own completions, kept in arrival order
     * for {@link #poll} and {@link #pollReceive}. A write with immediate leaves nothing in its slot,
     * so its slot is posted again at once (a peer waiting for a receive must not wait on this
     * flush) and it is kept with {@link #REPOSTED} as its slot; a send keeps its slot until
     * delivered. The ring starts at four times the receive slots and doubles when more wait (the
     * only allocation, and only for a backlog that size).
     */
    private long[] heldWrId;
    private int[] heldImm;
    private int[] heldLen;
    private int[] heldFlags;
    private int[] heldOpcode;
    private int heldHead;
    private int heldCount;
    /** The atomics emulation this endpoint serves (null on devices with RDMA atomics, and outside worlds). */
    private Emulation emulation;
    /** The rank's tagged messages, offered each receive of a send with immediate after the emulation (worlds only). */
    private MessageHub hub;
    /** Key of the emulation's reply buffer on this endpoint's PD. */
    private int replyLkey;
    /**
     * Replies the send queue refused for now (address in the emulation's reply buffer, peer index),
     * retried at each progress; as long as the replies that can be owed at once (every staging
     * slot of every thread of every rank), so it never overflows.
     */
    private long[] backlogAddr = new long[0];
    private int[] backlogPeer = new int[0];
    private int backlogHead;
    private int backlogCount;
    /** Whether a reply may sit staged (not posted): each progress call posts it. */
    private boolean replyStaged;
    /** The slot's guard where the rank runs a progress thread, else null (set before the endpoint is acquired). */
    private SlotGuard guard;

    /** What the manager built for one endpoint: its placement and the instances it names. */
    record Wiring(EndpointPlan.Placement at, SendPath path, CompletionRouter router, QueuePair qp,
                  SharedReceiveQueue srq, MemoryRegion mr, MemorySegment region, Object recvLock) {
    }

    Endpoint(EndpointManager manager, Wiring w) {
        this.manager = manager;
        this.at = w.at();
        this.index = at.thread();
        this.owner = at.owner();
        this.path = w.path();
        this.router = w.router();
        this.qp = w.qp();
        this.mr = w.mr();
        this.region = w.region();
        EndpointPlan plan = manager.plan();
        EndpointOptions o = plan.options();
        this.bufferBytes = o.bufferBytes();
        this.slotBytes = o.recvSlotBytes();
        this.sendAddr = region.address();
        this.targetAddr = sendAddr + bufferBytes;
        this.readAddr = targetAddr + bufferBytes;
        this.receives = new EndpointReceives(index, owner, qp, w.srq(), w.recvLock(), readAddr + bufferBytes, mr.lkey(),
                plan);
        this.lkey = mr.lkey();
        this.signalEvery = plan.signalEvery();
        this.inline = plan.inlineThreshold();
        this.rdmaWrite = qp.pd().context().capabilities().rdmaWrite();
        this.batch = new SendBatch(Math.min(o.postlist(), path.maxBatch()));
        this.direct = path instanceof ExclusivePoster x && x.maxBatch() == batch.capacity() ? x : null;
        this.sgeHeaderPayload = plan.sgeHeaderPayload() && path.maxSge() > 1 && path instanceof ChainedPoster;
        int held = Math.max(16, 4 * receives.slots());
        this.heldWrId = new long[held];
        this.heldImm = new int[held];
        this.heldLen = new int[held];
        this.heldFlags = new int[held];
        this.heldOpcode = new int[held];
        this.counters = new EndpointCounters("m" + manager.serial() + ".ep" + index);
    }

    /** This endpoint's counters. */
    EndpointCounters counters() {
        return counters;
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
     * QP its address handle): {@link RankEndpoint#to(int)} does this with the peer index of a rank.
     * An endpoint of a two-manager pair has one peer, index 0. Does not allocate; returns this endpoint.
     */
    Endpoint to(int i) {
        if (i < 0 || i >= peerRkeys.length) {
            throw new IndexOutOfBoundsException("peer " + i + " of " + peerRkeys.length);
        }
        if (runFirst >= 0 && (i != peerIndex || peerTargets[i] != peerTarget || peerSends[i] != peerSend
                || peerRkeys[i] != peerRkey || peerLengths[i] != peerBytes)) {
            materializeRun(direct); // the run's requests go where they were called for; the next ones start anew
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
            Affinity.Result r = cpus.length == 0 ? Affinity.pin(index) : Affinity.pin(cpus[index % cpus.length]);
            pinResult = new Pinning(r.pinned(), r.cpu(), r.errno(), r.detail());
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
        if (ownerThread != Thread.currentThread() && !attending()) {
            throw notOwner(op); // the message is built apart: this check stays small enough to inline everywhere
        }
    }

    /** Whether the calling thread is the rank's progress thread, inside this endpoint's slot for a pass. */
    private boolean attending() {
        SlotGuard g = guard;
        return g != null && g.heldBy(Thread.currentThread());
    }

    /** Guard this endpoint's calls against the rank's progress thread ({@link ProgressMode#THREAD}; set before acquire). */
    void guard(SlotGuard g) {
        this.guard = g;
    }

    private RuntimeException notOwner(String op) {
        Thread t = ownerThread;
        if (closed) {
            return new ClosedException("endpoint " + index + " (refused " + op + ", nothing posted): its manager");
        }
        return new IllegalStateException("endpoint " + index + " is bound to "
                + (t == null ? "no thread (acquire it first)" : "thread '" + t.getName() + "'")
                + "; refused " + op + " from thread '" + Thread.currentThread().getName() + "' (nothing posted)");
    }

    /** RDMA write {@code length} bytes at {@code offset} of the send buffer to the peer's target buffer at {@code remoteOffset}. */
    public int write(long wrId, int offset, int length, int remoteOffset) {
        if (continuesRun(Opcode.RDMA_WRITE, wrId, offset, length, remoteOffset)) {
            return nextInRun(wrId);
        }
        SlotGuard g = guard;
        if (g == null) {
            return writeEntered(wrId, offset, length, remoteOffset);
        }
        g.enter();
        try {
            return writeEntered(wrId, offset, length, remoteOffset);
        } finally {
            g.exit();
        }
    }

    private int writeEntered(long wrId, int offset, int length, int remoteOffset) {
        checkOwner("write");
        checkArgs("write", wrId, offset, length, remoteOffset);
        long laddr = sendAddr + offset;
        long raddr = peerTarget + remoteOffset;
        int rc = startRun(Opcode.RDMA_WRITE, wrId, offset, length, remoteOffset, laddr, raddr);
        return rc != NO_RUN ? rc : stage(wrId, Opcode.RDMA_WRITE, laddr, length, raddr, 0);
    }

    /**
     * Start a run with this checked request on a per-thread QP without a guard, when the records
     * have room for two requests or more and the ids after this one stay below the reserved ones
     * (ending the run in progress first): {@link #OK} when it did, and the request is accepted. A
     * full run kept for want of credits is posted first; when it still finds none, {@link
     * #BACK_PRESSURED} (this request refused, nothing taken). Otherwise {@link #NO_RUN}: the request
     * is staged, and the postlist posted, as any other.
     */
    private int startRun(Opcode op, long wrId, int offset, int length, int remoteOffset, long laddr, long raddr) {
        ExclusivePoster d = direct;
        if (d == null || guard != null) {
            return NO_RUN;
        }
        if (runFirst >= 0 && runOpen == null && postKeptRun() == BACK_PRESSURED) {
            return BACK_PRESSURED;
        }
        endRunIfAny(d);
        long room = runRoom(d, wrId);
        if (room < 2) {
            return NO_RUN;
        }
        runFirst = wrId;
        runEnd = wrId + room;
        runOp = op;
        runOpen = op;
        runOffset = offset;
        runLength = length;
        runRemote = remoteOffset;
        runNext = wrId + 1;
        runLaddr = laddr;
        runRaddr = raddr;
        runRkey = peerRkey;
        runPeer = peerIndex;
        return OK;
    }

    /** Requests a run starting at id {@code first} may hold: the records left free, and no reserved id. */
    private static long runRoom(ExclusivePoster d, long first) {
        return Math.min(d.maxBatch() - d.staged(), CONTROL_BASE - first);
    }

    /**
     * Whether this request is the run's next: the same operation, offsets and length, the next id,
     * from the owner thread. Its arguments were checked when the run started (no run starts under
     * a guard, and closing the endpoint clears the owner and the run).
     */
    private boolean continuesRun(Opcode op, long wrId, int offset, int length, int remoteOffset) {
        return wrId == runNext && runOpen == op && offset == runOffset && length == runLength
                && remoteOffset == runRemote && ownerThread == Thread.currentThread();
    }

    /** Accept the run's next request; a full run is posted ({@link #endRun}). */
    private int nextInRun(long wrId) {
        long next = wrId + 1;
        runNext = next;
        return next == runEnd ? endRun() : OK;
    }

    /** Stage the run, if there is one, before anything looks at or adds to what is staged. */
    private void endRunIfAny(ExclusivePoster d) {
        if (runFirst >= 0) {
            materializeRun(d);
        }
    }

    /**
     * The run is full. One that filled the records from the first (the common case) is written and
     * posted in one pass ({@link ExclusivePoster#postRun}); one cut short by the reserved ids, or
     * begun after other staged requests, is staged, and the postlist posted when full ({@link
     * #stageDirect}'s rules for a full one).
     */
    private int endRun() {
        ExclusivePoster d = direct;
        if (runCount() != d.maxBatch()) {
            materializeRun(d);
            if (!d.stagedFull()) {
                return OK; // a run cut short by the reserved ids: the records are not full yet
            }
            int rc = postStaged();
            return rc != OK && rc != BACK_PRESSURED ? rc : OK;
        }
        int rc = postFullRun(d); // n == maxBatch: the run began on empty records, and nothing else was staged since
        return rc != OK && rc != BACK_PRESSURED ? rc : OK;
    }

    /**
     * Post the full run in one pass: {@link #OK} or the provider's errno, the run ended; or without
     * credits {@link #BACK_PRESSURED}, the run kept whole and closed to further requests, nothing
     * staged, its signals not yet counted (tried twice, around {@link #progressed}, as any
     * back-pressured post).
     */
    private int postFullRun(ExclusivePoster d) {
        int n = runCount();
        int q = signalEvery;
        int firstSignal = q - 1 - sinceSignal;
        long first = WrIds.send(owner, runFirst);
        int flags = runFlags();
        int rc = d.postRun(first, n, runOp, flags, firstSignal, q, runLaddr, runLength, lkey, runRaddr, runRkey, runPeer);
        if (rc == BACK_PRESSURED && progressed()) {
            rc = d.postRun(first, n, runOp, flags, firstSignal, q, runLaddr, runLength, lkey, runRaddr, runRkey, runPeer);
        }
        runOpen = null; // posted, or kept whole: either way no request continues it
        if (rc != BACK_PRESSURED) {
            runFirst = -1;
            runSignal(n);
            if (rc == OK) {
                openNextRun(d);
            }
        }
        return afterPost(n, rc);
    }

    /**
     * After a full run went out, open an empty one on the same operation and arguments, so that the
     * next request (the common case: the same call with the next id) continues it with the run's
     * compares alone, instead of starting one ({@link #startRun}'s checks and stores). Its arguments
     * are those checked when the posted run started, and the ids it may take stay below the
     * reserved ones. Anything else that finds it (another request, a flush, a peer switch) ends it
     * as any run, with nothing to stage; a poll leaves it open, as it leaves any open run.
     */
    private void openNextRun(ExclusivePoster d) {
        long next = runNext;
        long room = runRoom(d, next);
        if (room >= 2) {
            runFirst = next;
            runEnd = next + room;
            runOpen = runOp;
        }
    }

    /** Post the full run kept for want of credits: {@link #OK}, {@link #BACK_PRESSURED} (still kept) or the errno. */
    private int postKeptRun() {
        return postFullRun(direct);
    }

    /**
     * Stage the run's requests into the path's records, each signaled and inlined as {@link
     * #stageDirect} would have when it was called, and end the run. Does not allocate.
     */
    private void materializeRun(ExclusivePoster d) {
        int n = runCount();
        long first = runFirst;
        runFirst = -1;
        runOpen = null;
        if (n == 0) {
            return; // a run opened after a post ({@link #openNextRun}) that no request continued: nothing to stage
        }
        d.stageRun(WrIds.send(owner, first), n, runOp, runFlags(), runSignal(n), signalEvery, runLaddr, runLength,
                lkey, runRaddr, runRkey, runPeer);
    }

    /** Requests in the run (0: none). */
    private int runCount() {
        return runFirst < 0 ? 0 : (int) (runNext - runFirst);
    }

    /** The flags every request of the run carries: inline where {@link #stageDirect} would inline it. */
    private int runFlags() {
        int length = runLength;
        return length > 0 && length <= inline && !runOp.writesLocal() ? SendFlags.INLINE : 0;
    }

    /**
     * Account the signals of a run of {@code n} requests that ends now: returns the index in the run
     * of the first signaled request ({@code >= n} for none; then every {@link #signalEvery}-th).
     */
    private int runSignal(int n) {
        int q = signalEvery;
        int s = sinceSignal; // in [0, q): request i of the run is signaled where s + i + 1 is a multiple of q
        long t = (long) s + n;
        long signals = t / q; // the multiples of q in [s + 1, s + n]: one division for the count and the rest
        if (Counters.ENABLED && signals > 0) {
            counters.signaled.add(signals);
        }
        sinceSignal = (int) (t - signals * q);
        return q - 1 - s;
    }

    /** RDMA write with immediate data; consumes one of the peer's receives. */
    public int writeImm(long wrId, int offset, int length, int remoteOffset, int imm) {
        SlotGuard g = guard;
        if (g == null) {
            return writeImmEntered(wrId, offset, length, remoteOffset, imm);
        }
        g.enter();
        try {
            return writeImmEntered(wrId, offset, length, remoteOffset, imm);
        } finally {
            g.exit();
        }
    }

    private int writeImmEntered(long wrId, int offset, int length, int remoteOffset, int imm) {
        checkOwner("writeImm");
        checkArgs("writeImm", wrId, offset, length, remoteOffset);
        return stage(wrId, Opcode.RDMA_WRITE_WITH_IMM, sendAddr + offset, length, peerTarget + remoteOffset, imm);
    }

    /** RDMA read {@code length} bytes at {@code remoteOffset} of the peer's send buffer into this read buffer at {@code offset}. */
    public int read(long wrId, int offset, int length, int remoteOffset) {
        if (continuesRun(Opcode.RDMA_READ, wrId, offset, length, remoteOffset)) {
            return nextInRun(wrId);
        }
        SlotGuard g = guard;
        if (g == null) {
            return readEntered(wrId, offset, length, remoteOffset);
        }
        g.enter();
        try {
            return readEntered(wrId, offset, length, remoteOffset);
        } finally {
            g.exit();
        }
    }

    private int readEntered(long wrId, int offset, int length, int remoteOffset) {
        checkOwner("read");
        checkArgs("read", wrId, offset, length, remoteOffset);
        long laddr = readAddr + offset;
        long raddr = peerSend + remoteOffset;
        int rc = startRun(Opcode.RDMA_READ, wrId, offset, length, remoteOffset, laddr, raddr);
        return rc != NO_RUN ? rc : stage(wrId, Opcode.RDMA_READ, laddr, length, raddr, 0);
    }

    /** Send {@code length} bytes at {@code offset} of the send buffer into the peer's next receive. */
    public int send(long wrId, int offset, int length) {
        if (continuesRun(Opcode.SEND, wrId, offset, length, NO_REMOTE)) {
            return nextInRun(wrId);
        }
        SlotGuard g = guard;
        if (g == null) {
            return sendEntered(wrId, offset, length);
        }
        g.enter();
        try {
            return sendEntered(wrId, offset, length);
        } finally {
            g.exit();
        }
    }

    private int sendEntered(long wrId, int offset, int length) {
        checkOwner("send");
        checkArgs("send", wrId, offset, length, NO_REMOTE);
        int rc = startRun(Opcode.SEND, wrId, offset, length, NO_REMOTE, sendAddr + offset, 0);
        return rc != NO_RUN ? rc : stage(wrId, Opcode.SEND, sendAddr + offset, length, 0, 0);
    }

    /** Send with immediate data. */
    public int sendImm(long wrId, int offset, int length, int imm) {
        SlotGuard g = guard;
        if (g == null) {
            return sendImmEntered(wrId, offset, length, imm);
        }
        g.enter();
        try {
            return sendImmEntered(wrId, offset, length, imm);
        } finally {
            g.exit();
        }
    }

    private int sendImmEntered(long wrId, int offset, int length, int imm) {
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
        SlotGuard g = guard;
        if (g == null) {
            return sendGatherEntered(wrId, headerOffset, headerLength, payloadOffset, payloadLength);
        }
        g.enter();
        try {
            return sendGatherEntered(wrId, headerOffset, headerLength, payloadOffset, payloadLength);
        } finally {
            g.exit();
        }
    }

    private int sendGatherEntered(long wrId, int headerOffset, int headerLength, int payloadOffset, int payloadLength) {
        checkOwner("sendGather");
        checkGather();
        checkArgs("sendGather", wrId, headerOffset, headerLength, NO_REMOTE);
        checkArgs("sendGather", wrId, payloadOffset, payloadLength, NO_REMOTE);
        return stage(wrId, Opcode.SEND, sendAddr + headerOffset, headerLength, sendAddr + payloadOffset,
                payloadLength, 0, 0);
    }

    /** As {@link #sendGather} for an RDMA write: header then payload land contiguously at {@code remoteOffset}. */
    public int writeGather(long wrId, int headerOffset, int headerLength, int payloadOffset, int payloadLength, int remoteOffset) {
        SlotGuard g = guard;
        if (g == null) {
            return writeGatherEntered(wrId, headerOffset, headerLength, payloadOffset, payloadLength, remoteOffset);
        }
        g.enter();
        try {
            return writeGatherEntered(wrId, headerOffset, headerLength, payloadOffset, payloadLength, remoteOffset);
        } finally {
            g.exit();
        }
    }

    private int writeGatherEntered(long wrId, int headerOffset, int headerLength, int payloadOffset, int payloadLength,
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
     * does not fit the {@link WrIds#USER_BITS} bits it travels in (the top {@link #RESERVED_COUNT} values are the
     * runtime's: {@link #flush()}, the atomics emulation's replies and the tagged messages' control sends) throw {@link IllegalArgumentException} instead of failing later on the
     * device, where a protection error would take the QP down. {@code NO_REMOTE}: no remote range
     * (sends). Branches only; nothing is allocated unless it throws.
     */
    private static final int NO_REMOTE = Integer.MIN_VALUE;

    private void checkArgs(String op, long wrId, int offset, int length, int remoteOffset) {
        // One branch on the path: the bounds folded with non-short-circuit operators (a branch per
        // bound, each with its message's code behind it, cost an eighth of a write's time in the sweep's loop).
        if (wrId < 0 | wrId >= CONTROL_BASE | (offset | length) < 0 | (long) offset + length > bufferBytes
                | (remoteOffset != NO_REMOTE & (remoteOffset < 0 | (long) remoteOffset + length > peerBytes))) {
            throw argError(op, wrId, offset, length, remoteOffset);
        }
    }

    /** The error {@link #checkArgs} throws: the first bound the arguments break. */
    private RuntimeException argError(String op, long wrId, int offset, int length, int remoteOffset) {
        if (wrId < 0 || wrId >= CONTROL_BASE) {
            return new IllegalArgumentException("endpoint " + index + ": " + op + " wr id " + wrId + " is outside 0.."
                    + (CONTROL_BASE - 1) + " (wr ids travel in " + WrIds.USER_BITS + " bits; the top " + RESERVED_COUNT
                    + " values are reserved)");
        }
        if (offset < 0 || length < 0 || (long) offset + length > bufferBytes) {
            return rangeError(op, "local range [" + offset + ", " + ((long) offset + length) + ")",
                    "this endpoint's buffer of " + bufferBytes + " bytes");
        }
        return rangeError(op, "remote range [" + remoteOffset + ", " + ((long) remoteOffset + length) + ")",
                peerBytes == 0 ? "no peer (connect the managers first)" : "the peer's buffer of " + peerBytes + " bytes");
    }

    private IllegalArgumentException rangeError(String op, String what, String limit) {
        return new IllegalArgumentException("endpoint " + index + ": " + op + " " + what + " is outside " + limit
                + " (nothing posted)");
    }

    private void checkGather() {
        if (!sgeHeaderPayload) {
            throw new IllegalStateException("endpoint " + index + ": sge-header-payload is off"
                    + (path instanceof ChainedPoster ? "" : " (it needs a per-thread QP and a device with 2 send SGEs)")
                    + "; enable it in the policy class or EndpointOptions.withSgeHeaderPayload(true)");
        }
    }

    /** Whether {@link #sendGather}/{@link #writeGather} post header and payload as two SGEs of one WR. */
    public boolean sgeHeaderPayload() {
        return sgeHeaderPayload;
    }

    private int stage(long wrId, Opcode op, long laddr, int length, long raddr, int imm) {
        ExclusivePoster d = direct;
        if (d != null) {
            endRunIfAny(d);
            return stageDirect(d, wrId, op, laddr, length, raddr, imm);
        }
        return stage(wrId, op, 0, 0, laddr, length, lkey, raddr, peerRkey, imm, 0, 0, 0);
    }

    /**
     * {@link #stage(long, Opcode, long, int, long, int, int, long, int, int, long, long, int)} for
     * the common request on a per-thread QP (one SGE of the send buffer, the peer's key, no header,
     * no atomic, no forced flags): the same steps in a method small enough that the JIT inlines it
     * into the caller's loop whichever method it compiled first (the general one, compiled on its
     * own, was "already compiled into a big method" in some JVMs and a 14-argument call in others).
     */
    private int stageDirect(ExclusivePoster d, long wrId, Opcode op, long laddr, int length, long raddr, int imm) {
        if (d.stagedFull()) {
            int rc = postStaged();
            if (rc != OK) {
                return rc;
            }
        }
        int flags = 0;
        if (++sinceSignal >= signalEvery) {
            flags = SendFlags.SIGNALED;
            sinceSignal = 0;
            if (Counters.ENABLED) {
                counters.signaled.add(1);
            }
        }
        if (length > 0 && length <= inline && !op.writesLocal()) {
            flags |= SendFlags.INLINE;
        }
        d.stage(WrIds.send(owner, wrId), op, flags, laddr, length, lkey, raddr, peerRkey, imm, peerIndex);
        if (d.stagedFull()) {
            int rc = postStaged();
            if (rc != OK && rc != BACK_PRESSURED) {
                return rc;
            }
        }
        return OK;
    }

    private int stage(long wrId, Opcode op, long headerAddr, int headerLength, long laddr, int length, long raddr,
                      int imm) {
        return stage(wrId, op, headerAddr, headerLength, laddr, length, lkey, raddr, peerRkey, imm, 0, 0, 0);
    }

    /**
     * A window operation ({@link RankEndpoint}): staged like the others, with the local and remote
     * keys of the window's registrations on this endpoint's PD, under the reserved id whose
     * completion is never delivered (errors are still recorded in {@link #firstErrorStatus()}).
     * The caller checked the owner thread and the ranges. Does not allocate.
     */
    int stageWindow(Opcode op, long laddr, int length, int localKey, long raddr, int remoteKey, int imm) {
        return stage(FLUSH_ID, op, 0, 0, laddr, length, localKey, raddr, remoteKey, imm, 0, 0, 0);
    }

    /** A window atomic: the 8-byte result at {@code laddr}, the word at {@code raddr}, its operands. */
    int stageAtomic(Opcode op, long laddr, int localKey, long raddr, int remoteKey, long compareAdd, long swap) {
        return stage(FLUSH_ID, op, 0, 0, laddr, 8, localKey, raddr, remoteKey, 0, compareAdd, swap, 0);
    }

    /**
     * A request of the atomics emulation: a send with immediate {@code imm} of {@code length} bytes
     * at {@code laddr} (key {@code localKey}) into a receive of the peer this endpoint is directed
     * at; its completion is not delivered. The caller checked the owner thread. Does not allocate.
     */
    int stageRequest(long laddr, int length, int localKey, int imm) {
        return stage(FLUSH_ID, Opcode.SEND_WITH_IMM, 0, 0, laddr, length, localKey, 0, 0, imm, 0, 0, 0);
    }

    /**
     * A tagged message ({@link Messages}): a send with immediate {@link MessageHub#IMM_MESSAGE} of
     * {@code length} bytes at {@code laddr} (key {@code localKey}) to the peer this endpoint is
     * directed at, under {@code wrId} ({@link #FLUSH_ID} for data, whose completion is not
     * delivered; a control id, signaled, whose completion goes to the hub). Does not allocate.
     */
    int stageMessage(long wrId, long laddr, int length, int localKey, boolean signaled) {
        return stage(wrId, Opcode.SEND_WITH_IMM, 0, 0, laddr, length, localKey, 0, 0, MessageHub.IMM_MESSAGE, 0, 0,
                signaled ? SendFlags.SIGNALED : 0);
    }

    /**
     * {@link #stageMessage} on a connectionless QP to QP {@code qp} of the peer this endpoint is
     * directed at, instead of the peer's QP of this endpoint's index (a message to another thread
     * slot, {@link SlotAddressing#ANY_SLOT}). Does not allocate.
     */
    int stageMessageToQp(int qp, long wrId, long laddr, int length, int localKey, boolean signaled) {
        if (qp < 0 || qp >= destinationQps) {
            throw new IllegalStateException("endpoint " + index + ": QP " + qp + " of a peer is not wired here ("
                    + destinationQps + " per peer; only connectionless QPs reach another)");
        }
        int saved = peerIndex;
        peerIndex = peerRkeys.length + saved * destinationQps + qp; // PeerWiring.wire's table
        int rc = stageMessage(wrId, laddr, length, localKey, signaled);
        peerIndex = saved;
        return rc;
    }

    /** QPs of each peer this endpoint's connectionless QP may name ({@link #stageMessageToQp}); 0 on RC. */
    void destinationQps(int qps) {
        this.destinationQps = qps;
    }

    /**
     * Post what is staged as it is (no request forced signaled, unlike {@link #flush()}): the tagged
     * messages post each message at once this way and leave signaling to every q-th request.
     * Returns {@link #OK}, {@link #BACK_PRESSURED} (kept staged) or the provider's errno.
     */
    int postStagedNow() {
        return postStaged();
    }

    /** Offer receives to the rank's tagged messages (set before the endpoint is acquired). */
    void messages(MessageHub h) {
        this.hub = h;
    }

    /**
     * Serve {@code e} on this endpoint's receives (set before the endpoint is acquired); its replies
     * are sent from memory under {@code replyKey}, at most {@code owed} of them owed at once.
     */
    void emulation(Emulation e, int replyKey, int owed) {
        this.emulation = e;
        this.replyLkey = replyKey;
        this.backlogAddr = new long[owed];
        this.backlogPeer = new int[owed];
    }

    /**
     * Send the {@value AtomicEmulation#MESSAGE_BYTES}-byte reply at {@code addr} (in the emulation's
     * reply buffer) to peer {@code peer}, signaled. When the send queue is full the reply waits in
     * a backlog that every progress call retries, so this never fails for lack of room; no receive
     * slot waits for it. The endpoint stays directed at the peer it was. Called from this
     * endpoint's polling (the owner thread). Does not allocate.
     */
    void reply(long addr, int peer) {
        if (backlogCount > 0 || stageReply(addr, peer) == BACK_PRESSURED) {
            if (backlogCount == backlogAddr.length) {
                return; // more replies owed than requests can be in flight: not a request of a peer of this world
            }
            int t = (backlogHead + backlogCount) % backlogAddr.length;
            backlogAddr[t] = addr;
            backlogPeer[t] = peer;
            backlogCount++;
        }
    }

    private int stageReply(long addr, int peer) {
        int saved = peerIndex;
        if (peer != saved) {
            to(peer);
        }
        int rc = stage(REPLY_ID, Opcode.SEND_WITH_IMM, 0, 0, addr, AtomicEmulation.MESSAGE_BYTES, replyLkey, 0, 0,
                AtomicEmulation.IMM_REPLY, 0, 0, SendFlags.SIGNALED);
        if (peer != saved) {
            to(saved);
        }
        if (rc == OK) {
            replyStaged = true;
            postStagedReply(); // not postReplies: it walks the backlog, and may be what called this
        }
        // Any other refusal: the QP stopped, and the requester's flush reports it.
        return rc;
    }

    private void postStagedReply() {
        if (replyStaged && postStaged() == OK) {
            replyStaged = false;
        }
    }

    /** Post a staged reply and retry the backlog; a no-op when there is none. */
    private void postReplies() {
        postStagedReply();
        while (backlogCount > 0) {
            int h = backlogHead;
            if (stageReply(backlogAddr[h], backlogPeer[h]) == BACK_PRESSURED) {
                return;
            }
            backlogHead = h + 1 == backlogAddr.length ? 0 : h + 1;
            backlogCount--;
        }
    }

    /** Give receive slot {@code slot} back to the device (an emulation message that needs no reply). */
    void repostSlot(int slot) {
        postRecv(slot);
    }

    /**
     * Whether {@code c} is the runtime's own: a reply's send completion or an emulation message the
     * emulation took. Does not allocate.
     */
    private boolean internal(RoutedCompletion c) {
        if (!c.isRecv()) {
            long id = c.wrId();
            if (id >= CONTROL_BASE && id < REPLY_ID && hub != null) {
                hub.sent(this, (int) (id - CONTROL_BASE));
                return true;
            }
            return id == REPLY_ID;
        }
        if (!c.ok() || !c.hasImm() || c.opcode() != WcOpcode.RECV) {
            return false;
        }
        int slot = (int) c.wrId();
        long at = 3L * bufferBytes + (long) slot * slotBytes;
        Emulation em = emulation;
        if (em != null && em.receive(this, slot, region, at, c.imm(), c.byteLen())) {
            return true;
        }
        MessageHub h = hub;
        return h != null && h.receive(this, slot, region, at, c.imm(), c.byteLen());
    }

    /** The owner check of the data path, for {@link RankEndpoint}'s window operations. */
    void checkOwnerFor(String op) {
        checkOwner(op);
    }

    /** Index of this endpoint's QP in its manager (a window's keys are kept per QP). */
    int qpIndex() {
        return at.qp();
    }

    /**
     * The one send path: post first when the batch is full, stage the request (signaled every q-th,
     * inline below the threshold), post when the batch is full. Back-pressure leaves what is staged
     * in place (it is posted with the next call) and reaps completions before reporting it.
     */
    private int stage(long wrId, Opcode op, long headerAddr, int headerLength, long laddr, int length, int localKey,
                      long raddr, int remoteKey, int imm, long compareAdd, long swap, int forceFlags) {
        ExclusivePoster d = direct;
        endRunIfAny(d);
        SendBatch b = batch;
        if (d != null ? d.stagedFull() : b.isFull()) {
            int rc = postStaged();
            if (rc != OK) {
                return rc;
            }
        }
        int flags = forceFlags;
        if (++sinceSignal >= signalEvery || (flags & SendFlags.SIGNALED) != 0) {
            flags |= SendFlags.SIGNALED;
            sinceSignal = 0;
            if (Counters.ENABLED) {
                counters.signaled.add(1);
            }
        }
        int total = headerLength + length;
        if (total > 0 && total <= inline && !op.writesLocal()) {
            flags |= SendFlags.INLINE;
        }
        if (d != null) {
            d.stage(WrIds.send(owner, wrId), op, flags, headerAddr, headerLength, laddr, length, localKey, raddr,
                    remoteKey, imm, compareAdd, swap, peerIndex);
            if (d.stagedFull()) {
                int rc = postStaged();
                if (rc != OK && rc != BACK_PRESSURED) {
                    return rc;
                }
            }
            return OK;
        }
        int i = b.add(WrIds.send(owner, wrId), op, flags, laddr, length, localKey, raddr, remoteKey, imm, peerIndex);
        if (headerLength > 0) {
            b.header(i, headerAddr, headerLength);
        }
        if (op.isAtomic()) {
            b.atomic(i, compareAdd, swap);
        }
        if (b.isFull()) {
            int rc = postStaged();
            if (rc != OK && rc != BACK_PRESSURED) {
                return rc;
            }
        }
        return OK;
    }

    /**
     * A full postlist whose post met a full send queue stays staged (the call that staged it
     * returned {@link #OK}); every progress call posts it again once completions made room, so a
     * request accepted this way goes out with no other request or flush behind it (a ping-pong's
     * put would otherwise wait for the peer's answer to itself). Does not allocate.
     */
    private void postFullBatch() {
        ExclusivePoster d = direct;
        if (runFirst >= 0) { // an open run leaves the records short of full: it is posted when it fills them
            if (runOpen == null) {
                postKeptRun();
            }
            return;
        }
        if (d != null ? d.stagedFull() : batch.isFull()) {
            postStaged();
        }
    }

    /** Post what is staged: {@link #OK}, {@link #BACK_PRESSURED} (kept staged) or the provider's errno. */
    private int postStaged() {
        ExclusivePoster d = direct;
        endRunIfAny(d);
        SendBatch b = batch;
        int n = d != null ? d.staged() : b.count();
        if (n == 0) {
            return OK;
        }
        int rc = d != null ? d.postStaged() : path.post(b);
        if (rc == BACK_PRESSURED && progressed()) {
            rc = d != null ? d.postStaged() : path.post(b);
        }
        return afterPost(n, rc);
    }

    /**
     * A post found no credits: progress the CQ (its completions go to their owners' rings, and
     * the send completions among them return their credits); true when it routed any, and the
     * post is worth one more try: the requests then go out now instead of waiting, kept, for the
     * next call, and only a post that still finds no credits counts as back-pressured.
     */
    private boolean progressed() {
        return router.progress(owner) > 0;
    }

    /**
     * Account a post of the {@code n} requests staged ({@code rc} its result): back-pressured
     * (after {@link #progressed} and one more try), they stay staged; otherwise they count as posted.
     */
    private int afterPost(int n, int rc) {
        if (rc == BACK_PRESSURED) {
            if (Counters.ENABLED) {
                counters.backPressured.add(1);
            }
            return rc;
        }
        posted += n; // the refused ones are settled through the path's rejected(owner)
        batch.clear(); // (a direct path's records are consumed by its postStaged)
        if (Counters.ENABLED) {
            counters.wrs.add(n);
            if (rc != OK) {
                counters.failedPosts.add(1);
            }
        }
        return rc;
    }

    /**
     * Post everything staged (a partial postlist) with its last request signaled, so that all of
     * this endpoint's work completes; if nothing is staged but unsignaled requests are outstanding,
     * a zero-byte signaled write retires them (its completion is not delivered). Returns
     * {@link #OK}, {@link #BACK_PRESSURED} when the queue is full (poll, then flush again), or the
     * provider's errno.
     */
    public int flush() {
        SlotGuard g = guard;
        if (g == null) {
            return flushEntered();
        }
        g.enter();
        try {
            return flushEntered();
        } finally {
            g.exit();
        }
    }

    private int flushEntered() {
        checkOwner("flush");
        ExclusivePoster d = direct;
        endRunIfAny(d);
        SendBatch b = batch;
        int n = d != null ? d.staged() : b.count();
        if (n > 0) {
            boolean signaled = d != null ? d.lastSignaled() : (b.flags(n - 1) & SendFlags.SIGNALED) != 0;
            if (Counters.ENABLED && !signaled) {
                counters.signaled.add(1);
            }
            if (d != null) {
                d.signalLast();
            } else {
                b.flags(n - 1, b.flags(n - 1) | SendFlags.SIGNALED);
            }
            sinceSignal = 0;
            return postStaged();
        }
        if (sinceSignal > 0) {
            Opcode op = rdmaWrite ? Opcode.RDMA_WRITE : Opcode.SEND;
            if (d != null) {
                d.stage(WrIds.send(owner, FLUSH_ID), op, SendFlags.SIGNALED, 0, 0, 0, 0, 0, peerTarget, peerRkey, 0, 0, 0,
                        peerIndex);
            } else {
                int i = b.add(WrIds.send(owner, FLUSH_ID), op, SendFlags.SIGNALED);
                b.remote(i, peerTarget, peerRkey).peer(i, peerIndex);
            }
            int rc = postStaged();
            if (rc == OK) {
                sinceSignal = 0;
                if (Counters.ENABLED) {
                    counters.signaled.add(1);
                }
            } else if (rc == BACK_PRESSURED) {
                if (d != null) {
                    d.discardStaged();
                } else {
                    b.clear();
                }
            }
            return rc;
        }
        return OK;
    }

    /**
     * Take this endpoint's next completion into {@code out}, polling the CQ on the sharers' behalf
     * when none is waiting. Only signaled sends, receives and error completions are delivered.
     */
    public boolean poll(Completion out) {
        SlotGuard g = guard;
        if (g == null) {
            return pollEntered(out);
        }
        g.enter();
        try {
            return pollEntered(out);
        } finally {
            g.exit();
        }
    }

    private boolean pollEntered(Completion out) {
        checkOwner("poll");
        if (heldCount > 0) {
            int h = heldHead;
            out.copyFrom(heldWrId[h], 0, heldOpcode[h], heldLen[h], heldImm[h], heldFlags[h]);
            dropHeld();
            if (Counters.ENABLED) {
                counters.completions.add(1);
            }
            return true;
        }
        RoutedCompletion c = scratch;
        postReplies();
        postFullBatch();
        for (;;) {
            if (!router.pollOrProgress(owner, c)) {
                path.postQueued(); // requests a combiner left queued at its drain limit (shared QP)
                return false;
            }
            if (!c.ok() && firstErrorStatus == 0) {
                firstErrorStatus = c.status();
            }
            if (internal(c)) {
                continue;
            }
            if (c.isRecv() || c.wrId() != FLUSH_ID) {
                out.copyFrom(c);
                if (Counters.ENABLED) {
                    counters.completions.add(1);
                }
                return true;
            }
        }
    }

    /**
     * Flush, then poll until every request posted from this endpoint is settled or
     * {@code timeoutNanos} pass, discarding the completions. Returns true only when everything
     * settled and nothing of this endpoint ever failed: no error completion
     * ({@link #firstErrorStatus()}) and no request refused by the device ({@link #rejected()}).
     * False means the time ran out or something was lost; those two methods and {@link #qpState()}
     * tell which.
     */
    public boolean drain(long timeoutNanos) {
        SlotGuard g = guard;
        if (g == null) {
            return drainEntered(timeoutNanos);
        }
        g.enter();
        try {
            return drainEntered(timeoutNanos);
        } finally {
            g.exit();
        }
    }

    private boolean drainEntered(long timeoutNanos) {
        checkOwner("drain");
        long deadline = System.nanoTime() + timeoutNanos;
        int rc;
        while ((rc = flush()) == BACK_PRESSURED) {
            router.progress(owner);
            discardCompletions();
            if (System.nanoTime() > deadline) {
                return false;
            }
        }
        while (outstanding() > 0) {
            router.progress(owner);
            discardCompletions();
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.onSpinWait();
        }
        return rc == OK && firstErrorStatus == 0 && path.rejected(owner) == 0;
    }

    /** A readable name of a posting outcome: "OK", "BACK_PRESSURED", or the errno's symbol (e.g. "EINVAL"). */
    public static String outcomeName(int outcome) {
        return switch (outcome) {
            case OK -> "OK";
            case BACK_PRESSURED -> "BACK_PRESSURED";
            default -> Errno.name(outcome);
        };
    }

    /**
     * Progress while a window flush waits: poll the CQ, keep receives (a peer's notifications) for
     * later delivery, drop send completions (remembering the first error status), and post what a
     * combiner left queued. Does not allocate.
     */
    void progressKeepingReceives() {
        RoutedCompletion c = scratch;
        postReplies();
        postFullBatch();
        router.progress();
        while (router.poll(owner, c)) {
            if (!c.ok() && firstErrorStatus == 0) {
                firstErrorStatus = c.status();
            }
            if (!internal(c) && c.isRecv() && c.ok()) {
                hold(c);
            }
        }
        path.postQueued();
    }

    private void hold(RoutedCompletion c) {
        if (heldCount == heldWrId.length) {
            growHeld();
        }
        int h = (heldHead + heldCount) % heldWrId.length;
        long slot = c.wrId();
        if (c.opcode() == WcOpcode.RECV_RDMA_WITH_IMM) {
            repostDelivered(slot);
            slot = REPOSTED;
        }
        heldWrId[h] = slot;
        heldImm[h] = c.imm();
        heldLen[h] = c.byteLen();
        heldFlags[h] = c.flags();
        heldOpcode[h] = c.opcode();
        heldCount++;
    }

    private void growHeld() {
        int n = heldWrId.length;
        long[] w = new long[2 * n];
        int[] imm = new int[2 * n];
        int[] len = new int[2 * n];
        int[] fl = new int[2 * n];
        int[] op = new int[2 * n];
        for (int i = 0; i < heldCount; i++) {
            int h = (heldHead + i) % n;
            w[i] = heldWrId[h];
            imm[i] = heldImm[h];
            len[i] = heldLen[h];
            fl[i] = heldFlags[h];
            op[i] = heldOpcode[h];
        }
        heldWrId = w;
        heldImm = imm;
        heldLen = len;
        heldFlags = fl;
        heldOpcode = op;
        heldHead = 0;
    }

    private void dropHeld() {
        heldHead = heldHead + 1 == heldWrId.length ? 0 : heldHead + 1;
        heldCount--;
    }

    /**
     * The next receive of this endpoint (a peer's put with notification, or a send) into
     * {@code out}, its slot posted again; send completions met on the way are dropped (their errors
     * remembered). False when none is waiting. Does not allocate.
     */
    boolean pollReceive(Notification out) {
        if (heldCount > 0) {
            int h = heldHead;
            out.set(heldImm[h], heldLen[h], (heldFlags[h] & RoutedCompletion.WITH_IMM) != 0);
            long slot = heldWrId[h];
            dropHeld();
            return slot == REPOSTED || repostDelivered(slot);
        }
        RoutedCompletion c = scratch;
        postReplies();
        postFullBatch();
        for (;;) {
            if (!router.pollOrProgress(owner, c)) {
                path.postQueued();
                return false;
            }
            if (!c.ok()) {
                if (firstErrorStatus == 0) {
                    firstErrorStatus = c.status();
                }
                continue;
            }
            if (internal(c)) {
                continue;
            }
            if (c.isRecv()) {
                out.set(c.imm(), c.byteLen(), c.hasImm());
                return repostDelivered(c.wrId());
            }
        }
    }

    private boolean repostDelivered(long slot) {
        int rc = postRecv((int) slot);
        if (rc != 0) {
            throw new IllegalStateException("endpoint " + index + ": posting receive slot " + slot + " again failed: "
                    + Errno.name(rc));
        }
        return true;
    }

    /** Poll and drop this endpoint's delivered completions, remembering the first error status. */
    private void discardCompletions() {
        postReplies();
        while (router.poll(owner, scratch)) {
            if (!scratch.ok() && firstErrorStatus == 0) {
                firstErrorStatus = scratch.status();
            }
            internal(scratch);
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
     * provider ({@link #rejected()}). Staged ones are not counted. On a shared QP another thread's
     * later completion retires this endpoint's requests too; while this endpoint's own completion of
     * them is held for it (its completion ring was full), that held completion counts here, so at 0
     * every completion of this endpoint's is in its ring: the next {@link #poll} calls take them.
     */
    public long outstanding() {
        long n = posted - path.retired(owner) - path.rejected(owner);
        return n > 0 ? n : router.heldSends(owner); // retired, but its own completion still held for it
    }

    /**
     * Requests of this endpoint the provider refused at post time, whichever thread's post carried
     * them (on a combining QP another thread may have posted them). Each is settled: it never
     * completes and no longer counts as outstanding.
     */
    public long rejected() {
        return path.rejected(owner);
    }

    /**
     * Whether a flush would find nothing to do: nothing staged, no unsignaled request waiting for a
     * signaled one, nothing outstanding. Once that held it holds until the next post, so a thread
     * that asks again without posting (a flush after operations that bypassed the endpoint) gets
     * its answer from two fields, without asking the send path. The owner's call.
     */
    boolean settledNow() {
        if (staged() != 0 || sinceSignal != 0) {
            return false;
        }
        if (posted == settledAt) {
            return true;
        }
        if (outstanding() != 0) {
            return false;
        }
        settledRejected = path.rejected(owner);
        settledAt = posted;
        return true;
    }

    /** {@link #rejected()} as {@link #settledNow} last found it: exact while it holds (nothing posted since). */
    long settledRejected() {
        return settledRejected;
    }

    /** The errno of this endpoint's first refused request ({@link dev.scalep.verbs.Errno}), 0 if none. */
    public int firstPostError() {
        return path.firstRejectErrno(owner);
    }

    /** Requests staged in the postlist and not yet posted (emulation replies waiting for room included). */
    public int staged() {
        return (direct != null ? direct.staged() + runCount() : batch.count()) + backlogCount;
    }

    /** Post receive slot {@code slot} again (after reading it). Any receive completion names its slot as the wrId. */
    public int repost(int slot) {
        SlotGuard g = guard;
        if (g == null) {
            return repostEntered(slot);
        }
        g.enter();
        try {
            return repostEntered(slot);
        } finally {
            g.exit();
        }
    }

    private int repostEntered(int slot) {
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
        return path instanceof ChainedPoster c ? c.poolSize() : 0;
    }

    /** Native address of the pool record the last request was posted from (0 without a pool). */
    long lastRecordAddress() {
        return path instanceof ChainedPoster c ? c.lastRecordAddress() : 0;
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

    QueuePair qp() {
        return qp;
    }

    /** The pin outcome when the manager pinned the acquiring thread, else null. */
    public Pinning pinResult() {
        return pinResult;
    }

    /** Which of the manager's resources this endpoint uses and how widely they are shared. */
    public Usage usage() {
        return new Usage(at.context(), at.pd(), at.mr(), at.qp(), at.cq(), at.srq(), at.td(), qp.uuar(),
                qp.lockFree(), at.qpSharers(), at.cqSharers(), path.getClass().getSimpleName());
    }

    /**
     * An endpoint's own resources: indexes into its manager's contexts, PDs, MRs, QPs, CQs, SRQs and
     * TDs (-1 for none), the doorbell register its QP rings, whether the QP runs without the
     * provider's lock, how many threads share its QP and CQ, and the send path class.
     */
    public record Usage(int context, int pd, int mr, int qp, int cq, int srq, int td, int uuar, boolean lockFreeQp,
                        int qpSharers, int cqSharers, String sendPath) {
    }

    /**
     * Give this endpoint back to its manager, from the thread that acquired it, with nothing
     * outstanding ({@link #drain} first); {@code try (Endpoint ep = manager.acquire()) {...}} does it.
     * Idempotent, and a no-op once the manager is closed.
     */
    @Override
    public void close() {
        if (!closed && ownerThread != null) {
            manager.release(this);
        }
    }

    void closeLocal() {
        closed = true;
        ownerThread = null;
        batch.clear();
        runFirst = -1;
        runOpen = null;
        if (direct != null) {
            direct.discardStaged();
        }
        receives.close();
        counters.close();
    }
}
