package dev.scalep.policies;

import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.common.ScalarStyle;
import org.snakeyaml.engine.v2.composer.Composer;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.parser.Parser;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;
import org.snakeyaml.engine.v2.schema.JsonSchema;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Loads endpoint policies from YAML (format: {@code policies/README.md}; schema:
 * {@code dev/scalep/policies/policy.schema.json}). Thread-safe (stateless). The keys, their types,
 * ranges and defaults are not written here: they are {@link PolicyKeys}, which this class walks.
 *
 * <p>The stages, in reading order: bytes to text ({@code decode}: strict UTF-8, no control
 * characters), text to YAML nodes ({@code compose}, bounded by {@code BoundedParser}), nodes to
 * located values ({@code walkTop}, {@code walkMap}, {@code scalar}, checked against the key
 * declarations), {@code extends} applied ({@code merge}), and the class built with the checks that
 * relate two keys ({@code build}).
 *
 * <p>Loading is safe and bounded: the YAML is composed into nodes (never constructed into
 * objects, so no tags can instantiate anything), input is limited to {@link #MAX_BYTES} bytes of
 * strict UTF-8, nesting to {@link #MAX_DEPTH} levels, parser events to {@value #MAX_EVENTS},
 * aliases to collections to {@link #MAX_ALIASES}. Keys are strict: unknown keys (with a "did you
 * mean" suggestion), duplicate keys, wrong types and out-of-range numbers are errors. Every error
 * found is reported as {@code file:line:column: message} in one {@link PolicyException}.
 */
public final class PolicyLoader {
    /** Largest accepted input in bytes. */
    public static final int MAX_BYTES = 1 << 20;
    /** Deepest accepted nesting of mappings and sequences. */
    public static final int MAX_DEPTH = 16;
    /** Most aliases to mappings or sequences (alias bombs are rejected). */
    public static final int MAX_ALIASES = 8;
    /** Most YAML events (bounds the work for any input). */
    public static final int MAX_EVENTS = 200_000;
    /** Most endpoint classes per file. */
    public static final int MAX_CLASSES = 256;
    /** Loading stops collecting after this many errors. */
    public static final int MAX_ERRORS = 100;
    /** The class-path folder that holds the catalog. */
    public static final String CATALOG_RESOURCE = "/dev/scalep/policies/catalog/";
    /** The catalog entries, by name (file {@code policies/catalog/NAME.yaml}). */
    public static final List<String> CATALOG = List.of("mpi-everywhere", "2x-dynamic", "dynamic", "shared-dynamic",
            "static", "mpi-threads", "recommended-mlx5", "recommended-efa");

    static final Pattern CLASS_NAME = Pattern.compile("[a-z][a-z0-9_-]{0,63}");

    private PolicyLoader() {
    }

    // ---- entry points ------------------------------------------------------------------------

    /** Load a policy file; errors are located in {@code file.toString()}. */
    public static Policy load(Path file) {
        String label = file.toString();
        try (InputStream in = Files.newInputStream(file)) {
            return parse(label, readBounded(label, in));
        } catch (NoSuchFileException e) {
            throw new PolicyException(new PolicyError(new SourceLocation(label, 1, 1), "no such file"));
        } catch (IOException e) {
            throw new PolicyException(new PolicyError(new SourceLocation(label, 1, 1), "cannot read: " + e.getMessage()));
        }
    }

    /** The catalog entry {@code name} (one of {@link #CATALOG}) from the class path. */
    public static Policy loadCatalog(String name) {
        if (!CATALOG.contains(name)) {
            throw new IllegalArgumentException("no catalog policy '" + name + "'" + Suggest.hint(name, CATALOG)
                    + " (catalog: " + String.join(", ", CATALOG) + ")");
        }
        String label = "catalog/" + name + ".yaml";
        try (InputStream in = PolicyLoader.class.getResourceAsStream(CATALOG_RESOURCE + name + ".yaml")) {
            if (in == null) {
                throw new IllegalStateException("catalog resource " + CATALOG_RESOURCE + name + ".yaml missing from the class path");
            }
            return parse(label, readBounded(label, in));
        } catch (IOException e) {
            throw new PolicyException(new PolicyError(new SourceLocation(label, 1, 1), "cannot read: " + e.getMessage()));
        }
    }

    /** Parse policy text (already decoded). */
    public static Policy parse(String label, String text) {
        return parse(label, text.getBytes(StandardCharsets.UTF_8));
    }

    /** Parse policy bytes, which must be UTF-8 (an optional UTF-8 byte order mark is skipped). */
    public static Policy parse(String label, byte[] bytes) {
        return parse(label, bytes, new int[1]);
    }

    /** As {@link #parse(String, byte[])}, and {@code eventsRead[0]} gets the YAML events the load consumed (its work). */
    static Policy parse(String label, byte[] bytes, int[] eventsRead) {
        Run r = new Run(label);
        try {
            return r.run(bytes);
        } finally {
            eventsRead[0] = r.events;
        }
    }

    private static byte[] readBounded(String label, InputStream in) throws IOException {
        byte[] b = in.readNBytes(MAX_BYTES + 1);
        if (b.length > MAX_BYTES) {
            throw new PolicyException(new PolicyError(new SourceLocation(label, 1, 1),
                    "input larger than " + MAX_BYTES + " bytes; policies are limited to 1 MiB"));
        }
        return b;
    }

    // ---- values as read ---------------------------------------------------------------------

    /** A scalar value read from the file and where it was. */
    record Val(Object value, SourceLocation where) {
    }

    /** One class as written: its own keys (flattened, dotted) before {@code extends} is applied. */
    private record RawClass(String name, SourceLocation where, Map<String, Val> vals) {
    }

    /** An abort of the whole load (limits exceeded, syntax errors). */
    private static final class Abort extends RuntimeException {
        Abort() {
            super(null, null, false, false);
        }
    }

    // ---- one load ------------------------------------------------------------------------------

    private static final class Run {
        final String label;
        final List<PolicyError> errors = new ArrayList<>();
        Mark lastMark;
        /** YAML events read so far. */
        int events;

        Run(String label) {
            this.label = label;
        }

        SourceLocation at(Optional<Mark> m) {
            return m.map(this::at).orElseGet(() -> lastMark != null ? at(lastMark) : new SourceLocation(label, 1, 1));
        }

        SourceLocation at(Mark m) {
            return new SourceLocation(label, m.getLine() + 1, m.getColumn() + 1);
        }

        SourceLocation at(Node n) {
            return at(n.getStartMark());
        }

        void error(SourceLocation where, String message) {
            if (errors.size() < MAX_ERRORS) {
                errors.add(new PolicyError(where, message));
            }
            if (errors.size() >= MAX_ERRORS) {
                errors.add(new PolicyError(where, "too many errors; stopping"));
                throw new Abort();
            }
        }

        Policy run(byte[] bytes) {
            try {
                String text = decode(bytes);
                Node root = compose(text);
                Policy p = root == null ? null : walkTop(root);
                if (!errors.isEmpty()) {
                    throw new PolicyException(errors);
                }
                if (p == null) {
                    throw new PolicyException(new PolicyError(new SourceLocation(label, 1, 1),
                            "empty policy: expected a mapping with 'classes'"));
                }
                return p;
            } catch (Abort a) {
                throw new PolicyException(errors);
            }
        }

        // ---- bytes → text ----

        String decode(byte[] bytes) {
            if (bytes.length > MAX_BYTES) {
                error(new SourceLocation(label, 1, 1), "input larger than " + MAX_BYTES + " bytes; policies are limited to 1 MiB");
                throw new Abort();
            }
            int start = 0;
            if (bytes.length >= 3 && (bytes[0] & 0xff) == 0xef && (bytes[1] & 0xff) == 0xbb && (bytes[2] & 0xff) == 0xbf) {
                start = 3;
            } else if (bytes.length >= 2 && (((bytes[0] & 0xff) == 0xfe && (bytes[1] & 0xff) == 0xff)
                    || ((bytes[0] & 0xff) == 0xff && (bytes[1] & 0xff) == 0xfe))) {
                error(new SourceLocation(label, 1, 1), "UTF-16 input (byte order mark); policies must be UTF-8");
                throw new Abort();
            }
            CharsetDecoder dec = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
            ByteBuffer in = ByteBuffer.wrap(bytes, start, bytes.length - start);
            CharBuffer out = CharBuffer.allocate(bytes.length + 1);
            CoderResult r = dec.decode(in, out, true);
            if (!r.isError()) {
                r = dec.flush(out);
            }
            out.flip();
            if (r.isError()) {
                SourceLocation where = locate(out, out.limit());
                error(where, "invalid UTF-8 (byte 0x" + Integer.toHexString(bytes[in.position()] & 0xff)
                        + " at offset " + in.position() + "); policies must be UTF-8");
                throw new Abort();
            }
            String text = out.toString();
            for (int i = 0; i < text.length(); ) {
                int cp = text.codePointAt(i);
                if (!StreamReader.isPrintable(cp)) {
                    error(locate(text, i), String.format("control character U+%04X is not allowed in YAML", cp));
                    throw new Abort();
                }
                i += Character.charCount(cp);
            }
            return text;
        }

        SourceLocation locate(CharSequence text, int end) {
            int line = 1;
            int col = 1;
            for (int i = 0; i < end; i++) {
                char c = text.charAt(i);
                if (c == '\n') {
                    line++;
                    col = 1;
                } else if (!Character.isLowSurrogate(c)) {
                    col++;
                }
            }
            return new SourceLocation(label, line, col);
        }

        // ---- text → nodes ----

        Node compose(String text) {
            LoadSettings settings = LoadSettings.builder()
                    .setLabel(label)
                    .setSchema(new JsonSchema())
                    .setAllowDuplicateKeys(false)
                    .setAllowRecursiveKeys(false)
                    .setMaxAliasesForCollections(MAX_ALIASES)
                    .setCodePointLimit(MAX_BYTES)
                    .setUseMarks(true)
                    .setParseComments(false)
                    .build();
            Parser parser = new BoundedParser(new ParserImpl(settings, new StreamReader(settings, text)));
            try {
                Composer composer = new Composer(settings, parser);
                return composer.getSingleNode().orElse(null);
            } catch (MarkedYamlEngineException e) {
                String msg = e.getProblem() != null ? e.getProblem() : e.getMessage();
                if (e.getContext() != null) {
                    msg = e.getContext() + ": " + msg;
                }
                error(at(e.getProblemMark().or(e::getContextMark)), "YAML syntax: " + oneLine(msg));
                throw new Abort();
            } catch (YamlEngineException e) {
                String msg = e.getMessage() == null ? e.toString() : e.getMessage();
                if (msg.contains("aliases")) {
                    msg = "too many aliases to mappings or sequences (at most " + MAX_ALIASES + "); alias bombs are rejected";
                } else {
                    msg = "YAML: " + oneLine(msg);
                }
                error(at(Optional.ofNullable(lastMark)), msg);
                throw new Abort();
            }
        }

        /** Counts events and nesting depth, so the (recursive) composer never goes deep or long. */
        final class BoundedParser implements Parser {
            final Parser in;
            int depth;

            BoundedParser(Parser in) {
                this.in = in;
            }

            @Override
            public boolean checkEvent(Event.ID id) {
                return in.checkEvent(id);
            }

            @Override
            public Event peekEvent() {
                return in.peekEvent();
            }

            @Override
            public boolean hasNext() {
                return in.hasNext();
            }

            @Override
            public Event next() {
                Event e = in.next();
                e.getStartMark().ifPresent(m -> lastMark = m);
                if (++events > MAX_EVENTS) {
                    error(at(e.getStartMark()), "too many YAML nodes (more than " + MAX_EVENTS + ")");
                    throw new Abort();
                }
                switch (e.getEventId()) {
                    case SequenceStart, MappingStart -> {
                        if (++depth > MAX_DEPTH) {
                            error(at(e.getStartMark()), "nesting deeper than " + MAX_DEPTH + " levels");
                            throw new Abort();
                        }
                    }
                    case SequenceEnd, MappingEnd -> depth--;
                    default -> {
                    }
                }
                return e;
            }
        }

        // ---- nodes → model ----

        Policy walkTop(Node root) {
            if (!(root instanceof MappingNode m)) {
                error(at(root), "the policy must be a mapping with 'classes', not " + describe(root));
                return null;
            }
            Map<String, Val> top = new LinkedHashMap<>();
            MappingNode classesNode = null;
            Map<String, SourceLocation> seen = new HashMap<>();
            for (NodeTuple t : m.getValue()) {
                String key = key(t.getKeyNode(), seen);
                if (key == null) {
                    continue;
                }
                PolicyKey<?> f = topKey(key);
                if (key.equals(CLASSES)) {
                    if (t.getValueNode() instanceof MappingNode cm) {
                        classesNode = cm;
                    } else {
                        error(at(t.getValueNode()), "'classes' must be a mapping of class name to settings, not "
                                + describe(t.getValueNode()));
                    }
                } else if (f == null) {
                    unknown(t.getKeyNode(), key, topNames(), "at the top level");
                } else {
                    scalar(f, t.getValueNode(), "'" + key + "'", top, key);
                }
            }
            if (!seen.containsKey(CLASSES)) {
                error(at(m), "missing 'classes': a policy names at least one endpoint class");
                return null;
            }
            if (classesNode == null) {
                return null;
            }
            Map<String, RawClass> raw = new LinkedHashMap<>();
            Map<String, SourceLocation> seenClasses = new HashMap<>();
            for (NodeTuple t : classesNode.getValue()) {
                String name = key(t.getKeyNode(), seenClasses);
                if (name == null) {
                    continue;
                }
                if (!CLASS_NAME.matcher(name).matches()) {
                    error(at(t.getKeyNode()), "bad class name '" + clip(name)
                            + "': use lower-case letters, digits, '-' and '_', starting with a letter, at most 64 characters");
                    continue;
                }
                if (raw.size() >= MAX_CLASSES) {
                    error(at(t.getKeyNode()), "more than " + MAX_CLASSES + " classes");
                    break;
                }
                if (!(t.getValueNode() instanceof MappingNode cm)) {
                    error(at(t.getValueNode()), "class " + name + " must be a mapping of settings ({} for all defaults), not "
                            + describe(t.getValueNode()));
                    continue;
                }
                Map<String, Val> vals = new LinkedHashMap<>();
                walkMap(cm, "", vals, "class " + name);
                raw.put(name, new RawClass(name, at(t.getKeyNode()), vals));
            }
            if (raw.isEmpty() && errors.isEmpty()) {
                error(at(classesNode), "'classes' is empty: a policy names at least one endpoint class");
            }
            Map<String, Map<String, Val>> merged = new LinkedHashMap<>();
            for (RawClass rc : raw.values()) {
                merge(rc, raw, merged, new ArrayList<>());
            }
            Map<String, EndpointClass> classes = new LinkedHashMap<>();
            Map<String, Map<String, SourceLocation>> origins = new LinkedHashMap<>();
            Map<String, SourceLocation> classWhere = new LinkedHashMap<>();
            for (RawClass rc : raw.values()) {
                Map<String, Val> v = merged.get(rc.name());
                if (v == null) {
                    continue;
                }
                EndpointClass ec = build(rc.name(), v, rc.where());
                if (ec != null) {
                    classes.put(rc.name(), ec);
                    Map<String, SourceLocation> o = new LinkedHashMap<>();
                    v.forEach((k, val) -> o.put(k, val.where()));
                    origins.put(rc.name(), o);
                    classWhere.put(rc.name(), rc.where());
                }
            }
            Val desc = top.get(PolicyKeys.FILE_DESCRIPTION.path());
            return new Policy(label, desc == null ? "" : (String) desc.value(), classes, origins, classWhere);
        }

        /** Flatten a class mapping into dotted keys, checking keys, duplicates, types and ranges. */
        void walkMap(MappingNode m, String prefix, Map<String, Val> out, String context) {
            String section = prefix.isEmpty() ? "" : prefix.substring(0, prefix.length() - 1);
            List<String> allowed = PolicyKeys.section(section);
            Map<String, SourceLocation> seen = new HashMap<>();
            for (NodeTuple t : m.getValue()) {
                String key = key(t.getKeyNode(), seen);
                if (key == null) {
                    continue;
                }
                String path = prefix + key;
                if (!allowed.contains(key)) {
                    unknown(t.getKeyNode(), path, allowed, "in " + context);
                    continue;
                }
                if (PolicyKeys.isSection(path)) {
                    if (t.getValueNode() instanceof MappingNode cm) {
                        walkMap(cm, path + ".", out, context);
                    } else {
                        error(at(t.getValueNode()), context + ": '" + path + "' must be a mapping with keys "
                                + PolicyKeys.section(path) + ", not " + describe(t.getValueNode()));
                    }
                } else {
                    scalar(PolicyKeys.byPath(path), t.getValueNode(), context + ": '" + path + "'", out, path);
                }
            }
        }

        /** One scalar value, checked against its declaration; stored under {@code path} as the key's type. */
        void scalar(PolicyKey<?> f, Node n, String what, Map<String, Val> out, String path) {
            if (!(n instanceof ScalarNode s)) {
                error(at(n), what + " must be " + f.expected() + ", not " + describe(n));
                return;
            }
            SourceLocation where = at(n);
            Tag tag = s.getTag();
            String v = s.getValue();
            switch (f.type()) {
                case INT -> {
                    if (!Tag.INT.equals(tag)) {
                        error(where, what + " must be " + f.expected() + ", not " + describe(n));
                        return;
                    }
                    BigInteger b;
                    try {
                        b = v.length() > 40 ? null : new BigInteger(v.strip());
                    } catch (NumberFormatException e) {
                        b = null;
                    }
                    if (b == null) {
                        error(where, what + ": '" + clip(v) + "' is not a number in range " + f.min() + ".." + f.max());
                        return;
                    }
                    if (b.compareTo(BigInteger.valueOf(f.min())) < 0 || b.compareTo(BigInteger.valueOf(f.max())) > 0) {
                        error(where, what + ": " + clip(v) + " is out of range " + f.min() + ".." + f.max());
                        return;
                    }
                    if (!f.spellings().isEmpty() && f.bySpelling(b.toString()) == null) {
                        error(where, what + ": " + b + " is not one of " + String.join(", ", f.spellings()));
                        return;
                    }
                    out.put(path, new Val(b.intValueExact(), where));
                }
                case BOOL -> {
                    if (!Tag.BOOL.equals(tag) || !(v.equals("true") || v.equals("false"))) {
                        error(where, what + " must be true or false, not " + describe(n));
                        return;
                    }
                    out.put(path, new Val(Boolean.parseBoolean(v), where));
                }
                case ENUM -> {
                    if (!Tag.STR.equals(tag) || !f.spellings().contains(v)) {
                        String got = Tag.STR.equals(tag) ? "'" + clip(v) + "'" : describe(n);
                        String hint = Tag.STR.equals(tag) ? Suggest.hint(v, f.spellings()) : "";
                        error(where, what + " must be one of " + String.join(", ", f.spellings()) + ", not " + got + hint);
                        return;
                    }
                    out.put(path, new Val(f.bySpelling(v), where));
                }
                case STRING, NAME -> {
                    if (!Tag.STR.equals(tag)) {
                        error(where, what + " must be a string, not " + describe(n));
                        return;
                    }
                    if (v.length() > f.max()) {
                        error(where, what + " is longer than " + f.max() + " characters");
                        return;
                    }
                    out.put(path, new Val(v, where));
                }
                case SHARING -> {
                    if (!Tag.STR.equals(tag)) {
                        error(where, what + " must be a category (" + Category.names()
                                + ") or axes such as ctx=shared,td=paired,qp=4way:combining, not " + describe(n));
                        return;
                    }
                    try {
                        out.put(path, new Val(SharingConfig.parse(v), where));
                    } catch (SharingSyntaxException e) {
                        SourceLocation w = where;
                        if (!v.contains("\n") && e.offset() > 0) {
                            int shift = s.getScalarStyle() == ScalarStyle.PLAIN ? 0 : 1;
                            w = new SourceLocation(label, where.line(),
                                    where.column() + shift + v.codePointCount(0, Math.min(e.offset(), v.length())));
                        }
                        String hint = Category.bySpelling(v) == null && !v.contains("=") && !v.contains(",")
                                ? Suggest.hint(v, categoryNames()) : "";
                        error(w, what + ": " + e.getMessage() + hint);
                    }
                }
            }
        }

        /** A mapping key as a string, or null (after reporting) when it is not a plain string or repeats. */
        String key(Node k, Map<String, SourceLocation> seen) {
            if (!(k instanceof ScalarNode s) || !Tag.STR.equals(s.getTag())) {
                error(at(k), "keys must be strings, not " + describe(k));
                return null;
            }
            String key = s.getValue();
            SourceLocation first = seen.get(key);
            if (first != null) {
                error(at(k), "duplicate key '" + clip(key) + "' (first at line " + first.line() + ", column "
                        + first.column() + ")");
                return null;
            }
            seen.put(key, at(k));
            return key;
        }

        void unknown(Node keyNode, String path, List<String> allowed, String context) {
            String last = path.substring(path.lastIndexOf('.') + 1);
            error(at(keyNode), "unknown key '" + clip(path) + "' " + context + Suggest.hint(last, allowed)
                    + " (allowed: " + String.join(", ", allowed) + ")");
        }

        /** Apply {@code extends}: the parent's settings, then the class's own. Detects cycles and unknown parents. */
        Map<String, Val> merge(RawClass rc, Map<String, RawClass> raw, Map<String, Map<String, Val>> done,
                               List<String> chain) {
            if (done.containsKey(rc.name())) {
                return done.get(rc.name());
            }
            if (chain.contains(rc.name())) {
                List<String> cycle = new ArrayList<>(chain.subList(chain.indexOf(rc.name()), chain.size()));
                cycle.add(rc.name());
                Val ext = rc.vals().get(PolicyKeys.EXTENDS.path());
                error(ext != null ? ext.where() : rc.where(), "class " + rc.name() + ": extends cycle "
                        + String.join(" -> ", cycle));
                done.put(rc.name(), null);
                return null;
            }
            Val ext = rc.vals().get(PolicyKeys.EXTENDS.path());
            Map<String, Val> result = new LinkedHashMap<>();
            if (ext != null) {
                String parentName = (String) ext.value();
                RawClass parent = raw.get(parentName);
                if (parent == null) {
                    error(ext.where(), "class " + rc.name() + " extends unknown class '" + clip(parentName) + "'"
                            + Suggest.hint(parentName, raw.keySet()) + " (classes: " + String.join(", ", raw.keySet()) + ")");
                    done.put(rc.name(), null);
                    return null;
                }
                chain.add(rc.name());
                Map<String, Val> p = merge(parent, raw, done, chain);
                chain.remove(chain.size() - 1);
                if (p == null) {
                    done.put(rc.name(), null);
                    return null;
                }
                result.putAll(p);
                result.remove(PolicyKeys.DESCRIPTION.path());
            }
            result.putAll(rc.vals());
            result.remove(PolicyKeys.EXTENDS.path());
            done.put(rc.name(), result);
            return result;
        }

        /** The class from its merged values, after the checks that relate two keys of it. */
        EndpointClass build(String name, Map<String, Val> written, SourceLocation where) {
            Map<String, Object> raw = new HashMap<>();
            written.forEach((k, val) -> raw.put(k, val.value()));
            PolicyKey.Values v = PolicyKeys.values(raw);
            int before = errors.size();
            String c = "class " + name + ": ";
            atMost(written, where, c, v, PolicyKeys.CHAINED_MAX_LENGTH, PolicyKeys.CHAINED_POOL, " (a chain comes from the pool)");
            atMost(written, where, c, v, PolicyKeys.SRQ_REFILL_THRESHOLD, PolicyKeys.SRQ_DEPTH, "");
            atMost(written, where, c, v, PolicyKeys.SRQ_REFILL_BATCH, PolicyKeys.SRQ_DEPTH, "");
            atMost(written, where, c, v, PolicyKeys.CQ_MODERATION_COUNT, PolicyKeys.CQ_DEPTH, " (an event would never fire)");
            return errors.size() != before ? null : PolicyKeys.build(name, v);
        }

        /** An error located at {@code key} (or {@code limit}) when {@code key} is above {@code limit}. */
        void atMost(Map<String, Val> written, SourceLocation where, String c, PolicyKey.Values v,
                    PolicyKey<Integer> key, PolicyKey<Integer> limit, String why) {
            int value = v.get(key);
            int max = v.get(limit);
            if (value > max) {
                error(loc(written, where, key.path(), limit.path()), c + key.path() + " " + value + " > " + limit.path()
                        + " " + max + why);
            }
        }

        static SourceLocation loc(Map<String, Val> v, SourceLocation dflt, String... keys) {
            for (String k : keys) {
                Val x = v.get(k);
                if (x != null) {
                    return x.where();
                }
            }
            return dflt;
        }
    }

    // ---- helpers -------------------------------------------------------------------------------

    /** The structural top-level key: the mapping of class names to settings. */
    private static final String CLASSES = "classes";

    private static PolicyKey<?> topKey(String key) {
        for (PolicyKey<?> k : PolicyKeys.TOP) {
            if (k.path().equals(key)) {
                return k;
            }
        }
        return null;
    }

    private static List<String> topNames() {
        List<String> n = new ArrayList<>();
        PolicyKeys.TOP.forEach(k -> n.add(k.path()));
        n.add(CLASSES);
        return n;
    }

    private static List<String> categoryNames() {
        List<String> n = new ArrayList<>();
        for (Category c : Category.values()) {
            n.add(c.spelling());
        }
        return n;
    }

    private static String describe(Node n) {
        if (n instanceof MappingNode) {
            return "a mapping";
        }
        if (n instanceof SequenceNode) {
            return "a sequence";
        }
        if (n instanceof ScalarNode s) {
            Tag t = s.getTag();
            String v = clip(s.getValue());
            if (Tag.NULL.equals(t)) {
                return "null (empty value)";
            }
            if (Tag.INT.equals(t)) {
                return "the integer " + v;
            }
            if (Tag.FLOAT.equals(t)) {
                return "the number " + v;
            }
            if (Tag.BOOL.equals(t)) {
                return "the boolean " + v;
            }
            if (Tag.STR.equals(t)) {
                return "the string '" + v + "'";
            }
            return "a value tagged " + clip(t.getValue());
        }
        return "an alias";
    }

    static String clip(String s) {
        String one = oneLine(s);
        return one.length() > 40 ? one.substring(0, 37) + "..." : one;
    }

    static String oneLine(String s) {
        StringBuilder sb = new StringBuilder(Math.min(s.length(), 400));
        for (int i = 0; i < s.length() && sb.length() < 400; i++) {
            char c = s.charAt(i);
            sb.append(c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
        }
        return sb.toString().strip();
    }
}
