package dev.scalep.policies;

import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.PortInfo;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A loaded policy: named endpoint classes with every setting filled in ({@code extends} applied,
 * defaults from {@link EndpointClass}), not yet checked against a device. Immutable and thread-safe.
 * Obtain one from {@link PolicyLoader} or build one with {@link #of}; check it against a device with
 * {@link #effective(String, DeviceCapabilities)}.
 */
public final class Policy {
    private final String source;
    private final String description;
    private final Map<String, EndpointClass> classes;
    private final Map<String, Map<String, SourceLocation>> origins;
    private final Map<String, SourceLocation> classLocations;

    Policy(String source, String description, Map<String, EndpointClass> classes,
           Map<String, Map<String, SourceLocation>> origins, Map<String, SourceLocation> classLocations) {
        this.source = source;
        this.description = description;
        this.classes = Collections.unmodifiableMap(new LinkedHashMap<>(classes));
        Map<String, Map<String, SourceLocation>> o = new LinkedHashMap<>();
        origins.forEach((k, v) -> o.put(k, Map.copyOf(v)));
        this.origins = Collections.unmodifiableMap(o);
        this.classLocations = Collections.unmodifiableMap(new LinkedHashMap<>(classLocations));
    }

    /** A policy built in code (no source positions; errors are located at {@code source:1:1}). */
    public static Policy of(String source, EndpointClass... classes) {
        Map<String, EndpointClass> m = new LinkedHashMap<>();
        for (EndpointClass c : classes) {
            if (m.put(c.name(), c) != null) {
                throw new IllegalArgumentException("two classes named " + c.name());
            }
        }
        if (m.isEmpty()) {
            throw new IllegalArgumentException("a policy needs at least one class");
        }
        return new Policy(source, "", m, Map.of(), Map.of());
    }

    /** The file name or label it was loaded from. */
    public String source() {
        return source;
    }

    /** The top-level description, or "". */
    public String description() {
        return description;
    }

    /** Every class, in file order. */
    public Map<String, EndpointClass> classes() {
        return classes;
    }

    /** The class called {@code name}; {@link IllegalArgumentException} naming the classes otherwise. */
    public EndpointClass endpointClass(String name) {
        EndpointClass c = classes.get(name);
        if (c == null) {
            throw new IllegalArgumentException("no class '" + name + "' in " + source + Suggest.hint(name, classes.keySet())
                    + " (classes: " + String.join(", ", classes.keySet()) + ")");
        }
        return c;
    }

    /**
     * Where a setting of a class was written ({@code key} in dotted form, e.g. {@code inline},
     * {@code srq.depth}); null when it took its default. Inherited settings point into the parent.
     */
    public SourceLocation origin(String className, String key) {
        Map<String, SourceLocation> o = origins.get(className);
        return o == null ? null : o.get(key);
    }

    /** Whether the class was read from a file (false for classes built in code, whose every setting counts as written). */
    boolean fromFile(String className) {
        return origins.containsKey(className);
    }

    /** Where the class's name was written, or {@code source:1:1}. */
    public SourceLocation location(String className) {
        SourceLocation l = classLocations.get(className);
        return l != null ? l : new SourceLocation(source, 1, 1);
    }

    /** Device-independent checks only (postlist and unsignaled interval against the queue depth). */
    public EffectivePolicy effective() {
        return Validation.validate(this, null, null, null);
    }

    /**
     * Check against a device's capabilities and its ports: as {@link #effective(String, DeviceCapabilities)},
     * and the {@code connection} section too ({@link #effective(String, DeviceCapabilities, List)}).
     */
    public EffectivePolicy effective(Device device) {
        return Validation.validate(this, device.name(), device.capabilities(), device.ports());
    }

    /**
     * Check every class against a device's capabilities and ports. Besides what
     * {@link #effective(String, DeviceCapabilities)} checks, each class's {@code connection} must name
     * a port the device has and a GID in that port's table ({@code gid-index}, or, automatic, one of
     * {@code gid-type} and {@code address-family}): otherwise a {@link PolicyException} naming the
     * key, the value and what the device has, whatever {@code on-unsupported} says. A
     * {@code path-mtu} above the port's active MTU is degraded to it (or refused under {@code fail}).
     */
    public EffectivePolicy effective(String deviceName, DeviceCapabilities caps, List<PortInfo> ports) {
        return Validation.validate(this, deviceName, caps, ports);
    }

    /**
     * Check every class against a device: settings the device cannot honour are degraded (with each
     * degradation reported) or, for classes with {@code on-unsupported: fail}, rejected with a
     * {@link PolicyException} located at the setting. The {@code connection} section is checked
     * only with the device's ports ({@link #effective(Device)}).
     */
    public EffectivePolicy effective(String deviceName, DeviceCapabilities caps) {
        return Validation.validate(this, deviceName, caps, null);
    }

    @Override
    public String toString() {
        return "Policy[" + source + ": " + String.join(", ", classes.keySet()) + "]";
    }
}
