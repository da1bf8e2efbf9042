package dev.scalep.endpoints.srd;

import dev.scalep.policies.Ordering;
import dev.scalep.verbs.sim.SimDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OrderedChannelTest {
    private static final long TIMEOUT = TimeUnit.SECONDS.toNanos(20);

    @Test
    void receiverReorderHasNoViolationOver200Seeds() {
        for (long seed = 1; seed <= 200; seed++) {
            var r = OrderingCheck.run(SimDevice.efa(seed, 8), Ordering.RECEIVER_REORDER, seed, 300, 16, TIMEOUT);
            assertEquals(0, r.failedProperties(), "seed " + seed + ": " + r);
            assertTrue(r.atomics() > 0);
        }
    }

    @Test
    void senderWaitHasNoViolationOver200Seeds() {
        for (long seed = 1; seed <= 200; seed++) {
            var r = OrderingCheck.run(SimDevice.efa(seed, 8), Ordering.SENDER_WAIT, seed, 300, 16, TIMEOUT);
            assertEquals(0, r.failedProperties(), "seed " + seed + ": " + r);
        }
    }

    @Test
    void withoutOrderingTheDeviceReallyReordersAtomicsPastWrites() {
        int violations = 0;
        for (long seed = 1; seed <= 20; seed++) {
            var r = OrderingCheck.run(SimDevice.efa(seed, 8), Ordering.NONE, seed, 300, 16, TIMEOUT);
            violations += r.atomicOrderViolations();
            // writes still land once, counters still add up: only the order is lost
            assertEquals(0, r.writeViolations());
            assertEquals(0, r.counterViolations());
        }
        assertTrue(violations > 0, "sim:efa never delivered an atomic before a write it follows");
    }

    @Test
    void inOrderDeviceNeedsNoLayer() {
        var r = OrderingCheck.run(SimDevice.efa(3, 1), Ordering.NONE, 3, 300, 16, TIMEOUT);
        assertEquals(0, r.failedProperties(), r.toString());
    }
}
