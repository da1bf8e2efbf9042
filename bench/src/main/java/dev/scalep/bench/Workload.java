package dev.scalep.bench;

import dev.scalep.verbs.DeviceCapabilities;

import java.util.Locale;

/**
 * What the sender threads of the message-rate benchmark post: the operation and the payload size.
 * The research's benchmark is {@link #DEFAULT}: 2-byte RDMA writes.
 *
 * @param op   RDMA write, RDMA read (the peer's send buffer into this endpoint's read buffer), send
 *             (into the peer's next receive, which a receiver thread posts again), or tag (an eager
 *             tagged message through the public {@code Messages} API, matched by a posted receive)
 * @param size payload bytes per message
 */
public record Workload(Op op, int size) {
    /** Largest payload the benchmark posts (the endpoints' regions grow to fit it). */
    public static final int MAX_SIZE = 1 << 20;
    /** Largest payload of a send: every receive slot of every receiver endpoint holds one. */
    public static final int MAX_SEND_SIZE = 16 << 10;
    /** Largest payload of a tagged message: eager, so header and payload fit one receive slot. */
    public static final int MAX_TAG_SIZE = MAX_SEND_SIZE - 64;
    /** Receive-slot bytes the tagged messages' header takes besides the payload (rounded up: Messages uses 56). */
    static final int TAG_HEADER = 64;
    /** 2-byte RDMA writes, as the research measured. */
    public static final Workload DEFAULT = new Workload(Op.WRITE, SweepRunner.PAYLOAD);

    /** The operations the benchmark can post. */
    public enum Op {
        WRITE, READ, SEND, TAG;

        public String spelling() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** {@code write} or {@code read}; anything else is an {@link IllegalArgumentException} naming the option. */
        public static Op parse(String option, String s) {
            for (Op o : values()) {
                if (o.spelling().equalsIgnoreCase(s.strip())) {
                    return o;
                }
            }
            throw new IllegalArgumentException(option + ": '" + s + "' is not write, send, tag or read");
        }
    }

    public Workload {
        if (op == null) {
            throw new IllegalArgumentException("workload needs an operation");
        }
        if (size < 1 || size > MAX_SIZE) {
            throw new IllegalArgumentException("--size: " + size + " is out of range 1.." + MAX_SIZE);
        }
        if (op == Op.SEND && size > MAX_SEND_SIZE) {
            throw new IllegalArgumentException("--size: " + size + " is more than a send's receive slot holds (" + MAX_SEND_SIZE + ")");
        }
        if (op == Op.TAG && size > MAX_TAG_SIZE) {
            throw new IllegalArgumentException("--size: " + size + " is more than an eager tagged message carries here ("
                    + MAX_TAG_SIZE + "; the sweep sends tagged messages eagerly)");
        }
    }

    /** Refuse a workload the device cannot post (one line naming the device). */
    public void check(String device, DeviceCapabilities caps) {
        boolean ok = switch (op) {
            case WRITE -> caps.rdmaWrite();
            case READ -> caps.rdmaRead();
            case SEND, TAG -> true;
        };
        if (!ok) {
            throw new IllegalArgumentException("--op " + op.spelling() + ": " + device + " has no RDMA " + op.spelling());
        }
    }

    /** Whether payloads of this workload can be inlined at all (reads never are). */
    public boolean inlinable(DeviceCapabilities caps) {
        return op != Op.READ && size <= caps.maxInline();
    }

    /** "2-byte RDMA write", "64-byte send". */
    public String describe() {
        return size + "-byte " + switch (op) {
            case SEND -> "send";
            case TAG -> "tagged message";
            default -> "RDMA " + op.spelling();
        };
    }
}
