package dev.scalep.verbs.sim;

/** The behavioural suite on {@code sim:efa} with requester and responder in two JVMs joined to one fabric. */
class SimFabricEfaBehaviourTest extends SimTwoJvmBehaviourSuite {
    @Override
    protected String personality() {
        return "efa";
    }
}
