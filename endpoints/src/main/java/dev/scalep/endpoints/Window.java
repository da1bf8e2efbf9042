package dev.scalep.endpoints;

import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.ffm.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Memory every rank of a world can reach with one-sided operations ({@link RankEndpoint#put},
 * {@link RankEndpoint#get}, {@link RankEndpoint#putNotify}, the 64-bit atomics): this rank's part is
 * {@link #local()}, every rank's part has its own {@link #size(int) size}. Created collectively by
 * every rank of the world in the same order: {@link WorldEndpoints#allocateWindow(long)} (the
 * runtime allocates the same size on every rank, the SHMEM way) or
 * {@link WorldEndpoints#exposeWindow(MemorySegment)} (the application's memory; sizes may differ).
 *
 * <p>The memory is registered with local write, remote read and remote write (and remote atomic
 * where the device has atomics) on every protection domain this rank's endpoints use (one per
 * context, or per thread at the levels that give each thread its own PD), so every endpoint of
 * the rank can use it as the local side of an operation and every endpoint of another rank can
 * target it; the rkeys travel as a {@link WindowHandle} per rank.
 *
 * <p>Lifetime: {@link #close()} is collective. From the call on, this rank refuses new operations
 * on the window; the call waits until no endpoint of the rank has an operation in flight that
 * names it (the calling thread's own endpoint is flushed; other threads must flush theirs), then
 * all ranks agree through the all-gather, and only when every rank is quiet is the memory
 * deregistered (and freed, for an allocated window). A rank whose endpoints stay busy makes the
 * close fail on every rank with {@link IllegalStateException}, the window stays registered (never
 * freed under an operation) and close can be called again. An operation through a mapped part
 * ({@link WorldEndpoints#mapWindows}) is complete at return and never in flight: the close does
 * not wait for it, and one that meets the close fails with {@link IllegalStateException}.
 */
public final class Window implements AutoCloseable {
    private final WorldEndpoints owner;
    final int id;
    final int sequence;
    private final MemorySegment local;
    final long localAddress;
    /** Per rank: base address and length of its part. */
    final long[] address;
    final long[] length;
    /** Keys for this rank's QPs: rkey of rank r's part for QP index k at {@code r * qps + k}. */
    final int[] rkey;
    /** lkey of this rank's part for manager ordinal m, QP index k at {@code m * qps + k}. */
    final int[] lkey;
    final int qps;
    private final WindowHandle[] handles;
    final List<MemoryRegion> mrs;
    /** The PD that owns an allocated window's memory (null for application memory). */
    final ProtectionDomain memoryPd;
    /**
     * Per rank, its part mapped into this process ({@link WorldEndpoints#mapWindows}), reached by
     * loads, stores and atomic instructions; null for a rank whose part goes through the endpoints.
     * Views in {@link #views}, as {@link #localView}.
     */
    final MemorySegment[] mapped;
    /**
     * This rank's part as the mapped operations reach it (their source, destination or result):
     * a view in {@link #views}, so that once {@link #closeViews} returned no thread is inside a
     * copy or atomic on it, and any later access throws.
     */
    final MemorySegment localView;
    /**
     * The scope of the views the mapped operations use. Closing a shared arena is a handshake with
     * every thread: an access to one of its segments either completed before it, or fails. That is
     * what keeps a mapped operation, complete at return and so never in flight, off memory a close
     * frees, without a fence on each operation (an endpoint operation marks the window instead:
     * {@link RankEndpoint#touched}).
     */
    private final Arena views = Arena.ofShared();
    private boolean viewsClosed;
    private volatile boolean open = true;
    boolean freed;

    Window(WorldEndpoints owner, int id, int sequence, MemorySegment local, WindowHandle[] handles, int[] rkey, int[] lkey,
           int qps, List<MemoryRegion> mrs, ProtectionDomain memoryPd, MemorySegment[] mapped) {
        this.owner = owner;
        this.id = id;
        this.sequence = sequence;
        this.local = local;
        this.localAddress = local.address();
        this.handles = handles;
        this.address = new long[handles.length];
        this.length = new long[handles.length];
        for (int r = 0; r < handles.length; r++) {
            address[r] = handles[r].address();
            length[r] = handles[r].length();
        }
        this.rkey = rkey;
        this.lkey = lkey;
        this.qps = qps;
        this.mrs = mrs;
        this.memoryPd = memoryPd;
        this.localView = Native.view(local, views);
        this.mapped = new MemorySegment[mapped.length];
        for (int r = 0; r < mapped.length; r++) {
            this.mapped[r] = mapped[r] == null ? null : Native.view(mapped[r], views);
        }
    }

    /**
     * End every view of the mapped operations (after {@link #markClosed}): returns when no thread
     * is inside an access through one, and every later access throws IllegalStateException. Once.
     */
    synchronized void closeViews() {
        if (!viewsClosed) {
            viewsClosed = true;
            views.close();
        }
    }

    /** {@code segment} (a mapping of a part of this window) as a view that ends with {@link #closeViews}. */
    MemorySegment view(MemorySegment segment) {
        return Native.view(segment, views);
    }

    /** Whether this rank reaches rank {@code rank}'s part with loads, stores and atomic instructions. */
    public boolean mapped(int rank) {
        return mapped[rank] != null;
    }

    /** The window's id in its world (the same on every rank; ids of closed windows are reused). */
    public int id() {
        return id;
    }

    /** This rank's part of the window. */
    public MemorySegment local() {
        return local;
    }

    /** Bytes of rank {@code rank}'s part. */
    public long size(int rank) {
        return length[rank];
    }

    /** Bytes of this rank's part. */
    public long size() {
        return local.byteSize();
    }

    /** What rank {@code rank} published for this window (address, length, rkeys). */
    public WindowHandle handle(int rank) {
        return handles[rank];
    }

    /** Whether operations may name this window (false from the first {@link #close()} on). */
    public boolean isOpen() {
        return open;
    }

    void markClosed() {
        open = false;
    }

    /**
     * Throws when rank {@code rank}'s part does not hold {@code [offset, offset + len)}: the
     * message names the operation, rank, window, offset, length and the part's size. Nothing is
     * allocated unless it throws.
     */
    void checkRange(String op, int rank, long offset, long len) {
        long size = length[rank];
        if (offset < 0 || len < 0 || offset > size - len) {
            throw new IllegalArgumentException(op + ": offset " + offset + " length " + len + " is outside window " + id
                    + " of rank " + rank + " (" + size + " bytes; nothing posted)");
        }
    }

    /** Throws {@link IllegalStateException} when the window is closed (after {@link #close()} began). */
    void checkOpen(String op) {
        if (!open) {
            throw new IllegalStateException(op + ": window " + id + " is closed (nothing posted)");
        }
    }

    /** Collective close with a 30 s wait for this rank's endpoints; see the class comment. */
    @Override
    public void close() {
        close(30_000_000_000L);
    }

    /**
     * Collective close, waiting up to {@code timeoutNanos} for this rank's endpoints to finish the
     * operations that name the window. Idempotent once it succeeded.
     */
    public void close(long timeoutNanos) {
        owner.closeWindow(this, timeoutNanos);
    }

    @Override
    public String toString() {
        return "window " + id + " (" + local.byteSize() + " bytes here" + (open ? "" : ", closed") + ")";
    }
}
