package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The responder's side of a message that consumes a receive, shared by the engine (targets in this
 * process) and the {@link FabricAgent} (requests from other processes): the receive's length and
 * key checks, the error completion and transition they cause, and the scatter of payload bytes
 * into the receive's SGEs; plus the engine's bounds-checked copy.
 */
final class Receives {
    private Receives() {
    }

    /** {@link #fault}: the receive takes the message. */
    static final int FIT = -1;

    /**
     * The responder's checks of receive r for a message of {@code need} bytes (caller holds
     * q.lock): {@link #FIT}, or the receive is consumed with LOC_LEN_ERR or LOC_PROT_ERR, a
     * reliable target moves to ERR, and the requester's status is returned (REM_INV_REQ_ERR for
     * length, REM_OP_ERR otherwise; SUCCESS for UD, whose sender never learns).
     */
    static int fault(SimRecvQueue q, int r, SimQp t, long need, boolean ud, int srcQpn) {
        int recvProt = q.capacityOf(r) < need ? WcStatus.LOC_LEN_ERR : checkRecv(q, r, t);
        if (recvProt == 0) {
            return FIT;
        }
        long rid = q.wrId(r);
        q.pop();
        t.recvCq.push(rid, recvProt, WcOpcode.RECV, 0, 0, false, t.qpn, srcQpn);
        if (ud) {
            return WcStatus.SUCCESS;
        }
        t.moveToError();
        return recvProt == WcStatus.LOC_LEN_ERR ? WcStatus.REM_INV_REQ_ERR : WcStatus.REM_OP_ERR;
    }

    /** Receiver-side lkey check of receive slot r (caller holds q.lock). */
    static int checkRecv(SimRecvQueue q, int r, SimQp t) {
        SimPd base = t.pd.base();
        for (int j = 0, n = q.numSge(r); j < n; j++) {
            SimMr mr = t.dev.mrs.get(q.sgeLkey(r, j));
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

    /** Scatter {@code n} bytes of {@code seg} from {@code src} into receive r from receive offset {@code at}. */
    static void scatter(SimRecvQueue q, int r, long at, MemorySegment seg, long src, long n, SimDevice dev) {
        long pos = 0;
        for (int j = 0, k = q.numSge(r); j < k && n > 0; j++) {
            long l = Integer.toUnsignedLong(q.sgeLen(r, j));
            if (at < pos + l) {
                long within = at - pos;
                long chunk = Math.min(l - within, n);
                SimMr mr = dev.mrs.get(q.sgeLkey(r, j));
                if (mr != null) {
                    MemorySegment.copy(seg, src, mr.segment, q.sgeAddr(r, j) - mr.address + within, chunk);
                }
                src += chunk;
                at += chunk;
                n -= chunk;
            }
            pos += l;
        }
    }
}
