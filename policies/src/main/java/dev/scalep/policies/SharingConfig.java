package dev.scalep.policies;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A sharing level: for each resource of an endpoint, how many threads share one instance.
 * Immutable and thread-safe. The six research categories are presets ({@link Category#config()});
 * any axis can be set on its own, including x-way sharing across N threads.
 *
 * <h2>Axes form</h2>
 * A one-line spelling for command lines and policy files, items separated by commas:
 * <pre>
 *   sharing := item ("," item)*
 *   item    := CATEGORY | AXIS "=" VALUE            (a category may only be the first item)
 *   ctx, pd, mr, buf := per-thread | shared | Xway
 *   td      := none | dedicated | paired | dedicated-2x
 *   qp      := per-thread | (shared | Xway)[":" (locked | combining)]   (mode defaults to combining)
 *   cq      := per-qp | per-thread | shared | Xway
 *   srq     := none | per-thread | shared | Xway
 *   X       := 1..4096  ("1way" is per-thread)
 * </pre>
 * Axes not given take their value from the leading category, or from {@link Category#STATIC} when
 * none is named. Example: {@code ctx=shared,td=paired,qp=4way:combining,cq=per-qp,buf=per-thread};
 * {@code dynamic,cq=shared}. {@link #toString()} prints every axis in this form and
 * {@link #parse(String)} reads it back to an equal value.
 *
 * <h2>Consistency</h2>
 * A child resource cannot be shared more widely than its parent (PD within CTX; MR, QP and SRQ
 * within PD; CQ within CTX), x-way widths must divide their parent's width, a shared QP's CQ must
 * be per-QP or shared at least as widely as the QP, and the QP mode is {@code direct} exactly when
 * the QP is per-thread.
 *
 * @param ctx    device contexts
 * @param td     thread domains
 * @param pd     protection domains
 * @param mr     memory regions
 * @param buf    payload buffers
 * @param qp     queue pairs
 * @param qpMode how threads sharing a QP serialise posts
 * @param cq     completion queues
 * @param srq    shared receive queues
 */
public record SharingConfig(Share ctx, TdMode td, Share pd, Share mr, Share buf, Share qp, QpMode qpMode,
                            Share cq, Share srq) {

    /** The values of {@link Category#STATIC}, the base for axes not given (built here so presets can parse). */
    private static final SharingConfig STATIC_AXES = new SharingConfig(Share.ALL, TdMode.NONE, Share.ALL,
            Share.PER_THREAD, Share.PER_THREAD, Share.PER_THREAD, QpMode.DIRECT, Share.PER_QP, Share.NONE);

    /** The axes, in axes-form order. */
    public enum Axis {
        CTX("ctx", "per-thread, shared, <x>way"),
        TD("td", "none, dedicated, paired, dedicated-2x"),
        PD("pd", "per-thread, shared, <x>way"),
        MR("mr", "per-thread, shared, <x>way"),
        BUF("buf", "per-thread, shared, <x>way"),
        QP("qp", "per-thread, shared[:locked|:combining], <x>way[:locked|:combining]"),
        CQ("cq", "per-qp, per-thread, shared, <x>way"),
        SRQ("srq", "none, per-thread, shared, <x>way");

        private final String key;
        private final String allowed;

        Axis(String key, String allowed) {
            this.key = key;
            this.allowed = allowed;
        }

        /** The axis name in axes form. */
        public String key() {
            return key;
        }

        /** What the axis accepts, for error messages. */
        public String allowed() {
            return allowed;
        }

        static Axis byKey(String k) {
            for (Axis a : values()) {
                if (a.key.equals(k)) {
                    return a;
                }
            }
            return null;
        }
    }

    public SharingConfig {
        Objects.requireNonNull(ctx, "ctx");
        Objects.requireNonNull(td, "td");
        Objects.requireNonNull(pd, "pd");
        Objects.requireNonNull(mr, "mr");
        Objects.requireNonNull(buf, "buf");
        Objects.requireNonNull(qp, "qp");
        Objects.requireNonNull(qpMode, "qpMode");
        Objects.requireNonNull(cq, "cq");
        Objects.requireNonNull(srq, "srq");
        String problem = check(ctx, td, pd, mr, buf, qp, qpMode, cq, srq);
        if (problem != null) {
            throw new SharingSyntaxException(problem, 0);
        }
    }

    private static String check(Share ctx, TdMode td, Share pd, Share mr, Share buf, Share qp, QpMode qpMode,
                                Share cq, Share srq) {
        String kinds = kinds(Axis.CTX, ctx, false, false);
        if (kinds == null) {
            kinds = kinds(Axis.PD, pd, false, false);
        }
        if (kinds == null) {
            kinds = kinds(Axis.MR, mr, false, false);
        }
        if (kinds == null) {
            kinds = kinds(Axis.BUF, buf, false, false);
        }
        if (kinds == null) {
            kinds = kinds(Axis.QP, qp, false, false);
        }
        if (kinds == null) {
            kinds = kinds(Axis.CQ, cq, false, true);
        }
        if (kinds == null) {
            kinds = kinds(Axis.SRQ, srq, true, false);
        }
        if (kinds != null) {
            return kinds;
        }
        String n = nested("pd", pd, "ctx", ctx);
        if (n == null) {
            n = nested("mr", mr, "pd", pd);
        }
        if (n == null) {
            n = nested("qp", qp, "pd", pd);
        }
        if (n == null) {
            n = nested("cq", cq, "ctx", ctx);
        }
        if (n == null && srq.kind() != Share.Kind.NONE) {
            n = nested("srq", srq, "pd", pd);
        }
        if (n != null) {
            return n;
        }
        if (qp.width() > 1 && cq.kind() != Share.Kind.PER_QP && !nests(qp, cq)) {
            return "cq=" + cq + " cannot serve qp=" + qp + ": a shared QP's CQ must be per-qp or shared by at "
                    + "least the QP's threads (a multiple of its width)";
        }
        boolean sharedQp = qp.width() > 1;
        if (sharedQp && qpMode == QpMode.DIRECT) {
            return "qp=" + qp + " is shared: its mode must be locked or combining, not direct";
        }
        if (!sharedQp && qpMode != QpMode.DIRECT) {
            return "qp=" + qp + " is not shared: mode " + qpMode + " applies only to shared QPs";
        }
        return null;
    }

    private static String kinds(Axis a, Share s, boolean allowNone, boolean allowPerQp) {
        if ((s.kind() == Share.Kind.NONE && !allowNone) || (s.kind() == Share.Kind.PER_QP && !allowPerQp)) {
            return a.key() + "=" + s + " is not allowed; " + a.key() + " takes " + a.allowed();
        }
        return null;
    }

    private static boolean nests(Share child, Share parent) {
        int c = child.width();
        int p = parent.width();
        if (c <= 1) {
            return true;
        }
        if (c > p) {
            return false;
        }
        return p == Integer.MAX_VALUE || p % c == 0;
    }

    private static String nested(String childName, Share child, String parentName, Share parent) {
        if (nests(child, parent)) {
            return null;
        }
        return childName + "=" + child + " is shared more widely than its parent " + parentName + "=" + parent
                + " (a " + childName + " lives in one " + parentName + "; x-way widths must divide the parent's)";
    }

    /** The canonical axes form, every axis spelled out. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append("ctx=").append(ctx).append(",td=").append(td).append(",pd=").append(pd).append(",mr=").append(mr)
                .append(",buf=").append(buf).append(",qp=").append(qp);
        if (qpMode != QpMode.DIRECT) {
            sb.append(':').append(qpMode);
        }
        sb.append(",cq=").append(cq).append(",srq=").append(srq);
        return sb.toString();
    }

    /**
     * The divisibility rule of x-way sharing, the same for every command and for the endpoint
     * manager: an axis shared {@code x} ways needs a thread count that is a multiple of {@code x},
     * otherwise the last instance would serve fewer threads than asked. Throws
     * {@link IllegalArgumentException} naming the axis and the ways that would work.
     */
    public void checkThreads(int threads) {
        for (Axis a : Axis.values()) {
            Share s = switch (a) {
                case CTX -> ctx;
                case TD -> Share.NONE;
                case PD -> pd;
                case MR -> mr;
                case BUF -> buf;
                case QP -> qp;
                case CQ -> cq;
                case SRQ -> srq;
            };
            if (s.kind() == Share.Kind.WAYS && threads % s.ways() != 0) {
                List<String> fit = new ArrayList<>();
                for (int w = 2; w <= threads; w++) {
                    if (threads % w == 0) {
                        fit.add(w + "way");
                    }
                }
                throw new IllegalArgumentException(a.key() + "=" + s + " with " + threads + " threads: x-way sharing needs "
                        + "a thread count that is a multiple of x (for " + threads + " threads: per-thread"
                        + (fit.isEmpty() ? "" : ", " + String.join(", ", fit)) + ")");
            }
        }
    }

    /** The research category this configuration equals, or null. */
    public Category category() {
        for (Category c : Category.values()) {
            if (c.config().equals(this)) {
                return c;
            }
        }
        return null;
    }

    /** A copy with one axis replaced (the result is checked for consistency). */
    public SharingConfig with(Axis axis, Share value) {
        return switch (axis) {
            case CTX -> new SharingConfig(value, td, pd, mr, buf, qp, qpMode, cq, srq);
            case PD -> new SharingConfig(ctx, td, value, mr, buf, qp, qpMode, cq, srq);
            case MR -> new SharingConfig(ctx, td, pd, value, buf, qp, qpMode, cq, srq);
            case BUF -> new SharingConfig(ctx, td, pd, mr, value, qp, qpMode, cq, srq);
            case QP -> new SharingConfig(ctx, td, pd, mr, buf, value,
                    value.width() > 1 ? (qpMode == QpMode.DIRECT ? QpMode.COMBINING : qpMode) : QpMode.DIRECT, cq, srq);
            case CQ -> new SharingConfig(ctx, td, pd, mr, buf, qp, qpMode, value, srq);
            case SRQ -> new SharingConfig(ctx, td, pd, mr, buf, qp, qpMode, cq, value);
            case TD -> throw new IllegalArgumentException("td is not a Share; use withTd");
        };
    }

    /** A copy with another thread-domain mode. */
    public SharingConfig withTd(TdMode mode) {
        return new SharingConfig(ctx, mode, pd, mr, buf, qp, qpMode, cq, srq);
    }

    /**
     * Parse the axes form (see the class comment). Throws {@link SharingSyntaxException} naming the
     * offending token, its position and what is allowed.
     */
    public static SharingConfig parse(String text) {
        if (text == null || text.isBlank()) {
            throw new SharingSyntaxException("empty sharing level; give a category (" + Category.names()
                    + ") or axes such as ctx=shared,td=paired,qp=4way:combining", 0);
        }
        if (text.length() > 1024) {
            throw new SharingSyntaxException("sharing level longer than 1024 characters", 0);
        }
        Share[] shares = new Share[Axis.values().length];
        TdMode td = null;
        QpMode mode = null;
        Category base = null;
        List<String> seen = new ArrayList<>();
        int pos = 0;
        int index = 0;
        while (pos <= text.length()) {
            int comma = text.indexOf(',', pos);
            int end = comma < 0 ? text.length() : comma;
            String raw = text.substring(pos, end);
            String token = raw.strip();
            int at = pos + (raw.length() - raw.stripLeading().length());
            index++;
            String where = "token " + index + " '" + token + "'";
            if (token.isEmpty()) {
                throw new SharingSyntaxException("empty item at token " + index + " (a stray comma?)", at);
            }
            int eq = token.indexOf('=');
            if (eq < 0) {
                Category c = Category.bySpelling(token);
                if (c == null) {
                    throw new SharingSyntaxException(where + ": not a category or axis=value; categories: "
                            + Category.names() + "; axes: " + axisNames(), at);
                }
                if (index != 1) {
                    throw new SharingSyntaxException(where + ": a category may only be the first item", at);
                }
                base = c;
            } else {
                String key = token.substring(0, eq).strip();
                String value = token.substring(eq + 1).strip();
                Axis axis = Axis.byKey(key);
                if (axis == null) {
                    throw new SharingSyntaxException(where + ": unknown axis '" + key + "'; axes: " + axisNames(), at);
                }
                if (seen.contains(key)) {
                    throw new SharingSyntaxException(where + ": axis " + key + " given twice", at);
                }
                seen.add(key);
                String bad = where + ": bad value '" + value + "' for " + key + "; allowed: " + axis.allowed()
                        + " (x = 1.." + Share.MAX_WAYS + ")";
                switch (axis) {
                    case TD -> {
                        td = TdMode.bySpelling(value);
                        if (td == null) {
                            throw new SharingSyntaxException(bad, at);
                        }
                    }
                    case QP -> {
                        int colon = value.indexOf(':');
                        String share = colon < 0 ? value : value.substring(0, colon);
                        Share s = share(share, axis);
                        if (s == null) {
                            throw new SharingSyntaxException(bad, at);
                        }
                        if (colon >= 0) {
                            mode = QpMode.bySpelling(value.substring(colon + 1));
                            if (mode == null || mode == QpMode.DIRECT) {
                                throw new SharingSyntaxException(where + ": bad QP mode '" + value.substring(colon + 1)
                                        + "'; allowed: locked, combining", at);
                            }
                            if (s.width() <= 1) {
                                throw new SharingSyntaxException(where + ": mode " + mode
                                        + " applies only to a shared QP (shared or <x>way with x >= 2)", at);
                            }
                        } else {
                            mode = s.width() > 1 ? QpMode.COMBINING : QpMode.DIRECT;
                        }
                        shares[axis.ordinal()] = s;
                    }
                    default -> {
                        Share s = share(value, axis);
                        if (s == null) {
                            throw new SharingSyntaxException(bad, at);
                        }
                        shares[axis.ordinal()] = s;
                    }
                }
            }
            if (comma < 0) {
                break;
            }
            pos = comma + 1;
        }
        SharingConfig b = base == null ? STATIC_AXES : base.config();
        Share ctx = or(shares[Axis.CTX.ordinal()], b.ctx);
        Share pd = or(shares[Axis.PD.ordinal()], b.pd);
        Share mr = or(shares[Axis.MR.ordinal()], b.mr);
        Share buf = or(shares[Axis.BUF.ordinal()], b.buf);
        Share qp = or(shares[Axis.QP.ordinal()], b.qp);
        Share cq = or(shares[Axis.CQ.ordinal()], b.cq);
        Share srq = or(shares[Axis.SRQ.ordinal()], b.srq);
        QpMode m = mode != null ? mode : b.qpMode;
        String problem = check(ctx, td == null ? b.td : td, pd, mr, buf, qp, m, cq, srq);
        if (problem != null) {
            List<String> defaulted = new ArrayList<>();
            for (Axis ax : Axis.values()) {
                if (!seen.contains(ax.key()) && problem.contains(ax.key() + "=")) {
                    defaulted.add(ax.key());
                }
            }
            String from = base == null ? "category static (the base when no category comes first)" : "category " + base.spelling();
            throw new SharingSyntaxException("inconsistent sharing level '" + text.strip() + "': " + problem
                    + (defaulted.isEmpty() ? "" : "; " + String.join(", ", defaulted) + " not given, so taken from " + from
                    + ": write " + (defaulted.size() == 1 ? "it" : "them") + " too, or start from a category such as mpi-everywhere"), 0);
        }
        return new SharingConfig(ctx, td == null ? b.td : td, pd, mr, buf, qp, m, cq, srq);
    }

    private static Share or(Share s, Share dflt) {
        return s != null ? s : dflt;
    }

    private static String axisNames() {
        List<String> names = new ArrayList<>();
        for (Axis a : Axis.values()) {
            names.add(a.key());
        }
        return String.join(", ", names);
    }

    /** One share value for an axis, or null when it is not allowed there. */
    private static Share share(String v, Axis axis) {
        Share s = switch (v) {
            case "none" -> Share.NONE;
            case "per-qp" -> Share.PER_QP;
            case "per-thread" -> Share.PER_THREAD;
            case "shared" -> Share.ALL;
            default -> {
                if (v.length() < 4 || v.length() > 8 || !v.endsWith("way")) {
                    yield null;
                }
                String digits = v.substring(0, v.length() - 3);
                if (!digits.chars().allMatch(ch -> ch >= '0' && ch <= '9') || digits.startsWith("0")) {
                    yield null;
                }
                int x = Integer.parseInt(digits);
                yield x >= 1 && x <= Share.MAX_WAYS ? Share.ways(x) : null;
            }
        };
        if (s == null) {
            return null;
        }
        boolean ok = switch (s.kind()) {
            case NONE -> axis == Axis.SRQ;
            case PER_QP -> axis == Axis.CQ;
            default -> true;
        };
        return ok ? s : null;
    }
}
