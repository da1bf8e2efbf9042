package dev.scalep.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** `policy check` rejects a class that contradicts itself whatever on-unsupported says, on both devices. */
class PolicyContradictionTest {
    @Test
    void aCqSmallerThanItsQueuesOrAListLongerThanTheQueueFailsPolicyCheck(@TempDir Path tmp) throws Exception {
        String[] bodies = {
                "    queue-depth: 4096\n    cq: {depth: 1}\n",                                 // per-QP CQ of depth 1
                "    sharing: mpi-threads\n    queue-depth: 4096\n    cq: {depth: 1}\n",      // shared CQ of depth 1
                "    queue-depth: 16\n    postlist: 32\n",
                "    queue-depth: 16\n    postlist: 8\n    unsignaled: 64\n"};
        for (String on : new String[]{"fail", "degrade"}) {
            for (String body : bodies) {
                Path f = Files.writeString(tmp.resolve("p.yaml"), "classes:\n  a:\n" + body + "    on-unsupported: " + on + "\n");
                for (String dev : new String[]{"sim:mlx5", "sim:efa"}) {
                    SweepCommandTest.Run r = SweepCommandTest.run("policy", "check", f.toString(), "--device", dev);
                    assertEquals(2, r.rc(), body + on + dev + ": " + r.out() + r.err());
                    assertTrue((r.out() + r.err()).contains("whatever on-unsupported says"), r.out() + r.err());
                }
            }
        }
    }
}
