package dev.scalep.verbs.sim;

/** The behavioural suite on {@code sim:mlx5} with requester and responder in two JVMs joined to one fabric. */
class SimFabricMlx5BehaviourTest extends SimTwoJvmBehaviourSuite {
    @Override
    protected String personality() {
        return "mlx5";
    }
}
