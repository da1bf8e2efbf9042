package dev.scalep.policies;

import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.ConnectionOptions.AddressFamily;
import dev.scalep.verbs.GidType;
import dev.scalep.verbs.PathMtu;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every key of a policy file, each declared once with its type, range or spellings, default and
 * description, in the order files and {@code policy.schema.json} list them. {@link PolicyLoader}
 * checks files against these declarations and builds classes from them, {@link EndpointClass#defaults}
 * is every default, {@code scalep policy show} prints in this order and {@code SchemaAgreementTest}
 * holds the JSON Schema to it. Connection defaults are the verbs layer's ({@link ConnectionOptions#DEFAULTS}).
 */
public final class PolicyKeys {
    private PolicyKeys() {
    }

    static final int MAX_QUEUE_DEPTH = 65536;
    static final int MAX_POSTLIST = 4096;
    static final int MAX_INLINE = 4096;
    static final int MAX_POOL = 65536;
    static final int MAX_SRQ_DEPTH = 1 << 20;
    static final int MAX_CQ_DEPTH = 1 << 22;
    static final int MAX_MODERATION = 65535;
    static final int MAX_TEXT = 2000;
    static final int MAX_NAME = 64;
    static final int MAX_SHARING = 1024;

    private static final ConnectionOptions C = ConnectionOptions.DEFAULTS;

    // ---- top level -----------------------------------------------------------------------------

    /** {@code version}: the format version, 1. */
    public static final PolicyKey<Integer> VERSION = PolicyKey.integer("version", 1, 1, 1, null,
            "Format version.");
    /** {@code description} of the file. */
    public static final PolicyKey<String> FILE_DESCRIPTION = PolicyKey.text("description", PolicyKey.Type.STRING,
            MAX_TEXT, "What the file is for.");

    // ---- one class -----------------------------------------------------------------------------

    public static final PolicyKey<String> EXTENDS = PolicyKey.text("extends", PolicyKey.Type.NAME, MAX_NAME,
            "Inherit every setting of another class of this file, then override.");
    public static final PolicyKey<String> DESCRIPTION = PolicyKey.text("description", PolicyKey.Type.STRING, MAX_TEXT,
            "What the class is for.");
    public static final PolicyKey<SharingConfig> SHARING = PolicyKey.sharing("sharing", MAX_SHARING, Category.STATIC,
            EndpointClass::sharing, "A category (mpi-everywhere, 2x-dynamic, dynamic, shared-dynamic, static, "
                    + "mpi-threads) or the axes form, e.g. ctx=shared,td=paired,qp=4way:combining.");
    public static final PolicyKey<Integer> QUEUE_DEPTH = PolicyKey.integer("queue-depth", 1, MAX_QUEUE_DEPTH, 256,
            EndpointClass::queueDepth, "Send and receive queue depth in work requests.");
    /** The research's best value for 16 threads (with unsignaled 64). */
    public static final PolicyKey<Integer> POSTLIST = PolicyKey.integer("postlist", 1, MAX_POSTLIST, 32,
            EndpointClass::postlist, "Work requests per post (1 = no postlist).");
    public static final PolicyKey<Integer> UNSIGNALED = PolicyKey.integer("unsignaled", 1, MAX_QUEUE_DEPTH, 64,
            EndpointClass::unsignaled, "One signaled work request every N (1 = all signaled).");
    /** 32 bytes fits both mlx5 (about 60 bytes) and EFA (32 bytes). */
    public static final PolicyKey<Integer> INLINE = PolicyKey.integer("inline", 0, MAX_INLINE, 32,
            EndpointClass::inlineThreshold, "Inline payloads up to this many bytes (0 = never).");
    public static final PolicyKey<BlueFlame> BLUEFLAME = PolicyKey.spelled("blueflame", BlueFlame.values(),
            BlueFlame.AUTO, EndpointClass::blueFlame, "Write WQEs by programmed I/O with the doorbell (mlx5).");
    public static final PolicyKey<Boolean> CHAINED_ENABLED = PolicyKey.bool("chained.enabled", true,
            c -> c.chained().enabled(), "Post from a pre-initialised pool as chains.");
    public static final PolicyKey<Integer> CHAINED_POOL = PolicyKey.integer("chained.pool", 1, MAX_POOL, 256,
            c -> c.chained().poolSize(), "Pre-initialised work requests per endpoint.");
    public static final PolicyKey<Integer> CHAINED_MAX_LENGTH = PolicyKey.derived("chained.max-length", 1, MAX_POSTLIST,
            v -> Math.min(v.get(POSTLIST), v.get(CHAINED_POOL)), "min(postlist, pool)", c -> c.chained().maxLength(),
            "Longest chain per post (default: min(postlist, pool)).");
    public static final PolicyKey<Boolean> SGE_HEADER_PAYLOAD = PolicyKey.bool("sge-header-payload", false,
            EndpointClass::sgeHeaderPayload, "Post header and payload as two SGEs.");
    public static final PolicyKey<Integer> SRQ_DEPTH = PolicyKey.integer("srq.depth", 1, MAX_SRQ_DEPTH, 1024,
            c -> c.srq().depth(), "Receive work requests in the SRQ.");
    public static final PolicyKey<Integer> SRQ_REFILL_THRESHOLD = PolicyKey.derived("srq.refill-threshold", 0,
            MAX_SRQ_DEPTH, v -> v.get(SRQ_DEPTH) / 4, "depth/4", c -> c.srq().refillThreshold(),
            "Refill below this many posted receives (default: depth/4).");
    public static final PolicyKey<Integer> SRQ_REFILL_BATCH = PolicyKey.derived("srq.refill-batch", 1, MAX_SRQ_DEPTH,
            v -> Math.min(64, v.get(SRQ_DEPTH)), "min(64, depth)", c -> c.srq().refillBatch(),
            "Receives per refill (default: min(64, depth)).");
    public static final PolicyKey<Integer> CQ_DEPTH = PolicyKey.derived("cq.depth", 1, MAX_CQ_DEPTH,
            v -> CqSettings.entriesNeeded(v.get(SHARING), v.get(QUEUE_DEPTH)), "what its queues need",
            c -> c.cq().depth(), "CQ entries (default: what the queues it serves need, the send queues plus one "
                    + "queue-depth of receive slots per endpoint; smaller is an error).");
    public static final PolicyKey<Integer> CQ_MODERATION_COUNT = PolicyKey.integer("cq.moderation.count", 0,
            MAX_MODERATION, 0, c -> c.cq().moderationCount(), "Completions per event (0 = off).");
    public static final PolicyKey<Integer> CQ_MODERATION_PERIOD_US = PolicyKey.integer("cq.moderation.period-us", 0,
            MAX_MODERATION, 0, c -> c.cq().moderationPeriodUs(), "Microseconds before an event fires anyway (0 = off).");
    public static final PolicyKey<Ordering> SRD_ORDERING = PolicyKey.spelled("srd.ordering", Ordering.values(),
            Ordering.NONE, c -> c.srd().ordering(), "How ordering is restored on out-of-order devices.");
    public static final PolicyKey<Boolean> SRD_ATOMICS_EMULATION = PolicyKey.bool("srd.atomics-emulation", false,
            c -> c.srd().atomicsEmulation(), "Emulate atomics in software (SRD has none).");
    /** 256-byte receive slots less the 56-byte message header. */
    static final int DEFAULT_EAGER_LIMIT = 200;
    static final int MAX_EAGER_LIMIT = 65536;
    public static final PolicyKey<Integer> MESSAGES_EAGER_LIMIT = PolicyKey.integer("messages.eager-limit", 8,
            MAX_EAGER_LIMIT, DEFAULT_EAGER_LIMIT, c -> c.messages().eagerLimit(),
            "Largest tagged message sent eager, through a receive slot of this size plus a 56-byte header; "
                    + "longer messages go by rendezvous.");
    public static final PolicyKey<Integer> PORT = PolicyKey.integer("connection.port", 1, 255, C.port(),
            c -> c.connection().port(), "Port the QPs use (1-based).");
    public static final PolicyKey<Integer> GID_INDEX = PolicyKey.automatic("connection.gid-index", 0, 255, -1,
            "chosen by gid-type and address-family", c -> c.connection().gidIndex(),
            "Source GID index; absent: chosen by gid-type and address-family (RoCE v2 and IPv4-mapped preferred).");
    public static final PolicyKey<GidType> GID_TYPE = PolicyKey.choice("connection.gid-type", gidTypes(), C.gidType(),
            c -> c.connection().gidType(), "Automatic GID selection only among GIDs of this type.");
    public static final PolicyKey<AddressFamily> ADDRESS_FAMILY = PolicyKey.choice("connection.address-family",
            families(), C.family(), c -> c.connection().family(),
            "Automatic GID selection only among IPv4-mapped (ipv4) or other (ipv6) GIDs.");
    public static final PolicyKey<Integer> PATH_MTU = PolicyKey.automaticOneOf("connection.path-mtu",
            List.of(256, 512, 1024, 2048, 4096), PathMtu.AUTO, "the port's active MTU, lowered to the peer's",
            c -> c.connection().pathMtu(), "Path MTU in bytes; absent: the port's active MTU. Each side advertises "
                    + "its MTU and both use the smaller; above the port's active MTU is refused.");
    public static final PolicyKey<Integer> MIN_RNR_TIMER = PolicyKey.integer("connection.min-rnr-timer", 0, 31,
            C.minRnrTimer(), c -> c.connection().minRnrTimer(),
            "RNR NAK delay this side's responder asks for (IB encoding: 1 = 0.01 ms, 14 = 1 ms).");
    public static final PolicyKey<Integer> TIMEOUT = PolicyKey.integer("connection.timeout", 0, 31, C.timeout(),
            c -> c.connection().timeout(), "Local ACK timeout, 4.096 us x 2^timeout (0 = infinite).");
    public static final PolicyKey<Integer> RETRY_COUNT = PolicyKey.integer("connection.retry-count", 0, 7,
            C.retryCount(), c -> c.connection().retryCount(), "Transport retries (rxe retries forever at 7, so the default is 6).");
    public static final PolicyKey<Integer> RNR_RETRY = PolicyKey.integer("connection.rnr-retry", 0, 7, C.rnrRetry(),
            c -> c.connection().rnrRetry(), "Receiver-not-ready retries (7 = forever).");
    public static final PolicyKey<Integer> MAX_RD_ATOMIC = PolicyKey.automatic("connection.max-rd-atomic", 1, 255, 0,
            "the device's limit, at most 16", c -> c.connection().maxRdAtomic(),
            "RDMA reads/atomics in flight as initiator; absent: the device's max_qp_init_rd_atom, at most 16. "
                    + "Must not exceed the peer's max-dest-rd-atomic.");
    public static final PolicyKey<Integer> MAX_DEST_RD_ATOMIC = PolicyKey.automatic("connection.max-dest-rd-atomic", 1,
            255, 0, "the device's limit, at most 16", c -> c.connection().maxDestRdAtomic(),
            "RDMA reads/atomics accepted as responder; absent: the device's max_qp_rd_atom, at most 16.");
    public static final PolicyKey<Integer> SERVICE_LEVEL = PolicyKey.integer("connection.service-level", 0, 15,
            C.serviceLevel(), c -> c.connection().serviceLevel(), "Service level (SL).");
    public static final PolicyKey<Integer> TRAFFIC_CLASS = PolicyKey.integer("connection.traffic-class", 0, 255,
            C.trafficClass(), c -> c.connection().trafficClass(), "GRH traffic class (RoCE: DSCP/ECN).");
    public static final PolicyKey<Integer> HOP_LIMIT = PolicyKey.integer("connection.hop-limit", 1, 255, C.hopLimit(),
            c -> c.connection().hopLimit(), "GRH hop limit (on RoCE the kernel uses the IP route's hop limit instead).");
    public static final PolicyKey<OnUnsupported> ON_UNSUPPORTED = PolicyKey.spelled("on-unsupported",
            OnUnsupported.values(), OnUnsupported.DEGRADE, EndpointClass::onUnsupported,
            "What validation does when a device cannot honour a setting.");

    /** The top-level keys besides {@code classes}, in file order. */
    public static final List<PolicyKey<?>> TOP = List.of(VERSION, FILE_DESCRIPTION);

    /** Every key of a class, in file order. */
    public static final List<PolicyKey<?>> CLASS = List.of(EXTENDS, DESCRIPTION, SHARING, QUEUE_DEPTH, POSTLIST,
            UNSIGNALED, INLINE, BLUEFLAME, CHAINED_ENABLED, CHAINED_POOL, CHAINED_MAX_LENGTH, SGE_HEADER_PAYLOAD,
            SRQ_DEPTH, SRQ_REFILL_THRESHOLD, SRQ_REFILL_BATCH, CQ_DEPTH, CQ_MODERATION_COUNT, CQ_MODERATION_PERIOD_US,
            SRD_ORDERING, SRD_ATOMICS_EMULATION, MESSAGES_EAGER_LIMIT, PORT, GID_INDEX, GID_TYPE, ADDRESS_FAMILY, PATH_MTU, MIN_RNR_TIMER,
            TIMEOUT, RETRY_COUNT, RNR_RETRY, MAX_RD_ATOMIC, MAX_DEST_RD_ATOMIC, SERVICE_LEVEL, TRAFFIC_CLASS, HOP_LIMIT,
            ON_UNSUPPORTED);

    /** The class keys by dotted path. */
    private static final Map<String, PolicyKey<?>> BY_PATH = new LinkedHashMap<>();
    /** What each section holds: a key's name, or a nested section's name, in file order ("" = the class). */
    private static final Map<String, List<String>> SECTIONS = new LinkedHashMap<>();

    static {
        for (PolicyKey<?> k : CLASS) {
            if (BY_PATH.put(k.path(), k) != null) {
                throw new IllegalStateException("key " + k.path() + " declared twice");
            }
            String path = k.path();
            String section = "";
            for (String part : path.split("\\.")) {
                List<String> names = SECTIONS.computeIfAbsent(section, s -> new ArrayList<>());
                if (!names.contains(part)) {
                    names.add(part);
                }
                section = section.isEmpty() ? part : section + "." + part;
            }
        }
    }

    /** The class key at {@code path}, or null (a section or nothing). */
    public static PolicyKey<?> byPath(String path) {
        return BY_PATH.get(path);
    }

    /** What section {@code section} holds ("" for the class itself): key and section names, in file order. */
    public static List<String> section(String section) {
        return SECTIONS.getOrDefault(section, List.of());
    }

    /** Whether {@code path} is a section ({@code chained}, {@code cq.moderation}). */
    public static boolean isSection(String path) {
        return !path.isEmpty() && SECTIONS.containsKey(path);
    }

    /** Every section path, in file order ({@code chained}, {@code srq}, {@code cq}, {@code cq.moderation}, ...). */
    public static List<String> sections() {
        return SECTIONS.keySet().stream().filter(s -> !s.isEmpty()).toList();
    }

    /** A class built from {@code v}: each setting as written or its default. */
    static EndpointClass build(String name, PolicyKey.Values v) {
        return new EndpointClass(name, v.get(SHARING), v.get(QUEUE_DEPTH), v.get(POSTLIST), v.get(UNSIGNALED),
                v.get(INLINE), v.get(BLUEFLAME),
                new ChainedPosts(v.get(CHAINED_ENABLED), v.get(CHAINED_POOL), v.get(CHAINED_MAX_LENGTH)),
                v.get(SGE_HEADER_PAYLOAD),
                new SrqSettings(v.get(SRQ_DEPTH), v.get(SRQ_REFILL_THRESHOLD), v.get(SRQ_REFILL_BATCH)),
                new CqSettings(v.get(CQ_DEPTH), v.get(CQ_MODERATION_COUNT), v.get(CQ_MODERATION_PERIOD_US)),
                new SrdSettings(v.get(SRD_ORDERING), v.get(SRD_ATOMICS_EMULATION)), v.get(ON_UNSUPPORTED),
                new ConnectionOptions(v.get(PORT), v.get(GID_INDEX), v.get(GID_TYPE), v.get(ADDRESS_FAMILY),
                        v.get(PATH_MTU), v.get(MIN_RNR_TIMER), v.get(TIMEOUT), v.get(RETRY_COUNT), v.get(RNR_RETRY),
                        v.get(MAX_RD_ATOMIC), v.get(MAX_DEST_RD_ATOMIC), v.get(SERVICE_LEVEL), v.get(TRAFFIC_CLASS),
                        v.get(HOP_LIMIT)),
                new MessageSettings(v.get(MESSAGES_EAGER_LIMIT)));
    }

    /** The values of a class: {@code written} (by path) where present, each other key's default. */
    static PolicyKey.Values values(Map<String, ?> written) {
        return new PolicyKey.Values() {
            @Override
            @SuppressWarnings("unchecked")
            public <T> T get(PolicyKey<T> key) {
                return written.containsKey(key.path()) ? (T) written.get(key.path()) : key.defaultIn(this);
            }
        };
    }

    private static Map<String, GidType> gidTypes() {
        Map<String, GidType> m = new LinkedHashMap<>();
        m.put("any", null);
        for (GidType t : GidType.values()) {
            m.put(t.spelling(), t);
        }
        return m;
    }

    private static Map<String, AddressFamily> families() {
        Map<String, AddressFamily> m = new LinkedHashMap<>();
        for (AddressFamily f : AddressFamily.values()) {
            m.put(f.spelling(), f);
        }
        return m;
    }
}
