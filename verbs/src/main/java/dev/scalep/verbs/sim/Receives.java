package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.AsyncEvent;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The responder's side of a message that consumes a receive (send, send with immediate, RDMA write
 * with immediate), one path whoever the requester is: the engine calls {@link #deliver} for a
 * target in this process, the {@link FabricAgent} for a request from another process, so the two
 * cannot drift apart. It holds the receive's length and key checks, the error completion and
 * transition they cause, and the scatter of payload bytes into the receive's SGEs; plus the
 * engine's bounds-checked copy.
 */
final class Receives {
    private Receives() {
    }

    /** {@link #fault}: the receive takes the message. */
    static final int FIT = -1;
    /** {@link #deliver}: no receive is posted at a reliable target (the RNR NAK). */
    static final int RNR = -1;
    /**
     * {@link #deliver}: the message is a request of another process's QP that has since moved to ERR
     * or RESET ({@link Message#fromPeer}); it was dropped unanswered, nothing consumed.
     */
    static final int STALE = -2;
    /** Bytes of the global routing header a UD receive gets ahead of the payload. */
    static final int GRH_BYTES = 40;

    /**
     * One message as its responder executes it: what the request names, and where its payload is
     * (a requester's send-queue slot in this process, or a range of the fabric's inbound ring).
     * Each engine and each fabric agent owns one and refills it per message: nothing is allocated.
     */
    static final class Message {
        Opcode op;
        QpType type;
        int srcQpn;
        int imm;
        long remoteAddr;
        long length;
        /** Set by {@link #deliver}: the target moved to ERR and must be nudged to flush (by the caller, after it completed the send). */
        boolean targetFailed;
        /** Whether the requester lives in another process ({@link #fromPeer}); its requests carry its incarnation. */
        private boolean peer;
        private int srcIncarnation;
        private SendSlots slots;
        private int slot;
        private MemorySegment data;
        private long dataOff;

        /** What the request names; the payload follows with {@link #fromSlot} or {@link #fromSegment}. */
        Message of(Opcode o, QpType t, int src, int immData, long raddr, long len) {
            op = o;
            type = t;
            srcQpn = src;
            imm = immData;
            remoteAddr = raddr;
            length = len;
            peer = false;
            return this;
        }

        /**
         * The requester is a QP of another process that sent this request in incarnation {@code inc}:
         * {@link #deliver} checks under the receive queue's lock that it still sends in it.
         */
        Message fromPeer(int inc) {
            peer = true;
            srcIncarnation = inc;
            return this;
        }

        /** The payload is slot s of a send queue in this process (its SGEs or inline bytes). */
        Message fromSlot(SendSlots sl, int s) {
            slots = sl;
            slot = s;
            data = null;
            return this;
        }

        /** The payload is {@code [off, off + length)} of {@code seg}. */
        Message fromSegment(MemorySegment seg, long off) {
            slots = null;
            data = seg;
            dataOff = off;
            return this;
        }

        /** Copy {@code n} payload bytes from payload offset {@code from} to {@code dst} at {@code dstOff}. */
        void copy(long from, MemorySegment dst, long dstOff, long n) {
            if (slots != null) {
                slots.gather(slot, from, dst, dstOff, n);
            } else {
                MemorySegment.copy(data, dataOff + from, dst, dstOff, n);
            }
        }
    }

    /**
     * Execute message {@code msg} at QP t, which {@link QpResponder#accepts} it (the caller
     * checked): a write with immediate needs {@code target} (the MR its rkey names, may be null) to
     * be granted; then the oldest receive is checked ({@link #fault}), filled (a UD receive gets the
     * GRH first) and completed, under the receive queue's lock. Returns the requester's status:
     * SUCCESS (a UD message that found no receive or a bad one is lost, which is a success for its
     * sender), {@link #RNR} when a reliable target has no receive ({@code waiter}, when not null, is
     * nudged once one is posted), REM_ACCESS_ERR (the target moved to ERR, as an RC responder),
     * REM_INV_REQ_ERR or REM_OP_ERR (see {@link #fault}; {@link Message#targetFailed} is set), or
     * {@link #STALE} for a request of another process's QP that has left the incarnation it was sent
     * in. {@code tInc} is t's incarnation as the caller read it before its checks of t, which a
     * fault names ({@link QpResponder#responderFault}).
     */
    static int deliver(SimDevice dev, QpResponder t, int tInc, Message msg, SimMr target, QpRequester waiter) {
        msg.targetFailed = false;
        Opcode o = msg.op;
        boolean ud = msg.type == QpType.UD;
        if (o == Opcode.RDMA_WRITE_WITH_IMM) {
            if (!t.grants(target, msg.remoteAddr, msg.length, Access.REMOTE_WRITE)) {
                t.responderFault(tInc, AsyncEvent.QP_ACCESS_ERR, true);
                return WcStatus.REM_ACCESS_ERR;
            }
        } else if (o != Opcode.SEND && o != Opcode.SEND_WITH_IMM) {
            return WcStatus.REM_INV_REQ_ERR;
        }
        SimRecvQueue q = t.receiveQueue();
        q.lock.lock();
        try {
            // The agent checked the sender's incarnation when it took the request off the ring, but not
            // atomically with this consumption: a requester that meanwhile moves to ERR (its WQE flushed)
            // and is reset and brought back, after which a receive is posted here for its next send,
            // would have that receive taken by the flushed WQE, and the new send would meet RNR for
            // ever. Checked again here, under the lock every post takes: a receive posted after the
            // sender's transition is seen here only after that transition is, so it never goes to the
            // earlier incarnation. (In process, the requester's engine lock, which every transition
            // takes, is held across the whole delivery.)
            if (msg.peer) {
                FabricDirectory d = dev.directory();
                if (d == null || !d.senderCurrent(msg.srcQpn, msg.srcIncarnation)) {
                    return STALE;
                }
            }
            int r = q.peek();
            if (r < 0) {
                if (ud) {
                    return WcStatus.SUCCESS; // dropped at the receiver
                }
                if (waiter != null) {
                    q.addWaiter(waiter);
                }
                return RNR;
            }
            long rid = q.wrId(r);
            if (o == Opcode.RDMA_WRITE_WITH_IMM) {
                msg.copy(0, target.segment, msg.remoteAddr - target.address, msg.length);
                q.pop();
                t.recvCq().push(rid, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, (int) msg.length, msg.imm, true,
                        t.qpNum(), msg.srcQpn);
                return WcStatus.SUCCESS;
            }
            long need = msg.length + (ud ? GRH_BYTES : 0);
            int fault = fault(dev, q, r, t, tInc, need, ud, msg.srcQpn);
            if (fault != FIT) {
                msg.targetFailed = !ud;
                return fault;
            }
            if (ud) {
                scatter(dev, q, r, 0, GRH_BYTES, null, dev.grh);
            }
            scatter(dev, q, r, ud ? GRH_BYTES : 0, msg.length, msg, null);
            q.pop();
            boolean hasImm = o == Opcode.SEND_WITH_IMM;
            t.recvCq().push(rid, WcStatus.SUCCESS, WcOpcode.RECV, (int) need, hasImm ? msg.imm : 0, hasImm, t.qpNum(),
                    msg.srcQpn);
            return WcStatus.SUCCESS;
        } finally {
            q.lock.unlock();
        }
    }

    /**
     * The responder's checks of receive r for a message of {@code need} bytes (caller holds
     * q.lock): {@link #FIT}, or the receive is consumed with LOC_LEN_ERR or LOC_PROT_ERR, a
     * reliable target moves to ERR, and the requester's status is returned (REM_INV_REQ_ERR for
     * length, REM_OP_ERR otherwise; SUCCESS for UD, whose sender never learns).
     */
    private static int fault(SimDevice dev, SimRecvQueue q, int r, QpResponder t, int tInc, long need, boolean ud,
                             int srcQpn) {
        int recvProt = q.capacityOf(r) < need ? WcStatus.LOC_LEN_ERR : checkRecv(dev, q, r, t.basePd());
        if (recvProt == 0) {
            return FIT;
        }
        long rid = q.wrId(r);
        q.pop();
        t.recvCq().push(rid, recvProt, WcOpcode.RECV, 0, 0, false, t.qpNum(), srcQpn);
        if (ud) {
            return WcStatus.SUCCESS;
        }
        t.responderFault(tInc, QpResponder.NO_EVENT, false); // the caller nudges, after completing the send
        return recvProt == WcStatus.LOC_LEN_ERR ? WcStatus.REM_INV_REQ_ERR : WcStatus.REM_OP_ERR;
    }

    /** Receiver-side lkey check of receive slot r against the target's base PD (caller holds q.lock). */
    private static int checkRecv(SimDevice dev, SimRecvQueue q, int r, SimPd base) {
        for (int j = 0, n = q.numSge(r); j < n; j++) {
            SimMr mr = dev.mrs.get(q.sgeLkey(r, j));
            long l = Integer.toUnsignedLong(q.sgeLen(r, j));
            if (mr == null || mr.basePd != base || !mr.contains(q.sgeAddr(r, j), l)
                    || (mr.access & Access.LOCAL_WRITE) == 0) {
                return WcStatus.LOC_PROT_ERR;
            }
        }
        return 0;
    }

    /** A bounds-checked copy; a word-sized one (the common small RDMA payload) as one load and store. */
    static void copy(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long n) {
        if (n == Long.BYTES) {
            dst.set(ValueLayout.JAVA_LONG_UNALIGNED, dstOff, src.get(ValueLayout.JAVA_LONG_UNALIGNED, srcOff));
        } else {
            MemorySegment.copy(src, srcOff, dst, dstOff, n);
        }
    }

    /**
     * Scatter {@code n} bytes into receive r from receive offset {@code at}: the payload of
     * {@code msg}, or when it is null the start of {@code seg}.
     */
    private static void scatter(SimDevice dev, SimRecvQueue q, int r, long at, long n, Message msg, MemorySegment seg) {
        long src = 0;
        long pos = 0;
        for (int j = 0, k = q.numSge(r); j < k && n > 0; j++) {
            long l = Integer.toUnsignedLong(q.sgeLen(r, j));
            if (at < pos + l) {
                long within = at - pos;
                long chunk = Math.min(l - within, n);
                SimMr mr = dev.mrs.get(q.sgeLkey(r, j));
                if (mr != null) {
                    long dstOff = q.sgeAddr(r, j) - mr.address + within;
                    if (msg != null) {
                        msg.copy(src, mr.segment, dstOff, chunk);
                    } else {
                        MemorySegment.copy(seg, src, mr.segment, dstOff, chunk);
                    }
                }
                src += chunk;
                at += chunk;
                n -= chunk;
            }
            pos += l;
        }
    }
}
