package dev.scalep.verbs.ibv;

import dev.scalep.verbs.Device;
import dev.scalep.verbs.Errno;
import dev.scalep.verbs.VerbsProvider;
import dev.scalep.verbs.ffm.LibIbverbs;
import dev.scalep.verbs.ffm.Native;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The real-verbs provider ({@code ibv}): every device {@code ibv_get_device_list} returns, driven
 * through libibverbs over FFM. Devices are enumerated once, on first use; the device list is kept for
 * the life of the process (contexts are opened from it). When libibverbs cannot be loaded or finds no
 * device, {@link #devices()} is empty and {@link #unavailableReason()} says what was tried.
 * Thread-safe.
 */
public final class IbvProvider implements VerbsProvider {
    private static volatile Enumeration enumeration;

    private record Enumeration(List<Device> devices, String reason) {
    }

    @Override
    public String name() {
        return "ibv";
    }

    @Override
    public List<Device> devices() {
        return enumerate().devices;
    }

    @Override
    public String unavailableReason() {
        return enumerate().reason;
    }

    private static Enumeration enumerate() {
        Enumeration e = enumeration;
        if (e == null) {
            synchronized (IbvProvider.class) {
                e = enumeration;
                if (e == null) {
                    enumeration = e = doEnumerate();
                }
            }
        }
        return e;
    }

    private static final String ALTERNATIVES = " The simulated devices sim:mlx5 and sim:efa are available"
            + " without RDMA hardware; real verbs run on SoftRoCE inside a VM (verbs/src/test/rxe/run).";

    private static Enumeration doEnumerate() {
        LibIbverbs lib = LibIbverbs.get();
        if (lib == null) {
            return new Enumeration(List.of(), "No real RDMA devices: " + LibIbverbs.loadFailure() + "." + ALTERNATIVES);
        }
        MemorySegment list;
        int n;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment st = Native.callState(a);
            MemorySegment num = a.allocate(JAVA_INT);
            list = lib.getDeviceList(st, num);
            if (list.equals(MemorySegment.NULL)) {
                int errno = Native.errno(st);
                String why = errno == Errno.ENOSYS
                        ? " (the kernel has no RDMA subsystem / ib_uverbs here)" : "";
                return new Enumeration(List.of(), "No real RDMA devices: loaded " + LibIbverbs.SONAME
                        + ", but ibv_get_device_list failed with errno=" + errno + " (" + Errno.name(errno) + ")"
                        + why + "." + ALTERNATIVES);
            }
            n = num.get(JAVA_INT, 0);
        }
        if (n == 0) {
            lib.freeDeviceList(list);
            return new Enumeration(List.of(), "No real RDMA devices: loaded " + LibIbverbs.SONAME
                    + " and ibv_get_device_list returned an empty list (no NIC, no rdma_rxe/siw link, or no"
                    + " provider library for the NIC; check `ibv_devices` and /sys/class/infiniband)." + ALTERNATIVES);
        }
        MemorySegment arr = list.reinterpret(ADDRESS.byteSize() * n);
        List<Device> devices = new ArrayList<>();
        StringBuilder failures = new StringBuilder();
        for (int i = 0; i < n; i++) {
            MemorySegment dev = arr.getAtIndex(ADDRESS, i);
            String name = lib.deviceName(dev);
            try {
                devices.add(IbvDevice.probe(lib, dev, name));
            } catch (RuntimeException ex) {
                failures.append(failures.isEmpty() ? "" : "; ").append(name).append(": ").append(ex.getMessage());
            }
        }
        String reason = devices.isEmpty()
                ? "No usable real RDMA devices: " + failures + "." + ALTERNATIVES : null;
        return new Enumeration(List.copyOf(devices), reason);
    }
}
