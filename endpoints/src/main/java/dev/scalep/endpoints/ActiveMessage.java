package dev.scalep.endpoints;

import java.lang.foreign.MemorySegment;

/**
 * An arrived active message as its {@link ActiveMessageHandler} sees it: one object per thread
 * slot, refilled for every message, valid only during the handler's call. The payload is
 * {@link #length()} bytes at {@link #offset()} of {@link #data()}, a read-only view of the
 * runtime's receive ring that the next messages overwrite: copy out what must be kept
 * ({@link #copyTo}).
 */
public final class ActiveMessage {
    private final ActiveMessages owner;
    private int source;
    private int sourceSlot;
    private int id;
    private long header0;
    private long header1;
    private MemorySegment data;
    private long offset;
    private long length;

    ActiveMessage(ActiveMessages owner) {
        this.owner = owner;
    }

    void set(int source, int sourceSlot, int id, long header0, long header1, MemorySegment data, long offset, long length) {
        this.source = source;
        this.sourceSlot = sourceSlot;
        this.id = id;
        this.header0 = header0;
        this.header1 = header1;
        this.data = data;
        this.offset = offset;
        this.length = length;
    }

    /** The rank that sent it. */
    public int source() {
        return source;
    }

    /**
     * The thread slot of {@link #source()} that sent it: this slot's own index unless the world was
     * opened with {@link SlotAddressing#ANY_SLOT} and the sender named this slot.
     */
    public int sourceSlot() {
        return sourceSlot;
    }

    /** The handler id it was sent to. */
    public int id() {
        return id;
    }

    /** The first header word. */
    public long header0() {
        return header0;
    }

    /** The second header word. */
    public long header1() {
        return header1;
    }

    /** A read-only view holding the payload at {@link #offset()}; do not keep it past the handler's return. */
    public MemorySegment data() {
        return data;
    }

    /** Where the payload starts in {@link #data()}. */
    public long offset() {
        return offset;
    }

    /** Payload bytes (0 to {@link ActiveMessages#maxPayload()}). */
    public long length() {
        return length;
    }

    /** Copy the payload to {@code destination} at {@code at}. */
    public void copyTo(MemorySegment destination, long at) {
        MemorySegment.copy(data, offset, destination, at, length);
    }

    /**
     * Send an active message back to the slot that sent this one ({@link #source()},
     * {@link #sourceSlot()}): as
     * {@link ActiveMessages#send(int, int, long, long, MemorySegment, long, long)}, so it returns
     * {@link ActiveMessages#COMPLETED}, {@link ActiveMessages#BACK_PRESSURED} (no credit towards the
     * source now; the handler must keep what it needs and reply later) or a negative errno.
     */
    public int reply(int handler, long h0, long h1, MemorySegment payload, long at, long bytes) {
        return owner.send(source, sourceSlot, handler, h0, h1, payload, at, bytes);
    }

    /** A reply without payload. */
    public int reply(int handler, long h0, long h1) {
        return owner.send(source, sourceSlot, handler, h0, h1, MemorySegment.NULL, 0, 0);
    }

    @Override
    public String toString() {
        return "ActiveMessage[source=" + source + ", slot=" + sourceSlot + ", id=" + id + ", header=" + header0 + "/" + header1 + ", length="
                + length + "]";
    }
}
