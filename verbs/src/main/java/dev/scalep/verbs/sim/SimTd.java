package dev.scalep.verbs.sim;

import dev.scalep.verbs.Context;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.TdSharing;
import dev.scalep.verbs.ThreadDomain;
import dev.scalep.verbs.VerbsException;

import java.util.ArrayList;
import java.util.List;

/** A simulated mlx5 thread domain holding one dedicated, lock-free doorbell register. */
final class SimTd extends SimResource implements ThreadDomain {
    final TdSharing sharing;
    final SimUuar reg;
    final List<SimPd> parentDomains = new ArrayList<>();

    SimTd(SimContext ctx, TdSharing sharing, SimUuar reg) {
        super(ctx);
        this.sharing = sharing;
        this.reg = reg;
    }

    @Override
    public Context context() {
        return ctx;
    }

    @Override
    public TdSharing sharing() {
        return sharing;
    }

    @Override
    public int uarPage() {
        return reg.page;
    }

    @Override
    public int uuar() {
        return reg.index;
    }

    @Override
    void checkNoChildren() {
        if (!parentDomains.isEmpty()) {
            throw new VerbsException("ibv_dealloc_td", Errno.EBUSY, ctx.device.name(),
                    "thread domain (uUAR " + reg.index + ") is used by " + parentDomains);
        }
    }

    @Override
    void release() {
        ctx.freeTd(this);
    }

    @Override
    public String toString() {
        return "thread domain (page " + reg.page + ", uUAR " + reg.index + ")";
    }
}
