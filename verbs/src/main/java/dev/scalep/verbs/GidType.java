package dev.scalep.verbs;

/** The type of a GID table entry ({@code enum ibv_gid_type}): what the packets sent from it carry. */
public enum GidType {
    /** InfiniBand: the GID of an IB port (link layer InfiniBand). */
    IB,
    /** RoCE v1: Ethernet frames with an IB GRH (not routable). */
    ROCE_V1,
    /** RoCE v2: UDP/IP (port 4791), routable; what current fabrics use. */
    ROCE_V2;

    /** The {@code enum ibv_gid_type} value. */
    public int code() {
        return ordinal();
    }

    /** The type of {@code enum ibv_gid_type} value {@code code}. */
    public static GidType of(int code) {
        return code >= 0 && code < values().length ? values()[code] : IB;
    }

    /** The spelling used in policies and CLI output: {@code ib}, {@code roce-v1}, {@code roce-v2}. */
    public String spelling() {
        return name().toLowerCase().replace('_', '-');
    }

    /** The type spelled {@code s} ({@link #spelling()}), or {@code null}. */
    public static GidType parse(String s) {
        for (GidType t : values()) {
            if (t.spelling().equalsIgnoreCase(s)) {
                return t;
            }
        }
        return null;
    }
}
