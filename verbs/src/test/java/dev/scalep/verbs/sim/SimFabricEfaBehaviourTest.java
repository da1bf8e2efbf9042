package dev.scalep.verbs.sim;

import dev.scalep.verbs.Device;
import dev.scalep.verbs.suite.VerbsBehaviourSuite;
import dev.scalep.verbs.suite.VerbsFixture;

/**
 * The behavioural suite with requester and responder on two {@code sim:efa} device objects joined
 * to one fabric (a job of this test's own): every operation between them takes the cross-process
 * path (directories, shared-memory MRs, inbound rings, the NIC agent) exactly as between two JVMs.
 */
class SimFabricEfaBehaviourTest extends VerbsBehaviourSuite {
    private static final String JOB = "test-fabric-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    private static final Device A = SimDevice.efa(1, SimDevice.DEFAULT_EFA_WINDOW, true, false, JOB);
    private static final Device B = SimDevice.efa(1, SimDevice.DEFAULT_EFA_WINDOW, true, false, JOB);

    @Override
    protected VerbsFixture fixture() {
        return new VerbsFixture() {
            @Override
            public String name() {
                return "sim:efa across the fabric";
            }

            @Override
            public Device requester() {
                return A;
            }

            @Override
            public Device responder() {
                return B;
            }
        };
    }
}
