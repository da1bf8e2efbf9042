package dev.scalep.policies;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * One key of a policy file, declared once in {@link PolicyKeys}: its dotted path, type, allowed
 * values, default and spelling. The loader checks files against it, the class is built from it,
 * {@code scalep policy show} prints from it, and a test compares it with the JSON Schema.
 * Immutable and thread-safe.
 *
 * @param <T> the value's type once loaded ({@link Integer}, {@link Boolean}, {@link String}, an
 *            enum, or {@link SharingConfig})
 */
public final class PolicyKey<T> {
    /** How a value is written in YAML. */
    public enum Type {
        /** An integer in {@link #min()}..{@link #max()}, or one of {@link #spellings()} when it has any. */
        INT,
        /** {@code true} or {@code false}. */
        BOOL,
        /** A string, one of {@link #spellings()}. */
        ENUM,
        /** Free text up to {@link #max()} characters. */
        STRING,
        /** The name of another class of the file. */
        NAME,
        /** A category or the axes form ({@link SharingConfig#parse}). */
        SHARING
    }

    /** The settings of one class as loaded: what the file wrote, and each default computed from them. */
    public interface Values {
        /** The value of {@code key}: as written, or its default. */
        <T> T get(PolicyKey<T> key);
    }

    private final String path;
    private final Type type;
    private final long min;
    private final long max;
    private final Map<String, T> spellings;
    private final Function<Values, T> defaultOf;
    private final Object schemaDefault;
    private final String defaultText;
    private final boolean automatic;
    private final T autoValue;
    private final Function<EndpointClass, T> read;
    private final String description;

    PolicyKey(String path, Type type, long min, long max, Map<String, T> spellings, Function<Values, T> defaultOf,
              Object schemaDefault, String defaultText, boolean automatic, T autoValue,
              Function<EndpointClass, T> read, String description) {
        this.path = Objects.requireNonNull(path);
        this.type = type;
        this.min = min;
        this.max = max;
        this.spellings = Collections.unmodifiableMap(new LinkedHashMap<>(spellings));
        this.defaultOf = defaultOf;
        this.schemaDefault = schemaDefault;
        this.defaultText = defaultText;
        this.automatic = automatic;
        this.autoValue = autoValue;
        this.read = read;
        this.description = description;
    }

    /** The dotted path, e.g. {@code queue-depth}, {@code cq.moderation.count}. */
    public String path() {
        return path;
    }

    /** The last segment of the path: what the key is called inside its section. */
    public String name() {
        return path.substring(path.lastIndexOf('.') + 1);
    }

    /** The section path ({@code cq.moderation}), or "" at the class level. */
    public String section() {
        int dot = path.lastIndexOf('.');
        return dot < 0 ? "" : path.substring(0, dot);
    }

    public Type type() {
        return type;
    }

    /** Smallest integer (INT). */
    public long min() {
        return min;
    }

    /** Largest integer (INT) or longest text in characters (STRING, NAME, SHARING). */
    public long max() {
        return max;
    }

    /** The allowed values as written, in order (ENUM, and INT keys restricted to a set); empty otherwise. */
    public List<String> spellings() {
        return List.copyOf(spellings.keySet());
    }

    /** The value written as {@code s}, when {@code s} is one of {@link #spellings()}. */
    T bySpelling(String s) {
        return spellings.get(s);
    }

    /** The default given the other settings of the class; null for keys without one (extends, description). */
    public T defaultIn(Values v) {
        return defaultOf == null ? null : defaultOf.apply(v);
    }

    /** The default of a key whose default does not depend on other keys. */
    public T defaultValue() {
        if (schemaDefault == null && !automatic) {
            throw new IllegalStateException(path + " has no fixed default (" + defaultText + ")");
        }
        return defaultOf.apply(PolicyKeys.values(Map.of()));
    }

    /**
     * The default as the JSON Schema writes it (a number, boolean or string), or null when the
     * default depends on other keys or on the device ({@link #defaultText()} says how).
     */
    public Object schemaDefault() {
        return schemaDefault;
    }

    /** What the default is, in words, when it is not a constant; null otherwise. */
    public String defaultText() {
        return defaultText;
    }

    /** Whether leaving the key out leaves the choice to the device at run time (its default is a sentinel). */
    public boolean automatic() {
        return automatic;
    }

    /** One-line description. */
    public String description() {
        return description;
    }

    /** Whether the key is a setting of {@link EndpointClass} (false for {@code extends}, {@code description}). */
    public boolean isSetting() {
        return read != null;
    }

    /** The key's value in an endpoint class. */
    public T of(EndpointClass c) {
        return read.apply(c);
    }

    /**
     * The value as a policy file writes it ({@code receiver-reorder}, {@code 32}, {@code true}); null
     * when an {@link #automatic()} key holds its automatic value.
     */
    public String spell(T value) {
        if (automatic && Objects.equals(value, autoValue)) {
            return null;
        }
        for (Map.Entry<String, T> e : spellings.entrySet()) {
            if (Objects.equals(e.getValue(), value)) {
                return e.getKey();
            }
        }
        if (value instanceof SharingConfig s) {
            Category cat = s.category();
            return cat != null ? cat.spelling() : s.toString();
        }
        return String.valueOf(value);
    }

    /** {@link #spell} of the key's value in {@code c}. */
    public String spelledIn(EndpointClass c) {
        return spell(of(c));
    }

    /** What the loader accepts, for error messages: "an integer in range 1..4096", "one of on, off, auto". */
    String expected() {
        return switch (type) {
            case INT -> spellings.isEmpty() ? "an integer in range " + min + ".." + max
                    : "one of " + String.join(", ", spellings.keySet());
            case BOOL -> "true or false";
            case ENUM -> "one of " + String.join(", ", spellings.keySet());
            case STRING, NAME -> "a string";
            case SHARING -> "a category or axes string";
        };
    }

    @Override
    public String toString() {
        return path;
    }

    // ---- declarations (used by PolicyKeys) ---------------------------------------------------------

    static PolicyKey<Integer> integer(String path, int min, int max, int dflt, Function<EndpointClass, Integer> read,
                                      String description) {
        return new PolicyKey<>(path, Type.INT, min, max, Map.of(), v -> dflt, dflt, null, false, null, read, description);
    }

    /** An integer whose default is computed from other keys. */
    static PolicyKey<Integer> derived(String path, int min, int max, Function<Values, Integer> dflt, String defaultText,
                                      Function<EndpointClass, Integer> read, String description) {
        return new PolicyKey<>(path, Type.INT, min, max, Map.of(), dflt, null, defaultText, false, null, read, description);
    }

    /** An integer that, left out, is chosen at run time ({@code auto} is the value standing for that). */
    static PolicyKey<Integer> automatic(String path, int min, int max, int auto, String defaultText,
                                        Function<EndpointClass, Integer> read, String description) {
        return new PolicyKey<>(path, Type.INT, min, max, Map.of(), v -> auto, null, defaultText, true, auto,
                read, description);
    }

    /** An integer from a fixed set that, left out, is chosen at run time. */
    static PolicyKey<Integer> automaticOneOf(String path, List<Integer> allowed, int auto, String defaultText,
                                             Function<EndpointClass, Integer> read, String description) {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (int a : allowed) {
            m.put(String.valueOf(a), a);
        }
        return new PolicyKey<>(path, Type.INT, allowed.getFirst(), allowed.getLast(), m, v -> auto, null, defaultText,
                true, auto, read, description);
    }

    static PolicyKey<Boolean> bool(String path, boolean dflt, Function<EndpointClass, Boolean> read, String description) {
        return new PolicyKey<>(path, Type.BOOL, 0, 0, Map.of(), v -> dflt, dflt, null, false, null, read, description);
    }

    /** An enum of this module, spelled as {@link Spelled} says. */
    static <E extends Enum<E> & Spelled> PolicyKey<E> spelled(String path, E[] values, E dflt,
                                                              Function<EndpointClass, E> read, String description) {
        Map<String, E> m = new LinkedHashMap<>();
        for (E e : values) {
            m.put(e.spelling(), e);
        }
        return choice(path, m, dflt, read, description);
    }

    /** A value chosen by spelling ({@code null} may be a value, as {@code any} is). */
    static <E> PolicyKey<E> choice(String path, Map<String, E> spellings, E dflt, Function<EndpointClass, E> read,
                                   String description) {
        String dfltSpelling = null;
        for (Map.Entry<String, E> e : spellings.entrySet()) {
            if (Objects.equals(e.getValue(), dflt)) {
                dfltSpelling = e.getKey();
            }
        }
        if (dfltSpelling == null) {
            throw new IllegalArgumentException(path + ": the default is not one of the spellings");
        }
        return new PolicyKey<>(path, Type.ENUM, 0, 0, spellings, v -> dflt, dfltSpelling, null, false, null, read,
                description);
    }

    static PolicyKey<String> text(String path, Type type, int maxLength, String description) {
        return new PolicyKey<>(path, type, 0, maxLength, Map.of(), null, null, null, false, null, null, description);
    }

    static PolicyKey<SharingConfig> sharing(String path, int maxLength, Category dflt,
                                            Function<EndpointClass, SharingConfig> read, String description) {
        return new PolicyKey<>(path, Type.SHARING, 0, maxLength, Map.of(), v -> dflt.config(), dflt.spelling(), null,
                false, null, read, description);
    }
}
