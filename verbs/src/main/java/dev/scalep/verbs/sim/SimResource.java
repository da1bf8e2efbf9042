package dev.scalep.verbs.sim;

import dev.scalep.verbs.ClosedException;

/**
 * Base of every simulated verbs object a context owns (PD, TD, CQ, QP, SRQ, MR, AH): the closed
 * flag, the closed check, and the one destruction sequence. {@link #close} (the application's
 * call) takes the context lock, refuses while a child is alive ({@link #checkNoChildren}) and
 * destroys; {@link #destroy} (the context's close, children first) marks the object closed and
 * {@link #release releases} it, once. The flag is volatile: the data path reads it through
 * {@link #isClosed} without the lock.
 */
abstract class SimResource {
    final SimContext ctx;
    private volatile boolean closed;

    SimResource(SimContext ctx) {
        this.ctx = ctx;
    }

    /** Whether the object was destroyed (any thread). */
    final boolean isClosed() {
        return closed;
    }

    /** Throws {@link ClosedException} naming this object when it was destroyed. */
    void checkOpen() {
        if (closed) {
            throw new ClosedException(toString());
        }
    }

    /** Throws the destroy verb's EBUSY {@code VerbsException} while a child is alive (context lock held). */
    void checkNoChildren() {
    }

    /** Unlink from parents, tables and accounting and free what the object holds; called once, context lock held. */
    abstract void release();

    /** Destroy unless already destroyed, refusing while a child is alive. Idempotent. */
    public void close() {
        synchronized (ctx.ctl) {
            if (closed) {
                return;
            }
            checkNoChildren();
            destroy();
        }
    }

    /** Unconditional destroy (context lock held; children already gone). Idempotent. */
    final void destroy() {
        if (closed) {
            return;
        }
        closed = true;
        release();
    }
}
