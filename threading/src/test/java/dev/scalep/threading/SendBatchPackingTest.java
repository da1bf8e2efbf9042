package dev.scalep.threading;

import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.SendFlags;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link SendBatch} keeps two 32-bit fields in each long of a request's packed form: every field
 * must come back as staged, whatever its sign and whichever setter wrote its neighbour last, and a
 * copy (the combining QP's hand-off) must carry all of them, the atomic operands included.
 */
class SendBatchPackingTest {
    private static final int MIN = Integer.MIN_VALUE;
    private static final int MAX = Integer.MAX_VALUE;

    @Test
    void everyFieldComesBackWhateverItsSignAndItsNeighbours() {
        SendBatch b = new SendBatch(3);
        int i = b.add(Long.MIN_VALUE, Opcode.RDMA_WRITE_WITH_IMM, SendFlags.SIGNALED | SendFlags.INLINE, -1L, -1, MIN,
                Long.MAX_VALUE, -1, MIN, MAX);
        b.header(i, 0x8000_0000_0000_0000L, -2 & MAX);
        b.imm(i, -7);
        b.remote(i, -3L, MAX);
        b.peer(i, -5);
        b.flags(i, -1);
        assertEquals(Long.MIN_VALUE, b.wrId(i));
        assertEquals(Opcode.RDMA_WRITE_WITH_IMM, b.op(i));
        assertEquals(-1, b.flags(i));
        assertEquals(-1L, b.localAddr(i));
        assertEquals(-1, b.length(i));
        assertEquals(MIN, b.lkey(i));
        assertEquals(0x8000_0000_0000_0000L, b.headerAddr(i));
        assertEquals(-2 & MAX, b.headerLength(i));
        assertEquals(-3L, b.remoteAddr(i));
        assertEquals(MAX, b.rkey(i));
        assertEquals(-7, b.imm(i));
        assertEquals(-5, b.peer(i));
        assertEquals(0, b.compareAdd(i), "not an atomic: no operands");
        assertEquals(1, b.headers());

        int a = b.add(3, Opcode.ATOMIC_CMP_AND_SWP, 0);
        b.local(a, 64, 8, -9).remote(a, 128, -11).atomic(a, Long.MIN_VALUE, -1L);
        assertEquals(-9, b.lkey(a));
        assertEquals(8, b.length(a));
        assertEquals(-11, b.rkey(a));
        assertEquals(0, b.imm(a));
        assertEquals(Long.MIN_VALUE, b.compareAdd(a));
        assertEquals(-1L, b.swap(a));

        SendBatch c = new SendBatch(2);
        c.copy(b, i);
        c.copy(b, a);
        for (int k = 0; k < 2; k++) {
            int from = k == 0 ? i : a;
            assertEquals(b.wrId(from), c.wrId(k));
            assertEquals(b.op(from), c.op(k));
            assertEquals(b.flags(from), c.flags(k));
            assertEquals(b.localAddr(from), c.localAddr(k));
            assertEquals(b.length(from), c.length(k));
            assertEquals(b.lkey(from), c.lkey(k));
            assertEquals(b.headerAddr(from), c.headerAddr(k));
            assertEquals(b.headerLength(from), c.headerLength(k));
            assertEquals(b.remoteAddr(from), c.remoteAddr(k));
            assertEquals(b.rkey(from), c.rkey(k));
            assertEquals(b.imm(from), c.imm(k));
            assertEquals(b.peer(from), c.peer(k));
            assertEquals(b.compareAdd(from), c.compareAdd(k));
            assertEquals(b.swap(from), c.swap(k));
        }
        assertEquals(1, c.headers());
    }

    @Test
    void aRecordReusedForAnAtomicStartsWithZeroOperands() {
        SendBatch b = new SendBatch(1);
        int i = b.add(1, Opcode.ATOMIC_FETCH_AND_ADD, 0);
        b.atomic(i, 42, 43);
        b.clear();
        i = b.add(2, Opcode.ATOMIC_CMP_AND_SWP, 0);
        assertEquals(0, b.compareAdd(i));
        assertEquals(0, b.swap(i));
        assertEquals(0, b.peer(i));
        assertEquals(0, b.headerLength(i));
    }
}
