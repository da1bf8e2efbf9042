package dev.scalep.verbs.ibv;

import dev.scalep.verbs.ClosedException;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ffm.IbvStructs;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/** An {@code ibv_mr}. The caller keeps the registered segment alive until deregistration. Thread-safe. */
final class IbvMr extends IbvResource implements MemoryRegion {
    private final IbvPd pd;
    private final MemorySegment mr;
    private final MemorySegment segment;
    private final int access;
    private final int lkey;
    private final int rkey;

    IbvMr(IbvPd pd, MemorySegment mr, MemorySegment segment, int access) {
        super(pd.context);
        this.pd = pd;
        this.mr = mr;
        this.segment = segment;
        this.access = access;
        this.lkey = mr.get(JAVA_INT, IbvStructs.MR_LKEY);
        this.rkey = mr.get(JAVA_INT, IbvStructs.MR_RKEY);
    }

    @Override
    public IbvPd pd() {
        return pd;
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public long address() {
        return segment.address();
    }

    @Override
    public long length() {
        return segment.byteSize();
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    @Override
    public int access() {
        return access;
    }

    @Override
    public void deregister() {
        if (isClosed()) {
            throw new ClosedException(toString());
        }
        destroy();
    }

    @Override
    void destroyNative() {
        int rc = context.lib.deregMr(mr);
        if (rc != 0) {
            throw Check.fail("ibv_dereg_mr", rc, context.name, toString());
        }
    }

    @Override
    void unlink() {
        pd.removeChild(this);
        synchronized (context) {
            context.mrs.remove(this);
        }
        context.usage.add(Usage.Kind.MR, -1, Usage.MR_BYTES);
    }

    @Override
    public void close() {
        destroy();
    }

    @Override
    public String toString() {
        return "MR lkey=0x" + Integer.toHexString(lkey) + " length=" + segment.byteSize() + " on " + context.name;
    }
}
