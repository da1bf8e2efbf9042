package dev.scalep.verbs.sim;

import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.suite.VerbsBehaviourSuite;
import dev.scalep.verbs.suite.VerbsFixture;

/** The behavioural suite on the registered {@code sim:efa} device (SRD, out of order, all WRs signaled). */
class SimEfaBehaviourTest extends VerbsBehaviourSuite {
    private static final Device DEV = Devices.byName("sim:efa");

    @Override
    protected VerbsFixture fixture() {
        return new VerbsFixture() {
            @Override
            public String name() {
                return "sim:efa";
            }

            @Override
            public Device requester() {
                return DEV;
            }

            @Override
            public Device responder() {
                return DEV;
            }
        };
    }
}
