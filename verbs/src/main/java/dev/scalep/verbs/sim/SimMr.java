package dev.scalep.verbs.sim;

import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.ProtectionDomain;

import java.lang.foreign.MemorySegment;

/**
 * A simulated memory region: lkey and rkey are both its id in the device's key table. The device
 * reads and writes {@link #segment()} directly.
 */
final class SimMr extends SimResource implements MemoryRegion, SlotTable.Entry {
    final SimPd pd;
    final SimPd basePd;
    final MemorySegment segment;
    final long address;
    final long length;
    final int access;
    private final int key;

    SimMr(SimPd pd, MemorySegment segment, int access, int key) {
        super(pd.ctx);
        this.pd = pd;
        this.basePd = pd.base();
        this.segment = segment;
        this.address = segment.address();
        this.length = segment.byteSize();
        this.access = access;
        this.key = key;
    }

    @Override
    public int simId() {
        return key;
    }

    /** Whether the region is still registered (the data path's check of a cached MR). */
    boolean live() {
        return !isClosed();
    }

    /** Whether [addr, addr+len) lies inside the region. */
    boolean contains(long addr, long len) {
        return addr >= address && len >= 0 && addr - address <= length - len;
    }

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public int lkey() {
        return key;
    }

    @Override
    public int rkey() {
        return key;
    }

    @Override
    public int access() {
        return access;
    }

    @Override
    public void deregister() {
        synchronized (pd.ctx.ctl) {
            checkOpen();
            destroy();
        }
    }

    @Override
    void release() {
        FabricDirectory d = pd.ctx.device.directory();
        if (d != null) {
            d.clearMr(key);
        }
        pd.ctx.device.mrs.release(this);
        pd.mrs.remove(this);
        pd.ctx.mrs.remove(this);
        pd.ctx.accounting.add(Accounting.MRS, -1);
        pd.ctx.accounting.add(Accounting.MEMORY, -Accounting.MR_BYTES);
    }

    @Override
    public String toString() {
        return "MR (lkey " + key + ", " + length + " bytes)";
    }
}
