package dev.scalep.verbs.ibv;

import dev.scalep.verbs.ContextOptions;

import java.util.TreeMap;

/**
 * What the mlx5 driver's UAR model implies for one real context, since verbs does not expose the UAR
 * pages a context maps: the counts are <em>derived</em>, never read from the device. The rules are
 * rdma-core v44's. Classic mode: {@code MLX5_TOTAL_UUARS / 2} static pages at open; a QP without a TD
 * takes a free low-latency register (the last {@code MLX5_NUM_LOW_LAT_UUARS}), else the least-used
 * medium one, register 0 only when no medium exists. Dynamic mode (rdma-core ≥ v29): nothing at open,
 * one page for CQ doorbells with the first CQ, up to 4 dedicated QP registers (freed with the QP),
 * then up to 12 shared ones, then the least-used shared one. Thread domains in both modes: a default
 * TD takes the free second register of an earlier default TD's page, else opens a page; an independent
 * TD ({@code IbvTd} allocates a hidden partner TD for it) holds both registers of a page of its own.
 * A page counts both of its data-path registers, used or idle; "in use" means at least one QP rings it.
 * Guarded by the owning context's monitor.
 */
final class Mlx5UarModel {
    private static final int DEDICATED_MAX = 4;
    private static final int SHARED_MAX = 12;
    private static final int MAX_DYNAMIC_PAGES = 512;

    private enum Use { STATIC, TD, TD_INDEPENDENT, QP_DEDICATED, QP_SHARED }

    /** A mapped page: which of its two registers are allocated and how many QPs ring each. */
    private static final class Page {
        final Use use;
        final boolean[] held = new boolean[2];
        final int[] qps = new int[2];

        Page(Use use) {
            this.use = use;
        }

        boolean free(int slot) {
            return !held[slot];
        }
    }

    private final boolean dynamic;
    private final int staticRegs;
    private final int lowLatency;
    private final TreeMap<Integer, Page> pages = new TreeMap<>();
    private boolean cqPage;
    private int dedicated;
    private int shared;

    Mlx5UarModel(ContextOptions options) {
        this.dynamic = options.uarMode() == ContextOptions.UarMode.DYNAMIC;
        this.staticRegs = dynamic ? 0 : options.totalUuars();
        this.lowLatency = options.lowLatencyUuars();
        for (int p = 0; p < staticRegs / 2; p++) {
            Page s = new Page(Use.STATIC);
            s.held[0] = s.held[1] = true;
            pages.put(p, s);
        }
    }

    /** A thread domain's register (page = register / 2). */
    int allocTd(boolean independent) {
        if (!independent) {
            for (var e : pages.entrySet()) {
                if (e.getValue().use == Use.TD && e.getValue().free(1)) {
                    e.getValue().held[1] = true;
                    return e.getKey() * 2 + 1;
                }
            }
        }
        Page p = new Page(independent ? Use.TD_INDEPENDENT : Use.TD);
        p.held[0] = true;
        p.held[1] = independent; // the hidden partner TD holds the second register
        return open(p) * 2;
    }

    void freeTd(int reg) {
        Page p = pages.get(reg / 2);
        p.held[reg & 1] = false;
        if (p.use == Use.TD_INDEPENDENT) {
            p.held[1] = false;
        }
        unmapIfEmpty(reg / 2);
    }

    void cqCreated() {
        if (dynamic && !cqPage) {
            cqPage = true;
        }
    }

    /** The register a new QP rings: its TD's ({@code tdReg >= 0}), else the driver's assignment. */
    int assignQp(int tdReg) {
        int reg = tdReg >= 0 ? tdReg : dynamic ? dynamicRegister() : staticRegister();
        pages.get(reg / 2).qps[reg & 1]++;
        return reg;
    }

    void releaseQp(int reg) {
        Page p = pages.get(reg / 2);
        if (--p.qps[reg & 1] == 0 && p.use == Use.QP_DEDICATED) {
            p.held[reg & 1] = false;
            dedicated--;
            unmapIfEmpty(reg / 2);
        }
    }

    private int staticRegister() {
        for (int r = staticRegs - lowLatency; r < staticRegs; r++) {
            if (r > 0 && qps(r) == 0) {
                return r;
            }
        }
        int best = 0;
        for (int r = 1; r < staticRegs - lowLatency; r++) {
            if (best == 0 || qps(r) < qps(best)) {
                best = r;
            }
        }
        return best;
    }

    private int dynamicRegister() {
        if (dedicated < DEDICATED_MAX) {
            dedicated++;
            return newRegister(Use.QP_DEDICATED);
        }
        if (shared < SHARED_MAX) {
            shared++;
            return newRegister(Use.QP_SHARED);
        }
        int best = -1;
        for (var e : pages.entrySet()) {
            for (int s = 0; s < 2 && e.getValue().use == Use.QP_SHARED; s++) {
                int r = e.getKey() * 2 + s;
                if (e.getValue().held[s] && (best < 0 || qps(r) < qps(best))) {
                    best = r;
                }
            }
        }
        return best;
    }

    private int newRegister(Use use) {
        for (var e : pages.entrySet()) {
            Page p = e.getValue();
            if (p.use == use && (p.free(0) || p.free(1))) {
                int slot = p.free(0) ? 0 : 1;
                p.held[slot] = true;
                return e.getKey() * 2 + slot;
            }
        }
        Page p = new Page(use);
        p.held[0] = true;
        return open(p) * 2;
    }

    private int qps(int reg) {
        return pages.get(reg / 2).qps[reg & 1];
    }

    private int open(Page p) {
        int first = staticRegs / 2;
        int dynamicPages = pages.size() - first;
        if (dynamicPages >= MAX_DYNAMIC_PAGES) {
            throw new IllegalStateException("the mlx5 model allows " + MAX_DYNAMIC_PAGES + " dynamic UAR pages");
        }
        int idx = first;
        while (pages.containsKey(idx)) {
            idx++;
        }
        pages.put(idx, p);
        return idx;
    }

    private void unmapIfEmpty(int page) {
        Page p = pages.get(page);
        if (p.use != Use.STATIC && p.free(0) && p.free(1)) {
            pages.remove(page);
        }
    }

    /** Pages mapped (the dynamic mode's CQ page included). */
    long pages() {
        return pages.size() + (cqPage ? 1 : 0);
    }

    /** Data-path registers: both of every mapped data-path page. */
    long uuars() {
        return 2L * pages.size();
    }

    long pagesInUse() {
        return pages.values().stream().filter(p -> p.qps[0] + p.qps[1] > 0).count();
    }

    long uuarsInUse() {
        return pages.values().stream().mapToLong(p -> (p.qps[0] > 0 ? 1 : 0) + (p.qps[1] > 0 ? 1 : 0)).sum();
    }

    /** One line: the mode, the knobs' effect and the thread-domain pages, marked as derived. */
    String describe() {
        long td = pages.values().stream().filter(p -> p.use == Use.TD || p.use == Use.TD_INDEPENDENT).count();
        String mode = dynamic ? "dynamic: " + (pages.size() - td) + " QP pages" + (cqPage ? ", 1 CQ page" : "")
                : "classic: " + staticRegs / 2 + " static pages, " + staticRegs + " uUARs (" + lowLatency
                + " low-latency)";
        return "derived from the mlx5 driver's model, not observed: " + mode + ", " + td + " thread-domain pages";
    }
}
