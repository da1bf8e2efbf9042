/**
 * The endpoint API for applications: {@link dev.scalep.endpoints.EndpointManager} opens endpoints
 * for N threads at a sharing level, {@link dev.scalep.endpoints.Endpoint} posts and polls,
 * {@link dev.scalep.endpoints.WorldEndpoints} spans the ranks of a job, and
 * {@code dev.scalep.endpoints.srd} gives ordered channels and tagged messaging over SRD. The send
 * paths underneath ({@code dev.scalep.threading}) stay inside.
 */
module dev.scalep.endpoints {
    requires transitive dev.scalep.verbs;
    requires transitive dev.scalep.policies;
    requires transitive dev.scalep.spmd;
    requires dev.scalep.threading;
    requires org.agrona.core;

    exports dev.scalep.endpoints;
    exports dev.scalep.endpoints.srd;
}
