package dev.scalep.endpoints.srd;

import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.WorkCompletions;

import java.util.Arrays;

/**
 * Polls one shared completion queue and hands each completion to the handler registered for its
 * QP number (UCCL's shared-CQ demultiplexing). The QPN table is an open-addressed int map sized at
 * construction; {@link #poll()} allocates nothing. Not thread-safe: one thread polls and registers.
 */
public final class CqDemux implements AutoCloseable {
    /** Receives the completions of one QP. */
    @FunctionalInterface
    public interface Handler {
        void completion(WorkCompletions wcs, int i);
    }

    private final CompletionQueue cq;
    private final WorkCompletions wcs;
    private final int[] keys;
    private final Handler[] handlers;
    private final int mask;
    private long unmatched;

    /** Demultiplex {@code cq} for up to {@code maxQps} QPs, polling {@code batch} completions at a time. */
    public CqDemux(CompletionQueue cq, int maxQps, int batch) {
        this.cq = cq;
        this.wcs = new WorkCompletions(batch);
        int n = Integer.highestOneBit(Math.max(2, maxQps) * 2 - 1) * 2;
        keys = new int[n];
        Arrays.fill(keys, -1);
        handlers = new Handler[n];
        mask = n - 1;
    }

    public CompletionQueue cq() {
        return cq;
    }

    /** Route completions of {@code qpNum} to {@code h}. */
    public void register(int qpNum, Handler h) {
        int i = slot(qpNum);
        if (keys[i] == -1) {
            int used = 0;
            for (int k : keys) {
                used += k == -1 ? 0 : 1;
            }
            if (used * 2 >= keys.length) {
                throw new IllegalStateException("CQ demux full: " + used + " QPs registered");
            }
        }
        keys[i] = qpNum;
        handlers[i] = h;
    }

    private int slot(int qpn) {
        int i = (qpn * 0x9E3779B9) >>> 16 & mask;
        while (keys[i] != -1 && keys[i] != qpn) {
            i = (i + 1) & mask;
        }
        return i;
    }

    /** Poll once and dispatch; returns completions polled, or a negative errno from the CQ. */
    public int poll() {
        int n = cq.poll(wcs);
        for (int i = 0; i < n; i++) {
            int s = slot(wcs.qpNum(i));
            Handler h = handlers[s];
            if (keys[s] == -1 || h == null) {
                unmatched++;
            } else {
                h.completion(wcs, i);
            }
        }
        return n;
    }

    /** Completions for QPs nobody registered (dropped). */
    public long unmatched() {
        return unmatched;
    }

    @Override
    public void close() {
        wcs.close();
    }
}
