package dev.scalep.spmd;

import java.util.Map;

/**
 * A world bootstrapped over the PMI-1 or PMI-2 wire protocol ({@link Pmi1}, {@link Pmi2}), in
 * Java, without a C library. All-gather: every rank puts its bytes under a key of its own for the
 * round ({@link PmiKvs} encodes and splits them), one fence, then one get per rank and segment.
 * Barrier: a fence.
 */
final class PmiWorld extends LaunchedWorld {
    private final PmiClient pmi;
    private final int segment;

    private PmiWorld(PmiClient pmi) {
        super(pmi.rank(), pmi.size());
        this.pmi = pmi;
        this.segment = PmiKvs.segment(pmi.maxValue());
    }

    /** Connect with {@code protocol} ({@code pmi1} or {@code pmi2}); failures are one-line {@link BootstrapException}s. */
    static PmiWorld connect(String protocol, Map<String, String> env, String why) {
        PmiClient pmi;
        try {
            pmi = protocol.equals("pmi2") ? Pmi2.connect(env) : Pmi1.connect(env);
        } catch (PmiException e) {
            throw new BootstrapException(protocol + " bootstrap (" + why + ") failed: " + e.getMessage());
        }
        PmiWorld w;
        try {
            w = new PmiWorld(pmi);
            w.start(pmi.nodeOfRank());
        } catch (RuntimeException e) {
            pmi.close();
            throw new BootstrapException("exchanging the rank table over " + protocol + " (" + pmi.describe() + ") failed: "
                    + e.getMessage());
        }
        return w;
    }

    @Override
    public String bootstrap() {
        return pmi.protocol();
    }

    @Override
    byte[][] exchange(int round, byte[] mine) {
        String base = "scalep." + round + "." + rank;
        PmiKvs.put(pmi, base, mine, segment);
        awaitAll(pmi::fence);
        byte[][] out = new byte[size][];
        for (int r = 0; r < size; r++) {
            out[r] = PmiKvs.get(pmi, r, "scalep." + round + "." + r); // our own too: the round trip is checked
        }
        return out;
    }

    @Override
    void fence() {
        awaitAll(pmi::fence);
    }

    @Override
    String session() {
        return pmi.protocol() + " " + pmi.describe();
    }

    @Override
    void leave() {
        pmi.close();
    }
}
