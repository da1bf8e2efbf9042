package dev.scalep.endpoints;

import dev.scalep.policies.QpMode;
import dev.scalep.policies.Share;
import dev.scalep.policies.SharingConfig;
import dev.scalep.policies.TdMode;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.QpType;

import java.util.ArrayList;
import java.util.List;

/**
 * What an {@link EndpointManager} will build, resolved before anything is built: the settings in
 * force after every substitution the device's capabilities call for, how many threads share each
 * resource, and the depth of every CQ and SRQ. {@link #resolve} is a pure function of the device's
 * name and capabilities, the sharing level, the thread count and the options, so it is tested
 * without a device; it throws {@link IllegalArgumentException} for what cannot be built at all.
 * The only substitution it cannot foresee is a CQ moderation the device refuses when asked
 * ({@code cq.moderation}), which the manager adds while building.
 *
 * <p>The plan also places every instance: resource axis {@code a} with {@code k} threads per
 * instance gives thread {@code t} instance {@code t / k} ({@link #place(int)}), and instance
 * {@code i} of an axis lives in the enclosing instances of its first thread; {@link #sendPath(int)}
 * says which send path QP {@code i} gets.
 *
 * @param td                   thread-domain mode in force
 * @param signalEvery          one signaled request every this many
 * @param inlineThreshold      largest inline payload
 * @param blueFlame            whether contexts ask for BlueFlame
 * @param useSrq               whether receives go to SRQs
 * @param qpType               RC, or SRD on a device without RC
 * @param chained              whether per-thread QPs post from a WR pool
 * @param sgeHeaderPayload     whether header and payload go as two SGEs of one WR
 * @param srqRefillBatch       consumed receives reposted per call (at least 1)
 * @param srqRefillThreshold   refill when fewer receives than this are posted
 * @param ctxPer               threads per context (and likewise for the other axes)
 * @param cqDepths             depth of CQ {@code i}
 * @param srqDepths            max_wr of SRQ {@code i} (empty without SRQs)
 * @param recvSlotsPerEndpoint receive slots one endpoint posts
 * @param substitutions        what was changed from the request, and why, in resolution order
 * @param peers                destinations each QP reaches (1 for a pair; the other ranks of a world
 *                             on a connectionless QP)
 */
public record EndpointPlan(String device, SharingConfig requested, int threads, EndpointOptions options, TdMode td,
                           int signalEvery, int inlineThreshold, boolean blueFlame, boolean useSrq, QpType qpType,
                           boolean chained, boolean sgeHeaderPayload, int srqRefillBatch, int srqRefillThreshold,
                           int ctxPer, int pdPer, int mrPer, int qpPer, int cqPer, int srqPer, boolean bufShared,
                           int[] cqDepths, int[] srqDepths, int recvSlotsPerEndpoint, List<Substitution> substitutions,
                           int peers) {

    public EndpointPlan {
        substitutions = List.copyOf(substitutions);
    }

    /** Resolve the plan for {@code threads} threads at {@code cfg} on a device named {@code device} with {@code caps}. */
    public static EndpointPlan resolve(String device, DeviceCapabilities caps, SharingConfig cfg, int threads,
                                       EndpointOptions opts) {
        return resolve(device, caps, cfg, threads, opts, 1);
    }

    /** {@link #resolve(String, DeviceCapabilities, SharingConfig, int, EndpointOptions)} for QPs that reach {@code peers} destinations. */
    public static EndpointPlan resolve(String device, DeviceCapabilities caps, SharingConfig cfg, int threads,
                                       EndpointOptions opts, int peers) {
        List<Substitution> subs = new ArrayList<>();
        // DEFAULTS asks for BlueFlame wherever it exists; only an explicit request is reported.
        if (opts.context().blueFlame() && !caps.blueFlame() && opts.context() != ContextOptions.DEFAULTS) {
            subs.add(new Substitution("blueflame", "on", "off", device + " has no BlueFlame registers"));
        }
        boolean blueFlame = opts.context().blueFlame() && caps.blueFlame();
        TdMode td = cfg.td();
        if (td != TdMode.NONE && !caps.threadDomains()) {
            subs.add(new Substitution("td", td.spelling(), "none", device
                    + " has no thread domains; QPs use the driver's static doorbell assignment, contexts as configured"));
            td = TdMode.NONE;
        }
        int q = opts.signalEvery();
        if (q > 1 && (!caps.unsignaled() || !caps.inOrder())) {
            subs.add(new Substitution("signalEvery", Integer.toString(q), "1", device
                    + (caps.unsignaled() ? " completes out of order, so an unsignaled request cannot be retired by a later completion"
                    : " cannot post unsignaled work requests")));
            q = 1;
        }
        int qpSharers = cfg.qp().threadsPerInstance(threads);
        if (q > 1 && qpSharers > 1 && q > opts.sendDepth() / qpSharers) {
            int clamped = Math.max(1, opts.sendDepth() / qpSharers);
            subs.add(new Substitution("signalEvery", Integer.toString(q), Integer.toString(clamped),
                    "a QP shared by " + qpSharers + " threads with depth " + opts.sendDepth()
                            + " needs a signaled request among every depth/sharers of a thread's requests"));
            q = clamped;
        }
        int inl = opts.inlineThreshold();
        if (inl > caps.maxInline()) {
            subs.add(new Substitution("inline", Integer.toString(inl), Integer.toString(caps.maxInline()),
                    device + " inlines at most " + caps.maxInline() + " bytes"));
            inl = caps.maxInline();
        }
        boolean srq = cfg.srq().kind() != Share.Kind.NONE;
        if (srq && caps.maxSrq() == 0) {
            subs.add(new Substitution("srq", cfg.srq().toString(), "none", device + " has no SRQs"));
            srq = false;
        }
        QpType qpType = caps.qpTypes().contains(QpType.RC) ? QpType.RC : QpType.SRD;
        boolean sharedQp = qpSharers > 1;
        boolean chained = opts.chainPool() > 0;
        if (chained && sharedQp) {
            subs.add(new Substitution("chained", "pool " + opts.chainPool() + ", max-length " + opts.chainMaxLength(),
                    "the shared poster's list", "a QP shared by " + qpSharers
                    + " threads is posted by " + cfg.qpMode().spelling() + " poster, which builds its own lists"));
            chained = false;
        }
        if (chained && peers > 1) {
            subs.add(new Substitution("chained", "pool " + opts.chainPool() + ", max-length " + opts.chainMaxLength(),
                    "off", "a chained-post path has one destination; these QPs reach " + peers + " ranks"));
            chained = false;
        }
        boolean sge = opts.sgeHeaderPayload();
        if (sge && sharedQp) {
            subs.add(new Substitution("sge-header-payload", "true", "false",
                    "two-SGE posts need a per-thread QP; this QP is shared by " + qpSharers + " threads"));
            sge = false;
        } else if (sge && caps.maxSge() < 2) {
            subs.add(new Substitution("sge-header-payload", "true", "false",
                    device + " takes " + caps.maxSge() + " SGE per send WR"));
            sge = false;
        }
        int n = threads;
        int qpPer = per(cfg.qp(), n);
        int cqPer = cfg.cq().kind() == Share.Kind.PER_QP ? qpPer : per(cfg.cq(), n);
        int srqPer = srq ? per(cfg.srq(), n) : 0;
        int[] cqDepths = cqDepths(device, caps, opts, n, qpPer, cqPer, subs);
        int[] srqDepths = new int[srq ? (n + srqPer - 1) / srqPer : 0];
        for (int i = 0; i < srqDepths.length; i++) {
            srqDepths[i] = srqDepth(device, caps, opts, Math.min(srqPer, n - i * srqPer), i == 0 ? subs : null);
        }
        int recvSlots = srq ? Math.max(1, Math.min(opts.recvDepth(), srqDepth(device, caps, opts, srqPer, null) / srqPer))
                : opts.recvDepth();
        return new EndpointPlan(device, cfg, threads, opts, td, q, inl, blueFlame, srq, qpType, chained, sge,
                Math.max(1, opts.srqRefillBatch()), opts.srqRefillThreshold(), per(cfg.ctx(), n), per(cfg.pd(), n),
                per(cfg.mr(), n), qpPer, cqPer, srqPer, cfg.buf().shared(n), cqDepths, srqDepths, recvSlots, subs, peers);
    }

    private static int per(Share s, int threads) {
        return Math.max(1, s.threadsPerInstance(threads));
    }

    /** Each CQ holds what its queues can complete at once; a policy depth below that is raised, above the device's limit clamped. */
    private static int[] cqDepths(String device, DeviceCapabilities caps, EndpointOptions o, int n, int qpPer, int cqPer,
                                  List<Substitution> subs) {
        int[] depths = new int[(n + cqPer - 1) / cqPer];
        int max = caps.maxCqe();
        for (int i = 0; i < depths.length; i++) {
            int members = Math.min(cqPer, n - i * cqPer);
            int qpsOnCq = (members + qpPer - 1) / qpPer;
            // each QP's queues as a provider may round them (mlx5: to powers of two; a shared QP of
            // three threads asks 3 x recvDepth receives and gets the next power of two)
            long need = 0;
            for (int q = 0; q < qpsOnCq; q++) {
                need += pow2((long) o.sendDepth()) + pow2((long) Math.min(qpPer, members - q * qpPer) * o.recvDepth());
            }
            long depth = need;
            if (o.cqDepth() > 0) {
                if (o.cqDepth() < need) {
                    if (i == 0) {
                        subs.add(new Substitution("cq.depth", Integer.toString(o.cqDepth()), Long.toString(need),
                                "a CQ serving " + members + " threads can hold " + need
                                        + " completions at once (send and receive depths); a smaller CQ could overrun"));
                    }
                } else {
                    depth = o.cqDepth();
                }
            }
            if (depth > max && o.cqDepth() > need && need <= max) {
                if (i == 0) {
                    subs.add(new Substitution("cq.depth", Integer.toString(o.cqDepth()), Integer.toString(max),
                            device + " allows at most " + max + " CQEs per CQ"));
                }
                depth = max;
            }
            if (depth > max) {
                throw new IllegalArgumentException("a CQ serving " + members + " threads needs " + depth
                        + " entries, above " + device + "'s max_cqe " + max + "; lower sendDepth/recvDepth or share the CQ less");
            }
            depths[i] = (int) depth;
        }
        return depths;
    }

    private static long pow2(long v) {
        return v <= 1 ? 1 : Long.highestOneBit(v - 1) << 1;
    }

    /** SRQ max_wr: the policy's depth (clamped to the device, reported to {@code subs} when given) or the members' receive slots. */
    private static int srqDepth(String device, DeviceCapabilities caps, EndpointOptions o, int members,
                                List<Substitution> subs) {
        int want = o.srqDepth() > 0 ? o.srqDepth() : members * o.recvDepth();
        int max = caps.maxSrqWr();
        if (max > 0 && want > max) {
            if (subs != null) {
                subs.add(new Substitution("srq.depth", Integer.toString(want), Integer.toString(max),
                        device + " allows at most " + max + " WRs per SRQ"));
            }
            want = max;
        }
        return Math.max(members, want);
    }

    /** How a QP's requests reach it: one thread's list or WR pool, or several threads' lock or combiner. */
    public enum SendPathKind { EXCLUSIVE, CHAINED, LOCKED, COMBINING }

    /**
     * Where thread {@code thread}'s endpoint lives: the index of its context, PD, MR, QP, CQ and SRQ
     * (-1 without SRQs) and of its QP's first thread domain (-1 without), its owner index among its
     * CQ's threads, and how many threads share its QP and CQ.
     */
    public record Placement(int thread, int context, int pd, int mr, int qp, int cq, int srq, int td, int owner,
                            int qpSharers, int cqSharers) {
    }

    /** Thread {@code t}'s placement. */
    public Placement place(int t) {
        if (t < 0 || t >= threads) {
            throw new IndexOutOfBoundsException("thread " + t + " of " + threads);
        }
        int qp = t / qpPer;
        int cq = t / cqPer;
        return new Placement(t, t / ctxPer, t / pdPer, t / mrPer, qp, cq, useSrq ? t / srqPer : -1,
                td == TdMode.NONE ? -1 : qp * td.tdsPerThread(), t - cq * cqPer, qpPer, cqPer);
    }

    /** Instances of an axis with {@code per} threads each. */
    private int instances(int per) {
        return (threads + per - 1) / per;
    }

    /** The threads of instance {@code i} of an axis with {@code per} threads each (the last may have fewer). */
    private int members(int i, int per) {
        return Math.min(per, threads - i * per);
    }

    public int contexts() {
        return instances(ctxPer);
    }

    public int pds() {
        return instances(pdPer);
    }

    public int mrs() {
        return instances(mrPer);
    }

    public int qps() {
        return instances(qpPer);
    }

    public int cqs() {
        return cqDepths.length;
    }

    public int srqs() {
        return srqDepths.length;
    }

    /** The first thread of PD/MR/QP/CQ/SRQ instance {@code i} (its placement names the enclosing instances). */
    public int firstOfPd(int i) {
        return i * pdPer;
    }

    public int firstOfMr(int i) {
        return i * mrPer;
    }

    public int firstOfQp(int i) {
        return i * qpPer;
    }

    public int firstOfCq(int i) {
        return i * cqPer;
    }

    public int firstOfSrq(int i) {
        return i * srqPer;
    }

    public int mrMembers(int i) {
        return members(i, mrPer);
    }

    public int qpMembers(int i) {
        return members(i, qpPer);
    }

    public int cqMembers(int i) {
        return members(i, cqPer);
    }

    /** The send path QP {@code i} gets. */
    public SendPathKind sendPath(int i) {
        if (qpMembers(i) > 1) {
            return requested.qpMode() == QpMode.LOCKED ? SendPathKind.LOCKED : SendPathKind.COMBINING;
        }
        return (chained || sgeHeaderPayload) && peers == 1 ? SendPathKind.CHAINED : SendPathKind.EXCLUSIVE;
    }
}
