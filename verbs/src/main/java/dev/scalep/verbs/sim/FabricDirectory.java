package dev.scalep.verbs.sim;

import dev.scalep.verbs.QpState;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.WcStatus;
import org.agrona.concurrent.UnsafeBuffer;

import static dev.scalep.verbs.sim.FabricLayout.MAX_FILES;
import static dev.scalep.verbs.sim.FabricLayout.MAX_PROCS;
import static dev.scalep.verbs.sim.FabricLayout.MR_ACCESS;
import static dev.scalep.verbs.sim.FabricLayout.MR_ADDRESS;
import static dev.scalep.verbs.sim.FabricLayout.MR_EPOCH;
import static dev.scalep.verbs.sim.FabricLayout.MR_FILE;
import static dev.scalep.verbs.sim.FabricLayout.MR_FILE_OFFSET;
import static dev.scalep.verbs.sim.FabricLayout.MR_KEY;
import static dev.scalep.verbs.sim.FabricLayout.MR_LENGTH;
import static dev.scalep.verbs.sim.FabricLayout.MR_PD;
import static dev.scalep.verbs.sim.FabricLayout.QP_ACCESS;
import static dev.scalep.verbs.sim.FabricLayout.QP_INCARNATION;
import static dev.scalep.verbs.sim.FabricLayout.QP_PD;
import static dev.scalep.verbs.sim.FabricLayout.QP_QPN;
import static dev.scalep.verbs.sim.FabricLayout.QP_REMOTE;
import static dev.scalep.verbs.sim.FabricLayout.QP_STATE;
import static dev.scalep.verbs.sim.FabricLayout.QP_TYPE;
import static dev.scalep.verbs.sim.FabricLayout.mrEntry;
import static dev.scalep.verbs.sim.FabricLayout.procOfKey;
import static dev.scalep.verbs.sim.FabricLayout.procOfQpn;
import static dev.scalep.verbs.sim.FabricLayout.qpEntry;

/**
 * The QP and MR directories of a fabric: this process publishes its QPs' connection state and its
 * remotely accessible MRs; initiators in other processes read a peer's entries to run one-sided
 * operations themselves. Writers (the owner's control path) write the id last with a release
 * store and clear it first; readers load the id with an acquire, read the fields, and load it again
 * (a concurrent destroy is seen as a mismatch). Every field read is range-checked.
 */
final class FabricDirectory {
    private static final QpState[] STATES = QpState.values();
    private static final QpType[] TYPES = QpType.values();

    private final Fabric fabric;
    private final UnsafeBuffer b;

    FabricDirectory(Fabric fabric) {
        this.fabric = fabric;
        this.b = fabric.buffer;
    }

    // ------------------------------------------------------------------ writers (owner, control path)

    void publishQp(SimQp q) {
        int e = qpEntry(fabric.slot, q.qpn);
        b.putInt(e + QP_TYPE, q.type.ordinal());
        b.putInt(e + QP_PD, q.pd.base().id);
        updateQp(q);
        b.putIntOrdered(e + QP_QPN, q.qpn);
    }

    /** Mirror the QP's state, access and remote QPN (any transition). */
    void updateQp(SimQp q) {
        int e = qpEntry(fabric.slot, q.qpn);
        b.putInt(e + QP_ACCESS, q.accessFlags());
        b.putInt(e + QP_REMOTE, q.remoteQpn);
        b.putInt(e + QP_INCARNATION, q.incarnation);
        b.putIntOrdered(e + QP_STATE, q.state.ordinal());
    }

    void clearQp(int qpn) {
        int e = qpEntry(fabric.slot, qpn);
        if (b.getIntVolatile(e + QP_QPN) == qpn) {
            b.putIntOrdered(e + QP_QPN, 0);
        }
    }

    void publishMr(int key, int access, int pdId, int fileNo, long fileOffset, long length, long address) {
        int e = mrEntry(fabric.slot, key);
        b.putInt(e + MR_ACCESS, access);
        b.putInt(e + MR_PD, pdId);
        b.putInt(e + MR_FILE, fileNo);
        b.putLong(e + MR_FILE_OFFSET, fileOffset);
        b.putLong(e + MR_LENGTH, length);
        b.putLong(e + MR_ADDRESS, address);
        b.putIntOrdered(e + MR_EPOCH, b.getInt(e + MR_EPOCH) + 1);
        b.putIntOrdered(e + MR_KEY, key);
    }

    void clearMr(int key) {
        int e = mrEntry(fabric.slot, key);
        if (b.getIntVolatile(e + MR_KEY) == key) {
            b.putIntOrdered(e + MR_KEY, 0);
            b.putIntOrdered(e + MR_EPOCH, b.getInt(e + MR_EPOCH) + 1);
        }
    }

    // ------------------------------------------------------------------ readers (initiators, data path)

    /** Whether p names a peer entry (1..MAX_PROCS-1, not this process). */
    boolean isPeer(int p) {
        return p > 0 && p < MAX_PROCS && p != fabric.slot;
    }

    /**
     * Check that the peer QP {@code dqpn} accepts an operation of QP {@code srcQpn} (type
     * {@code type}) needing access bits {@code need} (0 for sends): 0 when it does, RETRY_EXC_ERR
     * when the QP or its process is gone or not connected to the source (the packets find no one),
     * REM_ACCESS_ERR when the QP forbids the access.
     */
    int checkQp(int dqpn, int srcQpn, QpType type, int need) {
        int p = procOfQpn(dqpn);
        if (!isPeer(p) || fabric.peerGone(p)) {
            return WcStatus.RETRY_EXC_ERR;
        }
        int e = qpEntry(p, dqpn);
        if (b.getIntVolatile(e + QP_QPN) != dqpn) {
            return WcStatus.RETRY_EXC_ERR;
        }
        int st = b.getIntVolatile(e + QP_STATE);
        int ty = b.getInt(e + QP_TYPE);
        int remote = b.getInt(e + QP_REMOTE);
        int access = b.getInt(e + QP_ACCESS);
        if (b.getIntVolatile(e + QP_QPN) != dqpn || st < 0 || st >= STATES.length || ty < 0 || ty >= TYPES.length) {
            return WcStatus.RETRY_EXC_ERR;
        }
        QpState s = STATES[st];
        if ((s != QpState.RTR && s != QpState.RTS && s != QpState.SQD) || TYPES[ty] != type
                || (type == QpType.RC && remote != srcQpn)) {
            return WcStatus.RETRY_EXC_ERR;
        }
        return need != 0 && (access & need) == 0 ? WcStatus.REM_ACCESS_ERR : 0;
    }

    /**
     * Whether peer QP {@code src} still sends in incarnation {@code inc}: a request it wrote before
     * it went to ERR or RESET is a ghost the responder drops (as a NIC drops stale PSNs).
     */
    boolean senderCurrent(int src, int inc) {
        int p = procOfQpn(src);
        if (!isPeer(p)) {
            return false;
        }
        int e = qpEntry(p, src);
        int st = b.getIntVolatile(e + QP_STATE);
        return b.getIntVolatile(e + QP_QPN) == src && b.getInt(e + QP_INCARNATION) == inc
                && (st == QpState.RTS.ordinal() || st == QpState.SQD.ordinal());
    }

    /** The incarnation peer QP dqpn's entry shows now (0 for a QPN of no peer). */
    int incarnationOf(int dqpn) {
        int p = procOfQpn(dqpn);
        return isPeer(p) ? b.getIntVolatile(qpEntry(p, dqpn) + QP_INCARNATION) : 0;
    }

    /** The PD id of peer QP dqpn (after a successful {@link #checkQp}). */
    int pdOfQp(int dqpn) {
        return b.getInt(qpEntry(procOfQpn(dqpn), dqpn) + QP_PD);
    }

    /**
     * Resolve peer MR {@code rkey} (owned by the same process as {@code dqpn}, in PD {@code pdId},
     * granting {@code need}) into {@code w}: its file number, file offset, address, length and the
     * entry's epoch. Returns false on any mismatch or access violation, or when the entry's fields
     * are out of range. The window stays valid while {@link #mrCurrent} holds.
     */
    boolean resolveMr(int rkey, int dqpn, int pdId, int need, MrWindow w) {
        int p = procOfKey(rkey);
        if (rkey <= 0 || p != procOfQpn(dqpn) || !isPeer(p)) {
            return false;
        }
        int e = mrEntry(p, rkey);
        int epoch = b.getIntVolatile(e + MR_EPOCH);
        if (b.getIntVolatile(e + MR_KEY) != rkey) {
            return false;
        }
        int access = b.getInt(e + MR_ACCESS);
        int pd = b.getInt(e + MR_PD);
        int file = b.getInt(e + MR_FILE);
        long fileOff = b.getLong(e + MR_FILE_OFFSET);
        long length = b.getLong(e + MR_LENGTH);
        long address = b.getLong(e + MR_ADDRESS);
        if (b.getIntVolatile(e + MR_KEY) != rkey || b.getIntVolatile(e + MR_EPOCH) != epoch || pd != pdId
                || (access & need) == 0 || file < 0 || file >= MAX_FILES || fileOff < 0 || length < 0
                || fileOff > Long.MAX_VALUE - length) {
            return false;
        }
        w.set(rkey, dqpn, pdId, need, p, epoch, file, fileOff, address, length);
        return true;
    }

    /**
     * Where window {@code w}'s MR entry keeps its epoch: {@link #epoch} there is the per-WR check of
     * a run of writes through {@code w} once {@link #mrCurrent} held at the run's start (every
     * publish and clear of the entry bumps it).
     */
    int epochIndex(MrWindow w) {
        return mrEntry(w.proc, w.rkey) + MR_EPOCH;
    }

    /** The epoch word at {@code index} (an {@link #epochIndex}), read with acquire semantics. */
    int epoch(int index) {
        return b.getIntVolatile(index);
    }

    /**
     * Whether window {@code w}, resolved earlier in this engine run, still names the same
     * registration: the MR entry is in the epoch it was read in (every publish and clear bumps it,
     * so a deregistration or a new key shows) and the key is still published.
     */
    boolean mrCurrent(MrWindow w) {
        int e = mrEntry(w.proc, w.rkey);
        return b.getIntVolatile(e + MR_EPOCH) == w.epoch && b.getIntVolatile(e + MR_KEY) == w.rkey;
    }
}
