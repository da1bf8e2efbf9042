package dev.scalep.policies;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A policy as it will be applied on one device: every setting filled in and within the device's
 * limits, with the list of what was changed and why. Immutable and thread-safe.
 *
 * @param source       where the policy came from
 * @param device       the device it was checked against, or null (device-independent checks only)
 * @param classes      the effective classes, in file order
 * @param degradations every setting that was changed
 * @param notes        harmless observations (no-op settings, out-of-order delivery)
 */
public record EffectivePolicy(String source, String device, Map<String, EndpointClass> classes,
                              List<Degradation> degradations, List<String> notes) {
    public EffectivePolicy {
        classes = Collections.unmodifiableMap(new LinkedHashMap<>(classes));
        degradations = List.copyOf(degradations);
        notes = List.copyOf(notes);
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

    /** The effective policy in the policy file format (loadable again), degradations and notes as comments. */
    public String toYaml() {
        return PolicyYaml.write(this, null);
    }

    /** One class in the policy file format. */
    public String toYaml(String className) {
        endpointClass(className);
        return PolicyYaml.write(this, className);
    }
}
