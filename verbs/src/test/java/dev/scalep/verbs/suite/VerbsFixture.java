package dev.scalep.verbs.suite;

import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.Device;

/**
 * The devices one run of the behavioural suite uses: a requester and a responder (the same
 * device for the simulator, rxe0 and rxe1 inside the VM). Subclasses of
 * {@link VerbsBehaviourSuite} supply one fixture each, so the same tests run on every provider.
 * The responder device is used through {@link VerbsBehaviourSuite#responder}; a suite whose
 * responders live in another process overrides that and has no responder device here.
 */
public interface VerbsFixture {
    /** Display name, e.g. {@code sim:mlx5} or {@code rxe0↔rxe1}. */
    String name();

    Device requester();

    Device responder();

    default ContextOptions options() {
        return ContextOptions.DEFAULTS;
    }
}
