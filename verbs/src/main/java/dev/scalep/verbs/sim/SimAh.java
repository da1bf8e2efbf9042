package dev.scalep.verbs.sim;

import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpAddress;

/** A simulated address handle; its {@link #handle()} is its id in the device's AH table. */
final class SimAh extends SimResource implements AddressHandle, SlotTable.Entry {
    final SimPd pd;
    final QpAddress destination;
    private final int id;

    SimAh(SimPd pd, QpAddress destination, int id) {
        super(pd.ctx);
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

    @Override
    void release() {
        pd.ctx.device.ahs.release(this);
        pd.ahs.remove(this);
        pd.ctx.ahs.remove(this);
    }

    @Override
    public String toString() {
        return "AH " + id + " → " + destination;
    }
}
