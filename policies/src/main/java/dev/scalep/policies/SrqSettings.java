package dev.scalep.policies;

/**
 * Shared receive queue sizing; used only when the sharing level has an SRQ.
 *
 * @param depth           receive WRs the SRQ holds (1..1048576)
 * @param refillThreshold refill when fewer than this many receives are posted (0..depth)
 * @param refillBatch     receives posted per refill (1..depth)
 */
public record SrqSettings(int depth, int refillThreshold, int refillBatch) {
}
