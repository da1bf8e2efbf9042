package dev.scalep.verbs.ibv;

import dev.scalep.verbs.TdSharing;
import dev.scalep.verbs.ThreadDomain;
import dev.scalep.verbs.ffm.Ops;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * An {@code ibv_td} (with, for {@link TdSharing#INDEPENDENT}, an unused partner TD that keeps its UAR
 * page to itself). The doorbell register it got is not observable through verbs: on mlx5
 * {@link #uarPage()} and {@link #uuar()} are what the driver's model implies ({@link Mlx5UarModel}),
 * elsewhere -1. Thread-safe.
 */
final class IbvTd extends IbvResource implements ThreadDomain {
    final MemorySegment td;
    private final MemorySegment partner;
    private final MemorySegment deallocFn;
    private final TdSharing sharing;
    private final List<IbvPd> parents = new ArrayList<>();
    private final int register;

    IbvTd(IbvContext context, MemorySegment td, MemorySegment partner, MemorySegment deallocFn, TdSharing sharing,
          int register) {
        super(context);
        this.td = td;
        this.partner = partner;
        this.deallocFn = deallocFn;
        this.sharing = sharing;
        this.register = register;
    }

    synchronized void addChild(IbvPd p) {
        parents.add(p);
    }

    synchronized void removeChild(IbvPd p) {
        parents.remove(p);
    }

    @Override
    public IbvContext context() {
        return context;
    }

    @Override
    public TdSharing sharing() {
        return sharing;
    }

    @Override
    public int uarPage() {
        return register < 0 ? -1 : register / 2;
    }

    @Override
    public int uuar() {
        return register;
    }

    @Override
    synchronized void checkNoChildren() {
        if (!parents.isEmpty()) {
            throw Check.busy("ibv_dealloc_td", context.name, toString(), parents);
        }
    }

    @Override
    void destroyNative() {
        int rc = Ops.destroy(deallocFn, td);
        if (rc != 0) {
            throw Check.fail("ibv_dealloc_td", rc, context.name, toString());
        }
        if (!partner.equals(MemorySegment.NULL)) {
            rc = Ops.destroy(deallocFn, partner);
            if (rc != 0) {
                throw Check.fail("ibv_dealloc_td", rc, context.name, "partner of " + this);
            }
        }
    }

    @Override
    void unlink() {
        synchronized (context) {
            context.tds.remove(this);
        }
        context.releaseTd(register);
        context.usage.add(Usage.Kind.TD, -1, 0);
    }

    @Override
    public void close() {
        destroy();
    }

    @Override
    public String toString() {
        return "TD 0x" + Long.toHexString(td.address()) + " (" + sharing + ") on " + context.name;
    }
}
