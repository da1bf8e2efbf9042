package dev.scalep.verbs.sim;

import dev.scalep.verbs.Errno;
import dev.scalep.verbs.RecvWorkRequests;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;

import java.util.Arrays;

/**
 * A receive queue (a QP's own or an SRQ's): a ring of receive WQEs copied out of the caller's
 * {@link RecvWorkRequests} at post time. {@link #lock} serialises posting threads with the
 * simulated NIC consuming receives from any sender's thread (the model's stand-in for the RQ
 * lock and for the hardware's own ordering). Senders that found it empty and wait forever
 * (rnr_retry = 7) register as waiters and are nudged when receives arrive.
 */
final class SimRecvQueue {
    final SimLock lock = new SimLock();
    final int capacity;
    final int maxSge;
    private final long[] wrId;
    private final int[] numSge;
    private final long[] sgeAddr;
    private final int[] sgeLen;
    private final int[] sgeLkey;
    private int head;
    private volatile int count;
    private long posted;
    private QpRequester[] waiters = new QpRequester[4];
    private int nWaiters;

    SimRecvQueue(int capacity, int maxSge) {
        this.capacity = Math.max(capacity, 0);
        this.maxSge = Math.max(maxSge, 1);
        int n = Math.max(capacity, 1);
        wrId = new long[n];
        numSge = new int[n];
        sgeAddr = new long[n * this.maxSge];
        sgeLen = new int[n * this.maxSge];
        sgeLkey = new int[n * this.maxSge];
    }

    /** Receives posted and not yet consumed (racy read allowed). */
    int count() {
        return count;
    }

    long posted() {
        return posted;
    }

    /**
     * Copy the list into the ring. Returns 0, EINVAL (too many SGEs) or ENOMEM (full) with
     * {@code badIndex} set; WRs before it are posted. Wakes waiting senders.
     */
    int post(RecvWorkRequests wrs) {
        int n = wrs.count();
        wrs.badIndex(-1);
        int rc = 0;
        int i = 0;
        lock.lock();
        try {
            for (; i < n; i++) {
                int ns = wrs.numSge(i);
                if (ns > maxSge) {
                    rc = Errno.EINVAL;
                    break;
                }
                if (count == capacity) {
                    rc = Errno.ENOMEM;
                    break;
                }
                int slot = head + count;
                if (slot >= capacity) {
                    slot -= capacity;
                }
                wrId[slot] = wrs.wrId(i);
                numSge[slot] = ns;
                int b = slot * maxSge;
                for (int j = 0; j < ns; j++) {
                    sgeAddr[b + j] = wrs.sgeAddr(i, j);
                    sgeLen[b + j] = wrs.sgeLength(i, j);
                    sgeLkey[b + j] = wrs.sgeLkey(i, j);
                }
                count = count + 1;
                posted++;
            }
        } finally {
            lock.unlock();
        }
        if (rc != 0) {
            wrs.badIndex(i);
        }
        if (i > 0) {
            wakeWaiters();
        }
        return rc;
    }

    private void wakeWaiters() {
        int n;
        lock.lock();
        try {
            n = nWaiters;
        } finally {
            lock.unlock();
        }
        for (int k = 0; k < n; k++) {
            QpRequester w;
            lock.lock();
            try {
                if (nWaiters == 0) {
                    return;
                }
                w = waiters[--nWaiters];
                waiters[nWaiters] = null;
            } finally {
                lock.unlock();
            }
            w.nudge();
        }
    }

    /** Register a sender waiting for a receive (caller holds {@link #lock}). */
    void addWaiter(QpRequester qp) {
        for (int i = 0; i < nWaiters; i++) {
            if (waiters[i] == qp) {
                return;
            }
        }
        if (nWaiters == waiters.length) {
            waiters = Arrays.copyOf(waiters, nWaiters * 2);
        }
        waiters[nWaiters++] = qp;
    }

    /** The oldest receive's ring slot, or -1 when empty (caller holds {@link #lock}). */
    int peek() {
        return count == 0 ? -1 : head;
    }

    /** Consume the oldest receive (caller holds {@link #lock}). */
    void pop() {
        head = head + 1 == capacity ? 0 : head + 1;
        count = count - 1;
    }

    long wrId(int slot) {
        return wrId[slot];
    }

    int numSge(int slot) {
        return numSge[slot];
    }

    long sgeAddr(int slot, int j) {
        return sgeAddr[slot * maxSge + j];
    }

    int sgeLen(int slot, int j) {
        return sgeLen[slot * maxSge + j];
    }

    int sgeLkey(int slot, int j) {
        return sgeLkey[slot * maxSge + j];
    }

    /** Total bytes the receive at {@code slot} can take. */
    long capacityOf(int slot) {
        long sum = 0;
        int b = slot * maxSge;
        for (int j = 0, n = numSge[slot]; j < n; j++) {
            sum += Integer.toUnsignedLong(sgeLen[b + j]);
        }
        return sum;
    }

    /** Complete every posted receive with WR_FLUSH_ERR on {@code cq}, in order (takes the lock). */
    void flush(SimCq cq, int qpn) {
        lock.lock();
        try {
            while (count > 0) {
                cq.push(wrId[head], WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, 0, false, qpn, 0);
                pop();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Drop every posted receive without completions (RESET) and forget waiters. */
    void clear() {
        lock.lock();
        try {
            head = 0;
            count = 0;
            for (int i = 0; i < nWaiters; i++) {
                waiters[i] = null;
            }
            nWaiters = 0;
        } finally {
            lock.unlock();
        }
    }
}
