package dev.scalep.bench.tune;

/**
 * One measured candidate configuration of a tune: its rate over the timed repeats (median, lowest,
 * highest, in million messages per second) and the resources it allocated. Pure data: the choice
 * rule works on these alone, so it is tested on synthetic values.
 *
 * @param name        what it is called in the output (sharing level and feature variant)
 * @param median      median rate over the repeats
 * @param min         lowest rate over the repeats
 * @param max         highest rate over the repeats
 * @param uarPages    UAR pages allocated
 * @param qps         queue pairs
 * @param memoryBytes software memory in bytes
 */
public record Candidate(String name, double median, double min, double max, long uarPages, long qps, long memoryBytes) {
    public Candidate {
        if (!(min <= median && median <= max)) {
            throw new IllegalArgumentException(name + ": rates must satisfy min <= median <= max (" + min + ", "
                    + median + ", " + max + ")");
        }
    }

    /** The amount of {@code r} this candidate uses. */
    public long amount(Resource r) {
        return switch (r) {
            case UAR_PAGES -> uarPages;
            case QPS -> qps;
            case MEMORY -> memoryBytes;
        };
    }

    /** Run-to-run spread, (max - min) / median, in percent. */
    public double spreadPercent() {
        return median == 0 ? 0 : (max - min) / median * 100;
    }

    /** Whether the two rate ranges overlap: the repeats cannot tell the two apart. */
    public boolean tiesWith(Candidate o) {
        return max >= o.min && o.max >= min;
    }
}
