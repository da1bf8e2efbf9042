package dev.scalep.verbs.sim;

import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;

/** A simulated address handle; its {@link #handle()} is its id in the device's AH table. */
final class SimAh implements AddressHandle, SlotTable.Entry {
    final SimPd pd;
    final QpAddress destination;
    private final int id;
    private volatile boolean closed;

    SimAh(SimPd pd, QpAddress destination, int id) {
        this.pd = pd;
        this.destination = destination;
        this.id = id;
    }

    @Override
    public int simId() {
        return id;
    }

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public QpAddress destination() {
        return destination;
    }

    @Override
    public long handle() {
        return id;
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        synchronized (pd.ctx.ctl) {
            destroy();
        }
    }

    void destroy() {
        if (closed) {
            return;
        }
        closed = true;
        pd.ctx.device.ahs.release(this);
        pd.ahs.remove(this);
        pd.ctx.ahs.remove(this);
    }

    @Override
    public String toString() {
        return "AH " + id + " → " + destination;
    }
}
