package dev.scalep.policies;

import dev.scalep.verbs.ConnectionOptions;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.GidEntry;
import dev.scalep.verbs.PortInfo;
import dev.scalep.verbs.VerbsException;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Checks a policy's classes against the queue depth and a device's capabilities and ports. */
final class Validation {
    private Validation() {
    }

    /** {@code ports} null: the connection section is not checked (no device, or capabilities only). */
    static EffectivePolicy validate(Policy p, String device, DeviceCapabilities caps, List<PortInfo> ports) {
        if (caps != null && device == null) {
            throw new IllegalArgumentException("device name is null");
        }
        List<PolicyError> errors = new ArrayList<>();
        List<Degradation> degradations = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        Map<String, EndpointClass> out = new LinkedHashMap<>();
        for (EndpointClass c : p.classes().values()) {
            One one = new One(p, c, device, errors, degradations);
            out.put(c.name(), one.run(caps, ports, notes));
        }
        if (!errors.isEmpty()) {
            throw new PolicyException(errors);
        }
        return new EffectivePolicy(p.source(), device, out, degradations, notes);
    }

    /**
     * The fewest entries a CQ must hold at sharing {@code s} and queue depth {@code qd}: the send
     * queues of the QPs it serves plus the receive slots of their endpoints (one queue depth each),
     * for the narrowest instance the sharing allows (a CQ shared by all threads serves at least one).
     * It is also the default of {@code cq.depth}.
     */
    static long cqNeed(SharingConfig s, int qd) {
        int qpWidth = narrow(s.qp().width());
        int members = s.cq().kind() == Share.Kind.PER_QP ? qpWidth : narrow(s.cq().width());
        long qps = (members + qpWidth - 1) / qpWidth;
        return qps * qd + (long) members * qd;
    }

    private static int narrow(int width) {
        return width == Integer.MAX_VALUE || width < 1 ? 1 : width;
    }

    /** The checks of one class; fields hold the values as they are being adjusted. */
    private static final class One {
        final Policy p;
        final EndpointClass c;
        final String device;
        final List<PolicyError> errors;
        final List<Degradation> degradations;
        final boolean fail;

        One(Policy p, EndpointClass c, String device, List<PolicyError> errors, List<Degradation> degradations) {
            this.p = p;
            this.c = c;
            this.device = device;
            this.errors = errors;
            this.degradations = degradations;
            this.fail = c.onUnsupported() == OnUnsupported.FAIL;
        }

        /**
         * A setting that cannot be honoured: an error when the class says fail and the value was
         * written in the file, otherwise a reported degradation. Returns whether to apply {@code to}.
         */
        boolean unsupported(PolicyKey<?> key, Object from, Object to, String reason) {
            SourceLocation where = p.origin(c.name(), key.path());
            boolean explicit = where != null || !p.fromFile(c.name());
            if (fail && explicit) {
                SourceLocation at = where != null ? where : p.location(c.name());
                errors.add(new PolicyError(at, "class " + c.name() + ": " + reason + " (on-unsupported: fail)"));
                return false;
            }
            String why = explicit ? reason : reason + " (default)";
            degradations.add(new Degradation(c.name(), key.path(), String.valueOf(from), String.valueOf(to), why));
            return true;
        }

        /** Whether {@code key} was written in the file (every setting of a class built in code counts as written). */
        boolean written(PolicyKey<?> key) {
            return p.origin(c.name(), key.path()) != null || !p.fromFile(c.name());
        }

        /** Where {@code key} was written, else the first of {@code others} written, else the class name. */
        SourceLocation at(PolicyKey<?> key, PolicyKey<?>... others) {
            SourceLocation where = p.origin(c.name(), key.path());
            for (int i = 0; where == null && i < others.length; i++) {
                where = p.origin(c.name(), others[i].path());
            }
            return where != null ? where : p.location(c.name());
        }

        /**
         * Two settings of the file that cannot both hold: an error whatever {@code on-unsupported}
         * says, since no device could honour them.
         */
        void contradiction(PolicyKey<?> key, String reason) {
            errors.add(new PolicyError(at(key), "class " + c.name() + ": " + reason
                    + " (the class contradicts itself: an error whatever on-unsupported says)"));
        }

        EndpointClass run(DeviceCapabilities caps, List<PortInfo> ports, List<String> notes) {
            String cn = "class " + c.name() + ": ";
            String on = device == null ? "" : " on " + device;
            SharingConfig sharing = c.sharing();
            int qd = c.queueDepth();
            int postlist = c.postlist();
            int q = c.unsignaled();
            int inline = c.inlineThreshold();
            BlueFlame bf = c.blueFlame();
            ChainedPosts chained = c.chained();
            SrqSettings srq = c.srq();
            CqSettings cq = c.cq();
            SrdSettings srd = c.srd();

            if (caps != null && qd > caps.maxQpWr()
                    && unsupported(PolicyKeys.QUEUE_DEPTH, qd, caps.maxQpWr(), "queue-depth " + qd + " > device limit " + caps.maxQpWr() + on)) {
                qd = caps.maxQpWr();
            }
            int writtenQd = c.queueDepth();
            if (postlist > writtenQd && written(PolicyKeys.POSTLIST)) {
                contradiction(PolicyKeys.POSTLIST, "postlist " + postlist + " > queue-depth " + writtenQd
                        + " (a list cannot be longer than the queue it is posted to)");
            } else if (postlist > qd && unsupported(PolicyKeys.POSTLIST, postlist, qd, "postlist " + postlist + " > queue-depth " + qd)) {
                postlist = qd;
            }
            if (caps != null && !caps.unsignaled() && q > 1
                    && unsupported(PolicyKeys.UNSIGNALED, q, 1, "unsignaled " + q + " unsupported" + on + " (every WR is signaled)")) {
                q = 1;
            }
            if (caps != null && caps.unsignaled() && !caps.inOrder() && q > 1
                    && unsupported(PolicyKeys.UNSIGNALED, q, 1, "unsignaled " + q + " on " + device + ", which completes out of order: "
                    + "an unsignaled WR cannot be retired by a later completion (every WR is signaled)")) {
                q = 1;
            }
            if (c.unsignaled() > writtenQd && written(PolicyKeys.UNSIGNALED)) { // as written, whatever the device does
                contradiction(PolicyKeys.UNSIGNALED, "unsignaled interval " + c.unsignaled() + " > queue-depth " + writtenQd
                        + " (one WR of every queue-depth must be signaled, or the queue fills with unretired WRs)");
            } else if (q > qd && unsupported(PolicyKeys.UNSIGNALED, q, qd, "unsignaled interval " + q + " > queue-depth " + qd
                    + " (one WR of every queue-depth must be signaled)")) {
                q = qd;
            }
            long need = cqNeed(sharing, writtenQd);
            if (cq.depth() > 0 && cq.depth() < need && written(PolicyKeys.CQ_DEPTH)) {
                contradiction(PolicyKeys.CQ_DEPTH, "cq.depth " + cq.depth() + " is smaller than the queues it serves: " + need
                        + " entries (send queues plus receive slots of queue-depth " + writtenQd + " each, at sharing "
                        + name(sharing) + "); write at least " + need + ", or leave cq.depth out to size it from the queues");
            }
            if (chained.maxLength() > writtenQd && written(PolicyKeys.CHAINED_MAX_LENGTH)) {
                contradiction(PolicyKeys.CHAINED_MAX_LENGTH, "chained.max-length " + chained.maxLength() + " > queue-depth " + writtenQd);
            } else if (chained.maxLength() > qd && unsupported(PolicyKeys.CHAINED_MAX_LENGTH, chained.maxLength(), qd,
                    "chained.max-length " + chained.maxLength() + " > queue-depth " + qd)) {
                chained = new ChainedPosts(chained.enabled(), chained.poolSize(), qd);
            }
            if (caps != null && inline > caps.maxInline() && unsupported(PolicyKeys.INLINE, inline, caps.maxInline(),
                    "inline " + inline + " > device limit " + caps.maxInline() + on)) {
                inline = caps.maxInline();
            }
            if (caps != null && sharing.td() != TdMode.NONE && !caps.threadDomains()) {
                SharingConfig to = sharing.withTd(TdMode.NONE);
                if (unsupported(PolicyKeys.SHARING, name(sharing), name(to), "td=" + sharing.td() + " needs thread domains, which "
                        + device + " lacks (each QP keeps its own doorbell behind the provider's QP lock); sharing "
                        + name(sharing))) {
                    sharing = to;
                }
            }
            if (caps != null && bf == BlueFlame.ON && !caps.blueFlame()
                    && unsupported(PolicyKeys.BLUEFLAME, bf, BlueFlame.OFF, "blueflame on unsupported" + on)) {
                bf = BlueFlame.OFF;
            }
            if (caps != null && sharing.srq() != Share.NONE && caps.maxSrq() == 0) {
                SharingConfig to = sharing.with(SharingConfig.Axis.SRQ, Share.NONE);
                if (unsupported(PolicyKeys.SHARING, name(sharing), name(to), "srq=" + sharing.srq() + " but " + device
                        + " has no SRQs; sharing " + name(sharing))) {
                    sharing = to;
                }
            }
            if (caps != null && sharing.srq() != Share.NONE && srq.depth() > caps.maxSrqWr()
                    && unsupported(PolicyKeys.SRQ_DEPTH, srq.depth(), caps.maxSrqWr(),
                    "srq.depth " + srq.depth() + " > device limit " + caps.maxSrqWr() + on)) {
                int d = caps.maxSrqWr();
                srq = new SrqSettings(d, Math.min(srq.refillThreshold(), d), Math.max(1, Math.min(srq.refillBatch(), d)));
            }
            if (caps != null && cq.depth() > caps.maxCqe() && unsupported(PolicyKeys.CQ_DEPTH, cq.depth(), caps.maxCqe(),
                    "cq.depth " + cq.depth() + " > device limit " + caps.maxCqe() + on)) {
                cq = new CqSettings(caps.maxCqe(), Math.min(cq.moderationCount(), caps.maxCqe()), cq.moderationPeriodUs());
            }
            ConnectionOptions conn = c.connection();
            if (caps != null && conn.maxRdAtomic() > caps.maxQpInitRdAtom()
                    && unsupported(PolicyKeys.MAX_RD_ATOMIC, conn.maxRdAtomic(), caps.maxQpInitRdAtom(),
                    "connection.max-rd-atomic " + conn.maxRdAtomic() + " > device limit max_qp_init_rd_atom "
                            + caps.maxQpInitRdAtom() + on)) {
                conn = conn.withRdAtomic(caps.maxQpInitRdAtom(), conn.maxDestRdAtomic());
            }
            if (caps != null && conn.maxDestRdAtomic() > caps.maxQpRdAtom()
                    && unsupported(PolicyKeys.MAX_DEST_RD_ATOMIC, conn.maxDestRdAtomic(), caps.maxQpRdAtom(),
                    "connection.max-dest-rd-atomic " + conn.maxDestRdAtomic() + " > device limit max_qp_rd_atom "
                            + caps.maxQpRdAtom() + on)) {
                conn = conn.withRdAtomic(conn.maxRdAtomic(), caps.maxQpRdAtom());
            }
            if (ports != null) {
                conn = connection(conn, ports);
            }
            if (caps != null && caps.inOrder()) {
                if (srd.ordering() != Ordering.NONE) {
                    notes.add(cn + "srd.ordering " + srd.ordering() + " is a no-op on in-order device " + device
                            + " (delivery is already in order) \u2192 none");
                    srd = new SrdSettings(Ordering.NONE, srd.atomicsEmulation());
                }
                if (srd.atomicsEmulation()) {
                    notes.add(cn + "srd.atomics-emulation is meant for SRD devices; on in-order device " + device
                            + " atomics are emulated in software anyway (harmless)");
                }
            } else if (caps != null && srd.ordering() == Ordering.NONE) {
                notes.add(cn + device + " delivers data and completions out of order and srd.ordering is none: "
                        + "completion order is not post order");
            }
            if (postlist > 1 && bf == BlueFlame.ON) {
                notes.add(cn + "blueflame on applies to single posts only; lists of " + postlist + " are DMA-read by the NIC");
            }
            return new EndpointClass(c.name(), sharing, qd, postlist, q, inline, bf, chained, c.sgeHeaderPayload(),
                    srq, cq, srd, c.onUnsupported(), conn, c.messages());
        }

        /**
         * The connection section against the device's ports: the port must exist and the GID (the
         * index given, or the automatic choice among the type and family given) must be in its
         * table; neither has a substitute that would reach the same network, so both are errors
         * whatever {@code on-unsupported} says. A path MTU above the port's active MTU degrades to it.
         */
        ConnectionOptions connection(ConnectionOptions conn, List<PortInfo> ports) {
            String cn = "class " + c.name() + ": ";
            PortInfo port = null;
            for (PortInfo pi : ports) {
                if (pi.port() == conn.port()) {
                    port = pi;
                }
            }
            if (port == null) {
                String has = ports.isEmpty() ? device + " reports no ports" : ports.size() == 1
                        ? device + " has port " + ports.getFirst().port() + " only"
                        : device + " has ports " + String.join(", ", ports.stream().map(x -> String.valueOf(x.port())).toList());
                errors.add(new PolicyError(at(PolicyKeys.PORT), cn + PolicyKeys.PORT.path() + " " + conn.port()
                        + " does not exist: " + has));
                return conn;
            }
            String where = device + " port " + port.port();
            if (conn.gidIndex() >= 0) {
                GidEntry g = port.gid(conn.gidIndex());
                if (g == null) {
                    int top = port.gids().stream().mapToInt(GidEntry::index).max().orElse(-1);
                    errors.add(new PolicyError(at(PolicyKeys.GID_INDEX), cn + PolicyKeys.GID_INDEX.path() + " "
                            + conn.gidIndex() + " is not in the GID table of " + where + (top < 0 ? " (it is empty)"
                            : " (indices up to " + top + ": " + port.describeGids() + ")")));
                    return conn;
                }
            }
            if (conn.gidIndex() >= 0 || !port.gids().isEmpty()) {
                try {
                    conn.selectGid("policy", device, port);
                } catch (VerbsException e) {
                    String wanted = PolicyKeys.GID_TYPE.path() + " " + PolicyKeys.GID_TYPE.spell(conn.gidType()) + ", "
                            + PolicyKeys.ADDRESS_FAMILY.path() + " " + PolicyKeys.ADDRESS_FAMILY.spell(conn.family());
                    String what = conn.gidIndex() >= 0
                            ? PolicyKeys.GID_INDEX.path() + " " + conn.gidIndex() + " of " + where + " is "
                            + port.gid(conn.gidIndex()) + ", which does not match " + wanted
                            : "no GID of " + where + " matches " + wanted + " (GIDs " + port.describeGids() + ")";
                    errors.add(new PolicyError(conn.gidIndex() >= 0 ? at(PolicyKeys.GID_INDEX)
                            : at(PolicyKeys.GID_TYPE, PolicyKeys.ADDRESS_FAMILY), cn + what));
                    return conn;
                }
            }
            int mtu = conn.pathMtu();
            if (mtu > port.activeMtu() && unsupported(PolicyKeys.PATH_MTU, mtu, port.activeMtu(),
                    PolicyKeys.PATH_MTU.path() + " " + mtu + " > active MTU " + port.activeMtu() + " of " + where)) {
                conn = conn.withPathMtu(port.activeMtu());
            }
            return conn;
        }

        static String name(SharingConfig s) {
            Category cat = s.category();
            return cat != null ? cat.spelling() : s.toString();
        }
    }
}
