package dev.scalep.verbs;

import dev.scalep.verbs.ffm.Structs;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * A reusable, allocation-free postlist of send work requests: {@code capacity} native
 * {@code struct ibv_send_wr} records, each with room for {@code maxSge} {@code struct ibv_sge}
 * entries, chained through {@code next} in the order they were added. One
 * {@link QueuePair#postSend(SendWorkRequests)} posts the whole chain with one doorbell;
 * {@link QueuePair#postSend(SendWorkRequests, int, int)} posts a sub-chain of a pre-initialised
 * pool ({@link #fill}) so that a ring of reusable WRs is posted in chains without rewriting it.
 *
 * <p>The records are laid out exactly as libibverbs expects, so the {@code ibv} provider hands
 * {@link #segment()} to {@code ibv_post_send} as is; the simulated device reads the same bytes.
 *
 * <p>Not thread-safe: one thread fills and posts a list. The list owns its native memory and frees
 * it in {@link #close()}.
 */
public final class SendWorkRequests extends WorkRequestList {
    private static final long WR = Structs.IBV_SEND_WR.byteSize();


    /** A list of {@code capacity} work requests with up to {@code maxSge} SGEs each. */
    public SendWorkRequests(int capacity, int maxSge) {
        super(capacity, maxSge, WR, Structs.SEND_WR_ID, Structs.SEND_NEXT, Structs.SEND_SG_LIST, Structs.SEND_NUM_SGE);
    }

    /**
     * Make records {@code [0, count)} the list without clearing them: a fixed pool of WRs is
     * initialised once (here or by {@link #add}, then with the setters) and reposted as chains with
     * {@link QueuePair#postSend(SendWorkRequests, int, int)} without being rewritten. Links record
     * {@code i} to {@code i + 1} for {@code i < count - 1} and ends the chain at {@code count - 1};
     * every other field keeps what was last written (all zero in a record never written: opcode
     * {@code RDMA_WRITE}, no SGEs, unsignaled). Returns this.
     */
    public SendWorkRequests fill(int count) {
        Objects.checkFromIndexSize(0, count, capacity() + 1);
        for (int i = 0; i < count; i++) {
            wrs.set(JAVA_LONG_UNALIGNED, WR * i + Structs.SEND_NEXT, i + 1 < count ? wrs.address() + WR * (i + 1) : 0L);
        }
        this.count = count;
        badIndex(-1);
        return this;
    }

    /**
     * Make the first {@code n} records of a pool linked by {@link #fill} the list, so that
     * {@link QueuePair#postSend(SendWorkRequests)} posts them as one chain: record {@code n - 1}
     * ends the chain and the record that ended the previous prefix is linked to its successor
     * again. Nothing is written when {@code n} is the current count (a pool reposted in equal
     * prefixes). Returns this.
     */
    public SendWorkRequests prefix(int n) {
        Objects.checkFromIndexSize(0, n, capacity() + 1);
        int c = count;
        if (n != c) {
            if (c > 0 && c < capacity()) {
                wrs.set(JAVA_LONG_UNALIGNED, WR * (c - 1) + Structs.SEND_NEXT, wrs.address() + WR * c);
            }
            if (n > 0 && n < capacity()) {
                wrs.set(JAVA_LONG_UNALIGNED, WR * (n - 1) + Structs.SEND_NEXT, 0L);
            }
            count = n;
        }
        badIndex(-1);
        return this;
    }

    /** Replace the opcode of work request {@code i}. */
    public SendWorkRequests opcode(int i, Opcode opcode) {
        wrs.set(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_OPCODE, opcode.code);
        return this;
    }

    /** Set the number of SGEs of work request {@code i} to {@code n <= maxSge} (entries keep their contents). */
    public SendWorkRequests numSge(int i, int n) {
        if (n < 0 || n > maxSge()) {
            throw new IllegalArgumentException("work request " + i + ": " + n + " SGEs, at most " + maxSge());
        }
        wrs.set(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_NUM_SGE, n);
        return this;
    }

    /** The {@code next} link of record {@code i} (0 at the end of a chain). */
    public long next(int i) {
        return wrs.get(JAVA_LONG_UNALIGNED, WR * i + Structs.SEND_NEXT);
    }

    /**
     * Append a work request with no SGEs; returns its index, or -1 when the list is full.
     * {@code flags} are {@link SendFlags} bits.
     */
    public int add(long wrId, Opcode opcode, int flags) {
        int i = appendRecord(wrId);
        if (i < 0) {
            return -1;
        }
        long base = WR * i;
        wrs.set(JAVA_INT_UNALIGNED, base + Structs.SEND_OPCODE, opcode.code);
        wrs.set(JAVA_INT_UNALIGNED, base + Structs.SEND_FLAGS, flags);
        wrs.set(JAVA_INT_UNALIGNED, base + Structs.SEND_IMM, 0);
        wrs.set(JAVA_LONG_UNALIGNED, base + Structs.SEND_RDMA_REMOTE_ADDR, 0L);
        wrs.set(JAVA_LONG_UNALIGNED, base + Structs.SEND_RDMA_RKEY, 0L);
        wrs.set(JAVA_LONG_UNALIGNED, base + Structs.SEND_SCALEP_SRD_AH, 0L);
        wrs.set(JAVA_LONG_UNALIGNED, base + Structs.SEND_SCALEP_SRD_QPN, 0L);
        return i;
    }

    /** Append a scatter/gather entry to work request {@code i}. */
    public SendWorkRequests sge(int i, long addr, int length, int lkey) {
        appendSge(i, addr, length, lkey, "work request");
        return this;
    }

    /** Append an SGE covering {@code length} bytes at {@code offset} of a memory region. */
    public SendWorkRequests sge(int i, MemoryRegion mr, long offset, int length) {
        return sge(i, mr.address() + offset, length, mr.lkey());
    }

    /** Replace the wr_id of work request {@code i} (pre-initialised records reused across posts). */
    public SendWorkRequests wrId(int i, long wrId) {
        wrs.set(JAVA_LONG_UNALIGNED, WR * i + Structs.SEND_WR_ID, wrId);
        return this;
    }

    /**
     * Give work requests {@code [from, from + n)} the wr_ids {@code first}, {@code first + 1}, ...:
     * one loop of stores and nothing else, which the JIT compiles with the segment's checks hoisted
     * out of it (a wr_id stored among other work per record was checked at every record).
     */
    public SendWorkRequests wrIds(int from, int n, long first) {
        MemorySegment w = wrs;
        for (int i = 0; i < n; i++) {
            w.set(JAVA_LONG_UNALIGNED, WR * (from + i) + Structs.SEND_WR_ID, first + i);
        }
        return this;
    }

    /** Overwrite SGE {@code j} (which must already exist) of work request {@code i}. */
    public SendWorkRequests sgeAt(int i, int j, long addr, int length, int lkey) {
        if (j < 0 || j >= numSge(i)) {
            throw new IndexOutOfBoundsException("work request " + i + " has " + numSge(i) + " SGEs, not " + (j + 1));
        }
        putSge(i, j, addr, length, lkey);
        return this;
    }

    /**
     * Set the SGEs of work request {@code i} in one go: a header of {@code headerLength} bytes at
     * {@code headerAddr} (none when 0) and a payload of {@code length} bytes at {@code addr} (none
     * when 0), both with {@code lkey}. Replaces what the record held; the caller checked that two
     * SGEs fit when both are given. The send paths' one writer of SGEs.
     */
    public SendWorkRequests sges(int i, long headerAddr, int headerLength, long addr, int length, int lkey) {
        int n = 0;
        if (headerLength > 0) {
            putSge(i, n++, headerAddr, headerLength, lkey);
        }
        if (length > 0) {
            putSge(i, n++, addr, length, lkey);
        }
        wrs.set(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_NUM_SGE, n);
        return this;
    }

    /** Remote address and rkey of an RDMA write/read. */
    public SendWorkRequests rdma(int i, long remoteAddr, int rkey) {
        long base = WR * i;
        wrs.set(JAVA_LONG_UNALIGNED, base + Structs.SEND_RDMA_REMOTE_ADDR, remoteAddr);
        wrs.set(JAVA_INT_UNALIGNED, base + Structs.SEND_RDMA_RKEY, rkey);
        return this;
    }

    /**
     * The {@code wr.atomic} part of an atomic work request {@code i}: the 8-byte aligned remote word
     * at {@code remoteAddr} in the MR with {@code rkey}, the compare value ({@code CMP_AND_SWP}) or
     * the addend ({@code FETCH_AND_ADD}) and the swap value (CAS only; ignored by FAA). Operands are
     * host-order 64-bit values, as verbs takes them; the original word lands, in host order, in the
     * request's one 8-byte local SGE. Overlaps {@link #rdma} and {@link #ud}.
     */
    public SendWorkRequests atomic(int i, long remoteAddr, int rkey, long compareAdd, long swap) {
        long base = WR * i;
        wrs.set(JAVA_LONG_UNALIGNED, base + Structs.SEND_ATOMIC_REMOTE_ADDR, remoteAddr);
        wrs.set(JAVA_LONG_UNALIGNED, base + Structs.SEND_ATOMIC_COMPARE_ADD, compareAdd);
        wrs.set(JAVA_LONG_UNALIGNED, base + Structs.SEND_ATOMIC_SWAP, swap);
        wrs.set(JAVA_LONG_UNALIGNED, base + Structs.SEND_ATOMIC_RKEY, Integer.toUnsignedLong(rkey));
        return this;
    }

    /** The remote word's address of atomic work request {@code i}. */
    public long atomicRemoteAddr(int i) {
        return wrs.get(JAVA_LONG_UNALIGNED, WR * i + Structs.SEND_ATOMIC_REMOTE_ADDR);
    }

    /** The rkey of atomic work request {@code i}. */
    public int atomicRkey(int i) {
        return wrs.get(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_ATOMIC_RKEY);
    }

    /** The compare value (CAS) or addend (FAA) of atomic work request {@code i}. */
    public long compareAdd(int i) {
        return wrs.get(JAVA_LONG_UNALIGNED, WR * i + Structs.SEND_ATOMIC_COMPARE_ADD);
    }

    /** The swap value of atomic work request {@code i} (CAS). */
    public long swap(int i) {
        return wrs.get(JAVA_LONG_UNALIGNED, WR * i + Structs.SEND_ATOMIC_SWAP);
    }

    /** Immediate data (host order here; stored in network order as verbs requires). */
    public SendWorkRequests imm(int i, int imm) {
        wrs.set(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_IMM, Integer.reverseBytes(imm));
        return this;
    }

    /** Destination of a UD or SRD work request. Overlaps {@link #rdma}: for SRD RDMA use {@link #srdRdma}. */
    public SendWorkRequests ud(int i, AddressHandle ah, int remoteQpn, int remoteQkey) {
        return ud(i, ah.handle(), remoteQpn, remoteQkey);
    }

    /**
     * {@link #ud(int, AddressHandle, int, int)} with the AH as its native handle (a send path keeps
     * a table of handles; 0 means none: the provider refuses the request).
     */
    public SendWorkRequests ud(int i, long ahHandle, int remoteQpn, int remoteQkey) {
        long base = WR * i;
        wrs.set(JAVA_LONG_UNALIGNED, base + Structs.SEND_UD_AH, ahHandle);
        wrs.set(JAVA_INT_UNALIGNED, base + Structs.SEND_UD_REMOTE_QPN, remoteQpn);
        wrs.set(JAVA_INT_UNALIGNED, base + Structs.SEND_UD_REMOTE_QKEY, remoteQkey);
        return this;
    }

    /**
     * An RDMA read or write on an SRD QP: remote address and rkey go to {@code wr.rdma} as for
     * {@link #rdma}, and the destination (AH, remote QPN, QKEY) to scalep-private fields in the
     * record's {@code bind_mw} area ({@link Structs#SEND_SCALEP_SRD_AH}), which libibverbs does not
     * read for these opcodes; providers pass them on as {@code ibv_wr_set_ud_addr} does on EFA.
     */
    public SendWorkRequests srdRdma(int i, AddressHandle ah, int remoteQpn, int remoteQkey, long remoteAddr, int rkey) {
        rdma(i, remoteAddr, rkey);
        return srdDestination(i, ah.handle(), remoteQpn, remoteQkey);
    }

    /**
     * The SRD destination of an RDMA request whose {@link #rdma} part is already set, with the AH as
     * its native handle (0 means none: the provider refuses the request). See {@link #srdRdma}.
     */
    public SendWorkRequests srdDestination(int i, long ahHandle, int remoteQpn, int remoteQkey) {
        long base = WR * i;
        wrs.set(JAVA_LONG_UNALIGNED, base + Structs.SEND_SCALEP_SRD_AH, ahHandle);
        wrs.set(JAVA_INT_UNALIGNED, base + Structs.SEND_SCALEP_SRD_QPN, remoteQpn);
        wrs.set(JAVA_INT_UNALIGNED, base + Structs.SEND_SCALEP_SRD_QKEY, remoteQkey);
        return this;
    }

    /** The AH handle set by {@link #srdRdma}, 0 when none. */
    public long srdAhHandle(int i) {
        return wrs.get(JAVA_LONG_UNALIGNED, WR * i + Structs.SEND_SCALEP_SRD_AH);
    }

    /** The remote QPN set by {@link #srdRdma}. */
    public int srdRemoteQpn(int i) {
        return wrs.get(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_SCALEP_SRD_QPN);
    }

    /** The QKEY set by {@link #srdRdma}. */
    public int srdRemoteQkey(int i) {
        return wrs.get(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_SCALEP_SRD_QKEY);
    }

    /** Replace the flags of work request {@code i}. */
    public SendWorkRequests flags(int i, int flags) {
        wrs.set(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_FLAGS, flags);
        return this;
    }

    public long wrId(int i) {
        return wrs.get(JAVA_LONG_UNALIGNED, WR * i + Structs.SEND_WR_ID);
    }

    /** The {@code ibv_wr_opcode} value of work request {@code i}. */
    public int opcode(int i) {
        return wrs.get(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_OPCODE);
    }

    public int flags(int i) {
        return wrs.get(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_FLAGS);
    }

    public int numSge(int i) {
        return wrs.get(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_NUM_SGE);
    }

    /** Sum of the SGE lengths of work request {@code i}. */
    public long length(int i) {
        long sum = 0;
        for (int j = 0, n = numSge(i); j < n; j++) {
            sum += Integer.toUnsignedLong(sgeLength(i, j));
        }
        return sum;
    }

    public long remoteAddr(int i) {
        return wrs.get(JAVA_LONG_UNALIGNED, WR * i + Structs.SEND_RDMA_REMOTE_ADDR);
    }

    public int rkey(int i) {
        return wrs.get(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_RDMA_RKEY);
    }

    /** Immediate data in host order. */
    public int imm(int i) {
        return Integer.reverseBytes(wrs.get(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_IMM));
    }

    public long ahHandle(int i) {
        return wrs.get(JAVA_LONG_UNALIGNED, WR * i + Structs.SEND_UD_AH);
    }

    public int remoteQpn(int i) {
        return wrs.get(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_UD_REMOTE_QPN);
    }

    public int remoteQkey(int i) {
        return wrs.get(JAVA_INT_UNALIGNED, WR * i + Structs.SEND_UD_REMOTE_QKEY);
    }
}
