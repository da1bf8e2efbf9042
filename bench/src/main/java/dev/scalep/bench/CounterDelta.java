package dev.scalep.bench;

import java.util.Map;

/**
 * What the runtime counters of a configuration's sender side moved by during one timed run
 * (see docs/ARCHITECTURE.md, Counters): WRs handed to the provider, doorbells, completions polled from
 * the sender's CQs, combiner passes and the WRs they posted, acquisitions of a shared QP (lock or
 * combiner role) and contended ones, hand-offs between threads, back-pressure returns and
 * BlueFlame writes. Ratios per WR explain a rate: doorbells per WR (postlist and combining),
 * completions per WR (unsignaled), WRs per combiner pass (batching), contended acquisitions per
 * WR (lock traffic).
 */
public record CounterDelta(long wrs, long doorbells, long completions, long combinerPasses, long combinedWrs,
                           long lockAcquired, long lockContended, long handoffs, long backPressured, long blueFlameWrites) {

    /** The difference of two {@code EndpointManager.counterTotals()} snapshots. */
    public static CounterDelta between(Map<String, Long> before, Map<String, Long> after) {
        return new CounterDelta(d(before, after, "qp.wrs"), d(before, after, "qp.doorbells"),
                d(before, after, "cq.completions"), d(before, after, "qp.combiner-passes"),
                d(before, after, "qp.combined-wrs"), d(before, after, "qp.lock-acquired"),
                d(before, after, "qp.lock-contended"), d(before, after, "qp.handoffs"),
                d(before, after, "ep.back-pressured"), d(before, after, "qp.blueflame-writes"));
    }

    private static long d(Map<String, Long> before, Map<String, Long> after, String key) {
        return after.getOrDefault(key, 0L) - before.getOrDefault(key, 0L);
    }

    /** The sum of two runs' deltas (a configuration over its repeats). */
    public CounterDelta plus(CounterDelta o) {
        return new CounterDelta(wrs + o.wrs, doorbells + o.doorbells, completions + o.completions,
                combinerPasses + o.combinerPasses, combinedWrs + o.combinedWrs, lockAcquired + o.lockAcquired,
                lockContended + o.lockContended, handoffs + o.handoffs, backPressured + o.backPressured,
                blueFlameWrites + o.blueFlameWrites);
    }

    private double perWr(long v) {
        return wrs == 0 ? Double.NaN : (double) v / wrs;
    }

    public double doorbellsPerWr() {
        return perWr(doorbells);
    }

    public double completionsPerWr() {
        return perWr(completions);
    }

    public double contendedPerWr() {
        return perWr(lockContended);
    }

    public double handoffsPerWr() {
        return perWr(handoffs);
    }

    /** Mean WRs per combiner pass (NaN without passes: not a combining QP). */
    public double wrsPerCombinerPass() {
        return combinerPasses == 0 ? Double.NaN : (double) combinedWrs / combinerPasses;
    }
}
