package dev.scalep.verbs.ffm;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static dev.scalep.verbs.ffm.Native.CAPTURE_ERRNO;
import static dev.scalep.verbs.ffm.Native.rethrow;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Downcalls to the symbols {@code libibverbs.so.1} exports, resolved once when the library is first
 * needed ({@link #get()}) and cached. Calls that report failure through {@code errno} take a
 * call-state segment first ({@link Native#callState}); read it with {@link Native#errno}. Calls that
 * return an errno value directly do not. Thread-safe; pointers are passed as raw segments.
 */
public final class LibIbverbs {
    /** The library name {@code dlopen} resolves. */
    public static final String SONAME = "libibverbs.so.1";

    private static final class Holder {
        static final LibIbverbs INSTANCE;
        static final String FAILURE;
        static {
            LibIbverbs lib = null;
            String failure = null;
            try {
                lib = new LibIbverbs(Native.library(SONAME));
            } catch (IllegalArgumentException | IllegalStateException | UnsatisfiedLinkError e) {
                failure = "loading " + SONAME + " failed (" + e.getMessage()
                        + "); install rdma-core's libibverbs1 and a provider package (ibverbs-providers)";
            }
            INSTANCE = lib;
            FAILURE = failure;
        }
    }

    /** The loaded library, or {@code null} when it cannot be loaded (see {@link #loadFailure()}). */
    public static LibIbverbs get() {
        return Holder.INSTANCE;
    }

    /** Why {@link #get()} is {@code null}, or {@code null} when the library loaded. */
    public static String loadFailure() {
        return Holder.FAILURE;
    }

    private final MethodHandle getDeviceList;
    private final MethodHandle freeDeviceList;
    private final MethodHandle getDeviceName;
    private final MethodHandle openDevice;
    private final MethodHandle closeDevice;
    private final MethodHandle queryDevice;
    private final MethodHandle queryPort;
    private final MethodHandle queryGid;
    private final MethodHandle queryGidEx;
    private final MethodHandle allocPd;
    private final MethodHandle deallocPd;
    private final MethodHandle regMr;
    private final MethodHandle deregMr;
    private final MethodHandle createCompChannel;
    private final MethodHandle destroyCompChannel;
    private final MethodHandle createCq;
    private final MethodHandle destroyCq;
    private final MethodHandle getCqEvent;
    private final MethodHandle ackCqEvents;
    private final MethodHandle createSrq;
    private final MethodHandle destroySrq;
    private final MethodHandle createQp;
    private final MethodHandle modifyQp;
    private final MethodHandle queryQp;
    private final MethodHandle destroyQp;
    private final MethodHandle qpToQpEx;
    private final MethodHandle createAh;
    private final MethodHandle destroyAh;
    private final MethodHandle wcStatusStr;
    private final MethodHandle getAsyncEvent;
    private final MethodHandle ackAsyncEvent;

    private LibIbverbs(SymbolLookup lib) {
        FunctionDescriptor pP = FunctionDescriptor.of(ADDRESS, ADDRESS);
        FunctionDescriptor iP = FunctionDescriptor.of(JAVA_INT, ADDRESS);
        FunctionDescriptor pPP = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS);
        getDeviceList = Native.require(lib, "ibv_get_device_list", pP, CAPTURE_ERRNO);
        freeDeviceList = Native.require(lib, "ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
        getDeviceName = Native.require(lib, "ibv_get_device_name", pP);
        openDevice = Native.require(lib, "ibv_open_device", pP, CAPTURE_ERRNO);
        closeDevice = Native.require(lib, "ibv_close_device", iP, CAPTURE_ERRNO);
        queryDevice = Native.require(lib, "ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        queryPort = Native.require(lib, "ibv_query_port",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS));
        queryGid = Native.require(lib, "ibv_query_gid",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS), CAPTURE_ERRNO);
        queryGidEx = Native.bind(lib, "_ibv_query_gid_ex", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT,
                JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG)).orElse(null);
        allocPd = Native.require(lib, "ibv_alloc_pd", pP, CAPTURE_ERRNO);
        deallocPd = Native.require(lib, "ibv_dealloc_pd", iP);
        regMr = Native.require(lib, "ibv_reg_mr",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), CAPTURE_ERRNO);
        deregMr = Native.require(lib, "ibv_dereg_mr", iP);
        createCompChannel = Native.require(lib, "ibv_create_comp_channel", pP, CAPTURE_ERRNO);
        destroyCompChannel = Native.require(lib, "ibv_destroy_comp_channel", iP, CAPTURE_ERRNO);
        createCq = Native.require(lib, "ibv_create_cq",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
        destroyCq = Native.require(lib, "ibv_destroy_cq", iP);
        getCqEvent = Native.require(lib, "ibv_get_cq_event",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), CAPTURE_ERRNO);
        ackCqEvents = Native.require(lib, "ibv_ack_cq_events", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        createSrq = Native.require(lib, "ibv_create_srq", pPP, CAPTURE_ERRNO);
        destroySrq = Native.require(lib, "ibv_destroy_srq", iP);
        createQp = Native.require(lib, "ibv_create_qp", pPP, CAPTURE_ERRNO);
        modifyQp = Native.require(lib, "ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        queryQp = Native.require(lib, "ibv_query_qp",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
        destroyQp = Native.require(lib, "ibv_destroy_qp", iP);
        qpToQpEx = Native.require(lib, "ibv_qp_to_qp_ex", pP);
        createAh = Native.require(lib, "ibv_create_ah", pPP, CAPTURE_ERRNO);
        destroyAh = Native.require(lib, "ibv_destroy_ah", iP);
        wcStatusStr = Native.require(lib, "ibv_wc_status_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        getAsyncEvent = Native.require(lib, "ibv_get_async_event",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), CAPTURE_ERRNO);
        ackAsyncEvent = Native.require(lib, "ibv_ack_async_event", FunctionDescriptor.ofVoid(ADDRESS));
    }

    /** {@code ibv_get_async_event(ctx, event)}: 0, or -1 with errno (EAGAIN on a non-blocking async_fd). */
    public int getAsyncEvent(MemorySegment st, MemorySegment ctx, MemorySegment event) {
        try {
            return (int) getAsyncEvent.invokeExact(st, ctx, event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_ack_async_event(event)}. */
    public void ackAsyncEvent(MemorySegment event) {
        try {
            ackAsyncEvent.invokeExact(event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_get_device_list(&num)}; NULL with errno on failure. */
    public MemorySegment getDeviceList(MemorySegment st, MemorySegment num) {
        try {
            return (MemorySegment) getDeviceList.invokeExact(st, num);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void freeDeviceList(MemorySegment list) {
        try {
            freeDeviceList.invokeExact(list);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_get_device_name} as a Java string. */
    public String deviceName(MemorySegment device) {
        try {
            MemorySegment s = (MemorySegment) getDeviceName.invokeExact(device);
            return s.equals(MemorySegment.NULL) ? "?" : s.reinterpret(256).getString(0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public MemorySegment openDevice(MemorySegment st, MemorySegment device) {
        try {
            return (MemorySegment) openDevice.invokeExact(st, device);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_close_device}: 0, or -1 with errno. */
    public int closeDevice(MemorySegment st, MemorySegment ctx) {
        try {
            return (int) closeDevice.invokeExact(st, ctx);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_query_device}: 0 or an errno. */
    public int queryDevice(MemorySegment ctx, MemorySegment attr) {
        try {
            return (int) queryDevice.invokeExact(ctx, attr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The exported (legacy) {@code ibv_query_port}: fills the first 48 bytes of {@code ibv_port_attr}. */
    public int queryPort(MemorySegment ctx, int port, MemorySegment attr) {
        try {
            return (int) queryPort.invokeExact(ctx, (byte) port, attr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ibv_query_gid_ex} (the exported {@code _ibv_query_gid_ex}, rdma-core ≥ v32): 0, or an
     * errno (ENODATA for an empty entry); -1 with {@code ENOSYS} semantics when the library lacks it.
     */
    public int queryGidEx(MemorySegment ctx, int port, int index, MemorySegment entry) {
        if (queryGidEx == null) {
            return -1;
        }
        try {
            return (int) queryGidEx.invokeExact(ctx, port, index, entry, 0, entry.byteSize());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_query_gid}: 0, or nonzero with errno. */
    public int queryGid(MemorySegment st, MemorySegment ctx, int port, int index, MemorySegment gid) {
        try {
            return (int) queryGid.invokeExact(st, ctx, (byte) port, index, gid);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public MemorySegment allocPd(MemorySegment st, MemorySegment ctx) {
        try {
            return (MemorySegment) allocPd.invokeExact(st, ctx);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_dealloc_pd}: 0 or an errno. */
    public int deallocPd(MemorySegment pd) {
        return callInt(deallocPd, pd);
    }

    public MemorySegment regMr(MemorySegment st, MemorySegment pd, long addr, long length, int access) {
        try {
            return (MemorySegment) regMr.invokeExact(st, pd, MemorySegment.ofAddress(addr), length, access);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public int deregMr(MemorySegment mr) {
        return callInt(deregMr, mr);
    }

    public MemorySegment createCompChannel(MemorySegment st, MemorySegment ctx) {
        try {
            return (MemorySegment) createCompChannel.invokeExact(st, ctx);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_destroy_comp_channel}: 0, or -1 with errno. */
    public int destroyCompChannel(MemorySegment st, MemorySegment channel) {
        try {
            return (int) destroyCompChannel.invokeExact(st, channel);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public MemorySegment createCq(MemorySegment st, MemorySegment ctx, int cqe, MemorySegment channel, int vector) {
        try {
            return (MemorySegment) createCq.invokeExact(st, ctx, cqe, MemorySegment.NULL, channel, vector);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public int destroyCq(MemorySegment cq) {
        return callInt(destroyCq, cq);
    }

    /** {@code ibv_get_cq_event} (blocks unless the channel fd is readable): 0, or -1 with errno. */
    public int getCqEvent(MemorySegment st, MemorySegment channel, MemorySegment cqOut, MemorySegment ctxOut) {
        try {
            return (int) getCqEvent.invokeExact(st, channel, cqOut, ctxOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void ackCqEvents(MemorySegment cq, int n) {
        try {
            ackCqEvents.invokeExact(cq, n);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public MemorySegment createSrq(MemorySegment st, MemorySegment pd, MemorySegment initAttr) {
        return callPtr(createSrq, st, pd, initAttr);
    }

    public int destroySrq(MemorySegment srq) {
        return callInt(destroySrq, srq);
    }

    public MemorySegment createQp(MemorySegment st, MemorySegment pd, MemorySegment initAttr) {
        return callPtr(createQp, st, pd, initAttr);
    }

    /** {@code ibv_modify_qp}: 0 or an errno. */
    public int modifyQp(MemorySegment qp, MemorySegment attr, int mask) {
        try {
            return (int) modifyQp.invokeExact(qp, attr, mask);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public int queryQp(MemorySegment qp, MemorySegment attr, int mask, MemorySegment initAttr) {
        try {
            return (int) queryQp.invokeExact(qp, attr, mask, initAttr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public int destroyQp(MemorySegment qp) {
        return callInt(destroyQp, qp);
    }

    /** {@code ibv_qp_to_qp_ex}: the extended view of a QP created with send-ops flags. */
    public MemorySegment qpToQpEx(MemorySegment qp) {
        try {
            return (MemorySegment) qpToQpEx.invokeExact(qp);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public MemorySegment createAh(MemorySegment st, MemorySegment pd, MemorySegment ahAttr) {
        return callPtr(createAh, st, pd, ahAttr);
    }

    public int destroyAh(MemorySegment ah) {
        return callInt(destroyAh, ah);
    }

    /** {@code ibv_wc_status_str}. */
    public String wcStatusStr(int status) {
        try {
            MemorySegment s = (MemorySegment) wcStatusStr.invokeExact(status);
            return s.reinterpret(128).getString(0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static int callInt(MethodHandle h, MemorySegment a) {
        try {
            return (int) h.invokeExact(a);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static MemorySegment callPtr(MethodHandle h, MemorySegment st, MemorySegment a, MemorySegment b) {
        try {
            return (MemorySegment) h.invokeExact(st, a, b);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
