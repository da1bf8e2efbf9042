package dev.scalep.verbs.sim;

import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.suite.VerbsBehaviourSuite;
import dev.scalep.verbs.suite.VerbsFixture;

/** The behavioural suite on the registered {@code sim:mlx5} device (found through the registry). */
class SimMlx5BehaviourTest extends VerbsBehaviourSuite {
    private static final Device DEV = Devices.byName("sim:mlx5");

    @Override
    protected VerbsFixture fixture() {
        return new VerbsFixture() {
            @Override
            public String name() {
                return "sim:mlx5";
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
