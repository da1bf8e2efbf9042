package dev.scalep.verbs.sim;

import dev.scalep.verbs.Device;
import dev.scalep.verbs.suite.Responder;
import dev.scalep.verbs.suite.VerbsBehaviourSuite;
import dev.scalep.verbs.suite.VerbsFixture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;

/**
 * The behavioural suite with its two sides in two JVMs: the requester in the test's JVM, every
 * responder (context, PD, CQ, QPs, SRQ, MR, receives, polls, memory, events) in one child JVM
 * ({@link ResponderPeer}) per test class, joined to the same fabric job, a job of the class's own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SimTwoJvmBehaviourSuite extends VerbsBehaviourSuite {
    private Device requester;
    private ResponderProcess child;

    /** {@code mlx5} or {@code efa}. */
    protected abstract String personality();

    @BeforeAll
    void startResponderProcess() throws IOException {
        String job = "test-2jvm-" + personality() + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        requester = FabricPeer.device(personality(), job);
        child = new ResponderProcess(personality(), job);
    }

    @AfterAll
    void stopResponderProcess() {
        if (child != null) {
            child.close();
        }
    }

    @Override
    protected Responder responder(Responder.Spec spec) {
        return child.create(spec);
    }

    @Override
    protected VerbsFixture fixture() {
        return new VerbsFixture() {
            @Override
            public String name() {
                return "sim:" + personality() + ", responder in JVM " + child.pid();
            }

            @Override
            public Device requester() {
                return requester;
            }

            @Override
            public Device responder() {
                throw new UnsupportedOperationException("the responder lives in JVM " + child.pid());
            }
        };
    }
}
