package dev.scalep.verbs.sim;

import java.lang.foreign.MemorySegment;

/**
 * One mlx5 micro-UAR (doorbell register, "bfreg"): an 8-byte doorbell word plus a BlueFlame buffer
 * written with two alternating 256-byte halves, as the driver does. A shared (medium-latency or
 * dynamic shared) register carries a real lock that every doorbell ring on it takes; dedicated
 * registers (low latency, thread domain, dynamic dedicated) and the high-latency uUAR 0 ring
 * without a lock. uUAR 0 never does BlueFlame.
 */
final class SimUuar {
    /** How the register is classed. */
    enum Kind {
        HIGH_LATENCY, MEDIUM, LOW_LATENCY, THREAD_DOMAIN, DYNAMIC_DEDICATED, DYNAMIC_SHARED;

        boolean shared() {
            return this == MEDIUM || this == DYNAMIC_SHARED || this == HIGH_LATENCY;
        }
    }

    final int index;
    final int page;
    final Kind kind;
    final SimLock lock;
    final boolean blueFlame;
    /** The UAR page this register lives in; BlueFlame writes go through its write-combining engine. */
    final SimUarPage uarPage;
    /** QPs assigned (control path, under the context lock). */
    int qps;
    private long doorbell;
    private long rings;
    private int bfHalf;

    SimUuar(int index, SimUarPage page, Kind kind) {
        this.index = index;
        this.page = page.index;
        this.uarPage = page;
        this.kind = kind;
        this.lock = kind == Kind.MEDIUM || kind == Kind.DYNAMIC_SHARED ? new SimLock() : null;
        this.blueFlame = kind != Kind.HIGH_LATENCY;
    }

    /**
     * Ring the doorbell for a QP: store the producer counter in the doorbell word and, for a
     * BlueFlame write, copy the first 64 bytes of the WQE into the current buffer half. The caller
     * holds {@link #lock} when it is non-null.
     */
    void ring(int qpn, int producer, MemorySegment wqe, long wqeOffset, boolean blueFlameWrite) {
        doorbell = ((long) qpn << 32) | (producer & 0xffffffffL);
        rings++;
        if (blueFlameWrite) {
            uarPage.blueFlame(index & 1, bfHalf, wqe, wqeOffset);
            bfHalf ^= 1;
        }
    }

    /** Doorbells rung (read for diagnostics; exact only for locked or single-owner registers). */
    long rings() {
        return rings;
    }

    long lastDoorbell() {
        return doorbell;
    }
}
