package dev.scalep.verbs.sim;

import dev.scalep.verbs.Opcode;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The simulated NIC's atomic unit: a 64-bit fetch-and-add or compare-and-swap on an 8-byte aligned
 * word of registered memory, executed as the CPU's atomic instruction on that word (a locked
 * {@code xadd} / {@code cmpxchg} on x86). Because the word is the memory itself (an MR's segment in
 * process, the peer's shared file mapped here across processes), every atomic on it from any QP,
 * thread or process of the simulated fabric is atomic against every other one. As on a NIC
 * ({@code IBV_ATOMIC_HCA}), nothing makes it atomic against plain CPU stores or RDMA writes to the
 * word. Operands and results are host-order 64-bit values, as verbs defines them.
 */
final class RemoteAtomics {
    /** Aligned 64-bit access to (segment, offset): the handle fails on a misaligned word (checked first). */
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();

    private RemoteAtomics() {
    }

    /** Whether a remote address is the 8-byte aligned start of a word (verbs requires it; else REM_INV_REQ_ERR). */
    static boolean aligned(long remoteAddr) {
        return (remoteAddr & 7) == 0;
    }

    /**
     * Apply atomic {@code o} to the word at {@code offset} of {@code mem} (aligned, inside: checked by
     * the caller) and return the word's original value: FAA adds {@code compareAdd} (wrapping);
     * CAS stores {@code swap} when the word equals {@code compareAdd}.
     */
    static long apply(MemorySegment mem, long offset, Opcode o, long compareAdd, long swap) {
        if (o == Opcode.ATOMIC_FETCH_AND_ADD) {
            return (long) WORD.getAndAdd(mem, offset, compareAdd);
        }
        return (long) WORD.compareAndExchange(mem, offset, compareAdd, swap);
    }
}
