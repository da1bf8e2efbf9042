package dev.scalep.verbs.ffm;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static dev.scalep.verbs.ffm.Native.CAPTURE_ERRNO;
import static dev.scalep.verbs.ffm.Native.LINKER;
import static dev.scalep.verbs.ffm.Native.rethrow;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Calls through the function pointers that {@code verbs.h} dereferences in its inline functions
 * ({@code ibv_post_send}, {@code ibv_poll_cq}, the {@code verbs_context} ops, the {@code ibv_wr_*}
 * and {@code ibv_start_poll} families). One unbound downcall handle per C signature, the function
 * address as first argument; callers read each pointer once per object and keep it.
 * Non-blocking data-path calls are linked {@code critical(false)}. Thread-safe.
 */
public final class Ops {
    private Ops() {
    }

    private static final Linker.Option CRITICAL = Linker.Option.critical(false);

    private static final MethodHandle I_PPP = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), CRITICAL);
    private static final MethodHandle I_PIP = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), CRITICAL);
    private static final MethodHandle I_PI = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), CRITICAL);
    private static final MethodHandle I_P = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS), CRITICAL);
    private static final MethodHandle I_PP = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), CRITICAL);
    private static final MethodHandle V_P = LINKER.downcallHandle(FunctionDescriptor.ofVoid(ADDRESS), CRITICAL);
    private static final MethodHandle V_PI = LINKER.downcallHandle(
            FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT), CRITICAL);
    private static final MethodHandle V_PIL = LINKER.downcallHandle(
            FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_LONG), CRITICAL);
    private static final MethodHandle V_PILI = LINKER.downcallHandle(
            FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_LONG, JAVA_INT), CRITICAL);
    private static final MethodHandle V_PLL = LINKER.downcallHandle(
            FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_LONG), CRITICAL);
    private static final MethodHandle V_PLII = LINKER.downcallHandle(
            FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT), CRITICAL);
    /** Pointers passed as raw addresses ({@code long}): the data path builds no segment per call. */
    private static final MethodHandle I_PLP = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS), CRITICAL);
    /** Control-path op returning a pointer or NULL with errno. */
    private static final MethodHandle P_PP_ERRNO = LINKER.downcallHandle(
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), CAPTURE_ERRNO);
    private static final MethodHandle I_PPPL = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle I_P_CTL = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle I_PP_CTL = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));

    /** {@code post_send}/{@code post_recv}/{@code post_srq_recv}: 0 or a positive errno, {@code *bad} set. */
    public static int post(MemorySegment fn, MemorySegment queue, MemorySegment wr, MemorySegment bad) {
        try {
            return (int) I_PPP.invokeExact(fn, queue, wr, bad);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code post_send}/{@code post_recv} of the chain starting at native address {@code wr} (a record
     * inside a list, without a slice per post): 0 or a positive errno, {@code *bad} set.
     */
    public static int postAt(MemorySegment fn, MemorySegment queue, long wr, MemorySegment bad) {
        try {
            return (int) I_PLP.invokeExact(fn, queue, wr, bad);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code poll_cq(cq, n, wc)}: completions moved, or negative on error. */
    public static int pollCq(MemorySegment fn, MemorySegment cq, int n, MemorySegment wc) {
        try {
            return (int) I_PIP.invokeExact(fn, cq, n, wc);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code req_notify_cq(cq, solicited_only)}: 0 or an errno. */
    public static int reqNotifyCq(MemorySegment fn, MemorySegment cq, int solicitedOnly) {
        try {
            return (int) I_PI.invokeExact(fn, cq, solicitedOnly);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** A control-path op {@code T *op(ctx, attr)} that returns NULL and sets errno on failure. */
    public static MemorySegment createWithAttr(MemorySegment st, MemorySegment fn, MemorySegment ctx,
                                               MemorySegment attr) {
        try {
            return (MemorySegment) P_PP_ERRNO.invokeExact(fn, st, ctx, attr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code int op(obj)} on the control path (dealloc_td, destroy). */
    public static int destroy(MemorySegment fn, MemorySegment obj) {
        try {
            return (int) I_P_CTL.invokeExact(fn, obj);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code int op(obj, attr)} on the control path (modify_cq). */
    public static int modify(MemorySegment fn, MemorySegment obj, MemorySegment attr) {
        try {
            return (int) I_PP_CTL.invokeExact(fn, obj, attr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code query_device_ex(ctx, input, attr, attr_size)}: 0 or an errno. */
    public static int queryDeviceEx(MemorySegment fn, MemorySegment ctx, MemorySegment input, MemorySegment attr,
                                    long size) {
        try {
            return (int) I_PPPL.invokeExact(fn, ctx, input, attr, size);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ---- ibv_cq_ex poll API ----

    /** {@code start_poll(cq, attr)}: 0 with the first completion current, ENOENT when empty, else an errno. */
    public static int startPoll(MemorySegment fn, MemorySegment cq, MemorySegment attr) {
        try {
            return (int) I_PP.invokeExact(fn, cq, attr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code next_poll(cq)} and the {@code read_*} accessors returning 32-bit values. */
    public static int intOp(MemorySegment fn, MemorySegment obj) {
        try {
            return (int) I_P.invokeExact(fn, obj);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code end_poll(cq)}, {@code wr_start(qp)}, {@code wr_abort(qp)}, {@code wr_send(qp)}. */
    public static void voidOp(MemorySegment fn, MemorySegment obj) {
        try {
            V_P.invokeExact(fn, obj);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ---- ibv_qp_ex post API ----

    /** {@code wr_send_imm(qp, imm)} (imm in network order). */
    public static void wrSendImm(MemorySegment fn, MemorySegment qpx, int immBe) {
        try {
            V_PI.invokeExact(fn, qpx, immBe);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code wr_rdma_write(qp, rkey, remote_addr)} / {@code wr_rdma_read}. */
    public static void wrRdma(MemorySegment fn, MemorySegment qpx, int rkey, long remoteAddr) {
        try {
            V_PIL.invokeExact(fn, qpx, rkey, remoteAddr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code wr_rdma_write_imm(qp, rkey, remote_addr, imm)}. */
    public static void wrRdmaImm(MemorySegment fn, MemorySegment qpx, int rkey, long remoteAddr, int immBe) {
        try {
            V_PILI.invokeExact(fn, qpx, rkey, remoteAddr, immBe);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code wr_set_ud_addr(qp, ah, remote_qpn, remote_qkey)}, the AH as its native address. */
    public static void wrSetUdAddr(MemorySegment fn, MemorySegment qpx, long ah, int qpn, int qkey) {
        try {
            V_PLII.invokeExact(fn, qpx, ah, qpn, qkey);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code wr_set_sge_list(qp, num_sge, sg_list)}, the list as its native address. */
    public static void wrSetSgeList(MemorySegment fn, MemorySegment qpx, long n, long sges) {
        try {
            V_PLL.invokeExact(fn, qpx, n, sges);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code wr_set_inline_data(qp, addr, length)}, the data as its native address. */
    public static void wrSetInlineData(MemorySegment fn, MemorySegment qpx, long addr, long length) {
        try {
            V_PLL.invokeExact(fn, qpx, addr, length);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
