package dev.scalep.verbs.ibv;

import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.QpAddress;

import java.lang.foreign.MemorySegment;

/** An {@code ibv_ah}. Its {@link #handle()} is the native pointer stored in {@code wr.ud.ah}. Thread-safe. */
final class IbvAh extends IbvResource implements AddressHandle {
    private final IbvPd pd;
    final MemorySegment ah;
    private final QpAddress destination;

    IbvAh(IbvPd pd, MemorySegment ah, QpAddress destination) {
        super(pd.context);
        this.pd = pd;
        this.ah = ah;
        this.destination = destination;
    }

    @Override
    public IbvPd pd() {
        return pd;
    }

    @Override
    public QpAddress destination() {
        return destination;
    }

    @Override
    public long handle() {
        checkOpen();
        return ah.address();
    }

    @Override
    void destroyNative() {
        int rc = context.lib.destroyAh(ah);
        if (rc != 0) {
            throw Check.fail("ibv_destroy_ah", rc, context.name, toString());
        }
    }

    @Override
    void unlink() {
        pd.removeChild(this);
        synchronized (context) {
            context.ahs.remove(this);
        }
    }

    @Override
    public void close() {
        destroy();
    }

    @Override
    public String toString() {
        return "AH to " + destination + " on " + context.name;
    }
}
