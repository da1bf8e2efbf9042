package dev.scalep.verbs.ibv;

import dev.scalep.verbs.ClosedException;

import java.util.concurrent.atomic.AtomicBoolean;

/** Base of every ibv object: one native handle, a closed flag, idempotent destruction. */
abstract class IbvResource {
    final IbvContext context;
    private final AtomicBoolean closed = new AtomicBoolean();

    IbvResource(IbvContext context) {
        this.context = context;
    }

    /** Throws {@link ClosedException} (no native call) when this object or its context is closed. */
    final void checkOpen() {
        if (closed.get()) {
            throw new ClosedException(toString());
        }
    }

    final boolean isClosed() {
        return closed.get();
    }

    /** Checks that no child is alive (throws EBUSY); called before the native destroy. */
    void checkNoChildren() {
    }

    /** The destroy verb; called once. */
    abstract void destroyNative();

    /** Unlinks from parents and accounting after a successful destroy. */
    abstract void unlink();

    /** Destroy unless already destroyed: children check, destroy verb, unlink. Idempotent. */
    final void destroy() {
        if (closed.get()) {
            return;
        }
        synchronized (this) {
            if (closed.get()) {
                return;
            }
            checkNoChildren();
            destroyNative();
            closed.set(true);
        }
        unlink();
    }
}
