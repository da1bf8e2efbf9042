package dev.scalep.threading;

import dev.scalep.verbs.WcStatus;

/**
 * One completion as the router delivers it to its owner (the endpoint layer copies it into the
 * application's {@code Completion}, a type of the exported endpoint API): a mutable holder the owner reuses for every poll (no
 * allocation). {@link #wrId()} is the id the owner staged. On an error status only
 * {@code wrId}, {@code status}, {@code qpNum} and {@link #isRecv()} are meaningful. Not thread-safe.
 */
public final class RoutedCompletion {
    /** Flag bit: the completion carries immediate data. */
    public static final int WITH_IMM = 1;
    /** Flag bit: a receive completion. */
    public static final int RECV = 2;

    long wrId;
    int status;
    int opcode;
    int byteLen;
    int imm;
    int qpNum;
    int flags;

    /** Set every field (the router and the rings fill pooled records with it). */
    void set(long wrId, int status, int opcode, int byteLen, int imm, int qpNum, int flags) {
        this.wrId = wrId;
        this.status = status;
        this.opcode = opcode;
        this.byteLen = byteLen;
        this.imm = imm;
        this.qpNum = qpNum;
        this.flags = flags;
    }

    /** Copy every field of {@code c} into this record. */
    void copyFrom(RoutedCompletion c) {
        wrId = c.wrId;
        status = c.status;
        opcode = c.opcode;
        byteLen = c.byteLen;
        imm = c.imm;
        qpNum = c.qpNum;
        flags = c.flags;
    }

    public long wrId() {
        return wrId;
    }

    /** A {@link WcStatus} value. */
    public int status() {
        return status;
    }

    public boolean ok() {
        return status == WcStatus.SUCCESS;
    }

    /** A {@link dev.scalep.verbs.WcOpcode} value (undefined on error). */
    public int opcode() {
        return opcode;
    }

    public int byteLen() {
        return byteLen;
    }

    public int imm() {
        return imm;
    }

    public boolean hasImm() {
        return (flags & WITH_IMM) != 0;
    }

    public boolean isRecv() {
        return (flags & RECV) != 0;
    }

    public int qpNum() {
        return qpNum;
    }

    public int flags() {
        return flags;
    }

    @Override
    public String toString() {
        return (isRecv() ? "recv" : "send") + " wrId=" + wrId + " status=" + WcStatus.name(status)
                + " opcode=" + opcode + " len=" + byteLen + (hasImm() ? " imm=" + imm : "") + " qp=" + qpNum;
    }
}
