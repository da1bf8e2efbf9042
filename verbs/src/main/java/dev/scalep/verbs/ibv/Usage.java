package dev.scalep.verbs.ibv;

import dev.scalep.verbs.MemoryModel;
import dev.scalep.verbs.ResourceUsage;

/**
 * Live-object accounting of the ibv provider, per context and per device (a context forwards every
 * change to its device, which also keeps the peak). Memory comes from {@link MemoryModel}, the model the
 * simulated devices use too. UAR pages and uUARs are not observable through verbs: the context adds
 * what the mlx5 driver's model implies ({@link Mlx5UarModel}, reported as derived), other devices have none.
 * Thread-safe (control path only).
 */
final class Usage {
    static final long CTX_BYTES = MemoryModel.CTX_BYTES;
    static final long PD_BYTES = MemoryModel.PD_BYTES;
    static final long MR_BYTES = MemoryModel.MR_BYTES;

    private final Usage parent;
    private long contexts, pds, mrs, qps, cqs, srqs, tds, memory;
    private ResourceUsage peak = ResourceUsage.ZERO;

    Usage(Usage parent) {
        this.parent = parent;
    }

    static long qpBytes(int sendWr, int recvWr) {
        return MemoryModel.qpBytes(sendWr, recvWr);
    }

    static long cqBytes(int cqe) {
        return MemoryModel.cqBytes(cqe);
    }

    enum Kind { CONTEXT, PD, MR, QP, CQ, SRQ, TD, NONE }

    synchronized void add(Kind kind, int delta, long bytes) {
        switch (kind) {
            case CONTEXT -> contexts += delta;
            case PD -> pds += delta;
            case MR -> mrs += delta;
            case QP -> qps += delta;
            case CQ -> cqs += delta;
            case SRQ -> srqs += delta;
            case TD -> tds += delta;
            case NONE -> { }
        }
        memory += delta * bytes;
        ResourceUsage now = snapshot();
        peak = new ResourceUsage(Math.max(peak.contexts(), now.contexts()), Math.max(peak.pds(), now.pds()),
                Math.max(peak.mrs(), now.mrs()), Math.max(peak.qps(), now.qps()), Math.max(peak.cqs(), now.cqs()),
                Math.max(peak.srqs(), now.srqs()), Math.max(peak.tds(), now.tds()), 0, 0, 0, 0,
                Math.max(peak.memoryBytes(), now.memoryBytes()));
        if (parent != null) {
            parent.add(kind, delta, bytes);
        }
    }

    synchronized ResourceUsage snapshot() {
        return new ResourceUsage(contexts, pds, mrs, qps, cqs, srqs, tds, 0, 0, 0, 0, memory);
    }

    synchronized ResourceUsage peak() {
        return peak;
    }
}
