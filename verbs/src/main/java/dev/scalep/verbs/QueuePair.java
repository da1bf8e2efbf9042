package dev.scalep.verbs;

import java.lang.foreign.MemorySegment;
import java.util.Objects;


/**
 * A queue pair. Control-path methods (state changes, close) are thread-safe. The data path
 * ({@link #postSend}, {@link #postRecv}) is serialised by the provider's QP lock, except on a QP
 * created through a parent domain ({@link #lockFree()}), which one thread at a time must use.
 *
 * <p>Posts return 0 or a positive errno (verbs' convention), never throw for back-pressure:
 * ENOMEM when the queue is full, EINVAL for a WR the QP cannot take (wrong state, too many SGEs,
 * inline above the limit, an opcode or flag the device lacks), with the list's
 * {@code badIndex()} naming the first WR not posted; the WRs before it are posted.
 */
public interface QueuePair extends AutoCloseable {
    /**
     * The Q_Key of every UD and SRD QP scalep creates (set at INIT); a UD or SRD work request
     * addressed to another scalep QP carries it ({@link SendWorkRequests#ud}, {@link SendWorkRequests#srdRdma}).
     */
    int QKEY = 0x11111111;

    ProtectionDomain pd();

    QpType type();

    /** The QP number, unique on its device. */
    int qpNum();

    QpState state();

    /** The attributes the QP was created with, after the device rounded them. */
    QpInitAttr attributes();

    /** Whether the QP runs without the provider's QP lock (created through a parent domain with a TD). */
    boolean lockFree();

    /** The mlx5 uUAR (doorbell register) index this QP rings, -1 where the device has none. */
    int uuar();

    /**
     * This QP's address for a peer: the selected port's LID and GID ({@link QpInitAttr#connection()})
     * and the path MTU this side accepts.
     */
    QpAddress address();

    /** The path MTU in force (bytes): agreed with the peer at RTR (RC); 0 before RTR or where none applies. */
    default int pathMtu() {
        return 0;
    }

    /** RESET → INIT with the remote access rights this QP grants. */
    void init(int accessFlags);

    /** INIT → RTR, connected to {@code remote} (RC); {@code null} for UD and SRD. */
    void readyToReceive(QpAddress remote);

    /**
     * RTR → RTS. {@code rnrRetry} 7 retries forever; fewer gives RNR_RETRY_EXC_ERR when no receive is
     * posted. The ACK timeout and the initiator depth come from {@link QpInitAttr#connection()}.
     */
    void readyToSend(int retryCount, int rnrRetry);

    /** Move to ERR: outstanding work completes with WR_FLUSH_ERR, each WR exactly once. */
    void toError();

    /** Move to RESET: queues emptied; the QP may be brought up again. */
    void reset();

    /** RESET → RTS in one call: {@code init}, {@code readyToReceive}, {@code readyToSend}. */
    default void connect(QpAddress remote, int accessFlags, int rnrRetry) {
        init(accessFlags);
        readyToReceive(remote);
        readyToSend(attributes().connection().retryCount(), rnrRetry);
    }

    /**
     * Post the whole chain with one doorbell: the same as {@code postSend(wrs, 0, wrs.count())}.
     * 0 or a positive errno.
     */
    int postSend(SendWorkRequests wrs);

    /**
     * Post the sub-chain of records {@code [from, from + count)} of a pre-linked list (records
     * linked {@code i -> i + 1}, as {@link SendWorkRequests#add} and {@link SendWorkRequests#fill}
     * leave them) with one doorbell, without rewriting the records: the provider cuts the chain
     * after record {@code from + count - 1} for the duration of the call and restores the link
     * before returning. On failure {@code wrs.badIndex()} is the absolute index of the first record
     * not posted; the records of the range before it are posted. 0 or a positive errno.
     *
     * <p>The default supports only the whole list; the sim and ibv providers support any range.
     *
     * @throws IndexOutOfBoundsException when the range is not within {@code [0, wrs.count())}
     */
    default int postSend(SendWorkRequests wrs, int from, int count) {
        Objects.checkFromIndexSize(from, count, wrs.count());
        if (from == 0 && count == wrs.count()) {
            return postSend(wrs);
        }
        throw new UnsupportedFeatureException("ibv_post_send", String.valueOf(pd()), "posting a sub-chain");
    }

    /** Post receives to this QP's own receive queue. 0 or a positive errno. */
    int postRecv(RecvWorkRequests wrs);

    /**
     * Send WQEs outstanding (posted, not yet retired by a completion). Exact when one thread posts
     * to the QP at a time (as every scalep send path does); the providers add no lock for it.
     */
    int outstandingSends();

    /** Feature-effect counters. */
    QpCounters counters();

    /**
     * The peer's registered memory {@code [remoteAddress, remoteAddress + length)} under
     * {@code rkey}, mapped into this process so that the CPU reaches it with loads, stores and
     * atomic instructions, as a shared-memory transport reaches a peer on the same machine; null
     * when this QP cannot (the default: on a real device the peer's memory is in another host or
     * in process-private memory only its NIC reaches). Checked as the device would check a request
     * of this QP to peer QP {@code peerQpn} (the connected one on RC): the peer QP is ready and
     * grants, and the key covers the range with, every access bit of {@code need}
     * ({@link Access#REMOTE_WRITE}, {@link Access#REMOTE_READ}, {@link Access#REMOTE_ATOMIC}).
     * The mapping stays valid while this process has the device open, even after the peer
     * deregisters the memory or exits: stopping to use it then is the caller's part (a window's
     * collective close).
     */
    default MemorySegment mapPeer(int peerQpn, long remoteAddress, long length, int rkey, int need) {
        return null;
    }

    /** {@code ibv_destroy_qp}. Idempotent; later posts throw {@link ClosedException}. */
    @Override
    void close();
}
