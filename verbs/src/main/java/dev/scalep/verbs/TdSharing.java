package dev.scalep.verbs;

/**
 * How independent a thread domain's doorbell register is: the research's proposed
 * {@code sharing} attribute of {@code ibv_td_init_attr}.
 */
public enum TdSharing {
    /** The driver's default: even TDs open a UAR page, the following odd TD shares it. */
    DEFAULT,
    /** Maximally independent: the TD gets a UAR page of its own (wasting its second uUAR). */
    INDEPENDENT
}
