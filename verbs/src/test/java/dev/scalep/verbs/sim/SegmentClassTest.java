package dev.scalep.verbs.sim;

import dev.scalep.verbs.Context;
import dev.scalep.verbs.ProtectionDomain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every memory the simulator's data path reads or writes is a segment of one implementation class,
 * the class of plain arena memory: shared-memory allocations on a fabric, a peer's files mapped
 * here and the fabric segment itself included. A mapped or heap segment reaching the shared copies
 * and accessors would make their compiled code depend on which class the JIT saw first
 * (docs/ARCHITECTURE.md, "One speed per configuration").
 */
@Timeout(60)
class SegmentClassTest {
    @Test
    void fabricMemoryIsPlainNativeMemory() {
        Class<?> plain;
        try (Arena a = Arena.ofConfined()) {
            plain = a.allocate(64).getClass();
        }
        SimDevice dev = SimDevice.mlx5("test-segclass-" + ProcessHandle.current().pid() + "-" + System.nanoTime()).retryTimeoutMillis(300);
        try (Context ctx = dev.open()) {
            assertTrue(dev.fabric() != null, "the device is on a fabric");
            ProtectionDomain pd = ctx.allocPd();
            MemorySegment shared = pd.allocate(1 << 16, 4096);
            assertEquals(plain, shared.getClass(), "PD memory on a fabric (a mapped file)");
            assertEquals(plain, shared.asSlice(64, 64).getClass(), "a slice of it");
            assertEquals(plain, dev.fabric().segment.getClass(), "the fabric segment");
            MemorySegment again = dev.sharedMemory().peer(dev.fabric().slot, 0);
            assertEquals(plain, again.getClass(), "a process's file mapped as a peer's");
            assertEquals(shared.byteSize(), 1 << 16);
        }
    }
}
