package dev.scalep.verbs.sim;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.ContextOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * {@link dev.scalep.verbs.QueuePair#mapPeer} in one process: the peer's MR is handed out as memory
 * the CPU reaches only where the NIC would accept the same request (peer QP, key, range, access);
 * across processes the window suite runs on it ({@code WindowMpirunTest}, mapped levels).
 */
@Timeout(30)
class MapPeerTest {
    private static final int RW = Access.REMOTE_WRITE | Access.REMOTE_READ;

    @Test
    void theConnectedPeersMemoryIsMappedAndIsTheMemoryItself() {
        try (SimPair p = SimPair.rc(SimDevice.newMlx5(), ContextOptions.DEFAULTS, 8)) {
            MemorySegment m = p.a.mapPeer(p.b.qpNum(), p.mrB.address() + 64, 128, p.mrB.rkey(), RW);
            assertNotNull(m);
            assertEquals(128, m.byteSize());
            m.set(JAVA_LONG, 8, 0x1234_5678_9abcL);
            assertEquals(0x1234_5678_9abcL, p.memB.get(JAVA_LONG, 72), "a store through the mapping is in the peer's MR");
            p.memB.set(JAVA_LONG, 64, 42L);
            assertEquals(42L, m.get(JAVA_LONG, 0), "and the peer's stores show through it");
        }
    }

    @Test
    void whatTheNicWouldRefuseIsNotMapped() {
        try (SimPair p = SimPair.rc(SimDevice.newMlx5(), ContextOptions.DEFAULTS, 8)) {
            long base = p.mrB.address();
            int key = p.mrB.rkey();
            assertNull(p.a.mapPeer(p.b.qpNum(), base, 65537, key, RW), "beyond the MR");
            assertNull(p.a.mapPeer(p.b.qpNum(), base - 8, 16, key, RW), "before the MR");
            assertNull(p.a.mapPeer(p.b.qpNum(), base, 64, p.mrA.rkey(), RW), "another PD's key");
            assertNull(p.a.mapPeer(p.b.qpNum(), base, 64, key + 1000, RW), "no such key");
            assertNull(p.a.mapPeer(p.b.qpNum(), base, 64, key, Access.REMOTE_ATOMIC), "the MR grants no atomics");
            assertNull(p.a.mapPeer(p.a.qpNum(), base, 64, key, RW), "not the connected peer QP");
            assertNull(p.a.mapPeer(p.b.qpNum(), base, 0, key, RW), "an empty range");
            assertNull(p.a.mapPeer(p.b.qpNum(), base, 64, key, Access.LOCAL_WRITE), "not a remote access");
            p.mrB.close();
            assertNull(p.a.mapPeer(p.b.qpNum(), base, 64, key, RW), "a deregistered MR");
        }
    }
}
