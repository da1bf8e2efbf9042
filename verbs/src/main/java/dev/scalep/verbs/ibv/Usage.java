package dev.scalep.verbs.ibv;

import dev.scalep.verbs.ResourceUsage;

/**
 * Live-object accounting of the ibv provider, per context and per device (a context forwards every
 * change to its device, which also keeps the peak). UAR pages and uUARs are reported as 0: with
 * rdma-core's dynamic UAR allocation they are not observable through verbs. {@code memoryBytes} is an
 * estimate from the research's mlx5 per-resource sizes (CTX 256 KiB, PD 144 B, MR 144 B, QP 80 KiB
 * and CQ 9 KiB at a reference depth of {@value #REF_DEPTH}, QP and CQ scaled by depth).
 * Thread-safe (control path only).
 */
final class Usage {
    static final int REF_DEPTH = 128;
    static final long CTX_BYTES = 256 * 1024;
    static final long PD_BYTES = 144;
    static final long MR_BYTES = 144;
    static final long QP_BYTES = 80 * 1024;
    static final long CQ_BYTES = 9 * 1024;

    private final Usage parent;
    private long contexts, pds, mrs, qps, cqs, srqs, tds, memory;
    private ResourceUsage peak = ResourceUsage.ZERO;

    Usage(Usage parent) {
        this.parent = parent;
    }

    static long qpBytes(int sendWr, int recvWr) {
        return Math.max(1, QP_BYTES * (sendWr + recvWr) / (2L * REF_DEPTH));
    }

    static long cqBytes(int cqe) {
        return Math.max(1, CQ_BYTES * cqe / REF_DEPTH);
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
                Math.max(peak.srqs(), now.srqs()), Math.max(peak.tds(), now.tds()), 0, 0, 0,
                Math.max(peak.memoryBytes(), now.memoryBytes()));
        if (parent != null) {
            parent.add(kind, delta, bytes);
        }
    }

    synchronized ResourceUsage snapshot() {
        return new ResourceUsage(contexts, pds, mrs, qps, cqs, srqs, tds, 0, 0, 0, memory);
    }

    synchronized ResourceUsage peak() {
        return peak;
    }
}
