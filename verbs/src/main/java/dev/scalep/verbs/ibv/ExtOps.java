package dev.scalep.verbs.ibv;

import dev.scalep.verbs.ffm.IbvConst;
import dev.scalep.verbs.ffm.IbvStructs;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code verbs_get_ctx_op} in Java: an op of the {@code struct verbs_context} that precedes a provider's
 * {@code ibv_context}, present only when {@code abi_compat} marks the context extended, the provider's
 * {@code sz} covers the op, and the pointer is set (verbs.h). Unimplemented ops may still point to a
 * stub that fails with EOPNOTSUPP.
 */
final class ExtOps {
    private ExtOps() {
    }

    /** The op's function pointer, or {@code null} when the context does not provide it. */
    static MemorySegment op(MemorySegment ctx, String member) {
        long abi = MemorySegment.ofAddress(ctx.address() + IbvStructs.CTX_ABI_COMPAT).reinterpret(8).get(JAVA_LONG, 0);
        if (abi != IbvConst.VERBS_ABI_IS_EXTENDED) {
            return null;
        }
        long vcStart = ctx.address() + IbvStructs.vc("query_port");
        MemorySegment vc = MemorySegment.ofAddress(vcStart).reinterpret(IbvStructs.VERBS_CONTEXT_SIZE);
        long sz = vc.get(JAVA_LONG, IbvStructs.vcFromStart("sz"));
        if (sz < IbvStructs.VERBS_CONTEXT_SIZE - IbvStructs.vcFromStart(member)) {
            return null;
        }
        MemorySegment fn = vc.get(ADDRESS, IbvStructs.vcFromStart(member));
        return fn.equals(MemorySegment.NULL) ? null : fn;
    }
}
