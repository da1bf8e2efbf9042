/**
 * Sharing levels and policy files: {@link dev.scalep.policies.SharingConfig}, the policy loader and
 * the shipped catalog (read from this module's own resources).
 */
module dev.scalep.policies {
    requires transitive dev.scalep.verbs;
    requires org.snakeyaml.engine.v2;

    exports dev.scalep.policies;
}
