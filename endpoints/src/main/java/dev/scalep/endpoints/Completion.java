package dev.scalep.endpoints;

import dev.scalep.threading.RoutedCompletion;
import dev.scalep.verbs.WcOpcode;
import dev.scalep.verbs.WcStatus;

/**
 * One completion of an {@link Endpoint}: a holder the application allocates once and passes to
 * every {@link Endpoint#poll(Completion)} (nothing is allocated per completion). A send completion
 * carries the id the application gave the request ({@link #wrId()}); a receive completion names the
 * receive slot it filled. On an error status only {@link #wrId()}, {@link #status()} and
 * {@link #isRecv()} are meaningful, and the endpoint's QP has stopped ({@link Endpoint#qpState()}).
 * Not thread-safe.
 */
public final class Completion {
    private long wrId;
    private int status;
    private int opcode;
    private int byteLen;
    private int imm;
    private int flags;

    public Completion() {
    }

    void copyFrom(RoutedCompletion c) {
        wrId = c.wrId();
        status = c.status();
        opcode = c.opcode();
        byteLen = c.byteLen();
        imm = c.imm();
        flags = c.flags();
    }

    void copyFrom(long wrId, int status, int opcode, int byteLen, int imm, int flags) {
        this.wrId = wrId;
        this.status = status;
        this.opcode = opcode;
        this.byteLen = byteLen;
        this.imm = imm;
        this.flags = flags;
    }

    /** The request's id (a send), or the receive slot (a receive). */
    public long wrId() {
        return wrId;
    }

    /** A {@link WcStatus} value; {@link WcStatus#SUCCESS} when the operation completed. */
    public int status() {
        return status;
    }

    /** Whether the operation completed successfully. */
    public boolean ok() {
        return status == WcStatus.SUCCESS;
    }

    /** A {@link WcOpcode} value (undefined on error). */
    public int opcode() {
        return opcode;
    }

    /** Bytes received (receives) or transferred. */
    public int byteLen() {
        return byteLen;
    }

    /** The immediate data, when {@link #hasImm()}. */
    public int imm() {
        return imm;
    }

    public boolean hasImm() {
        return (flags & RoutedCompletion.WITH_IMM) != 0;
    }

    /** A receive completion (a send or write-with-immediate of the peer arrived). */
    public boolean isRecv() {
        return (flags & RoutedCompletion.RECV) != 0;
    }

    @Override
    public String toString() {
        return (isRecv() ? "recv" : "send") + " wrId=" + wrId + " status=" + WcStatus.name(status)
                + " opcode=" + opcode + " len=" + byteLen + (hasImm() ? " imm=" + imm : "");
    }
}
