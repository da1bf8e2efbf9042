package dev.scalep.cli;

import dev.scalep.endpoints.srd.OrderingCheck;
import dev.scalep.policies.Ordering;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceKind;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.NoSuchDeviceException;
import dev.scalep.verbs.QpType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** {@code scalep check}: correctness checks of runtime layers. */
@Command(name = "check", mixinStandardHelpOptions = true, description = "Correctness checks of scalep's layers.",
        subcommands = CheckCommand.Ordering_.class)
final class CheckCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** {@code scalep check ordering}. */
    @Command(name = "ordering", mixinStandardHelpOptions = true,
            description = "Drive writes, emulated atomics and callbacks through an ordered SRD channel and verify "
                    + "their order. Exits 1 on any violation.")
    static final class Ordering_ implements Callable<Integer> {
        /** The largest --ops: a few dozen bytes of bookkeeping per operation, and about 40 s of simulated traffic at the most on 2 cores. */
        static final int MAX_OPS = 5_000_000;

        @Option(names = "--device", defaultValue = "sim:efa", description = "Device with SRD QPs (default ${DEFAULT-VALUE}).")
        String device;

        @Option(names = "--seed", defaultValue = "1", description = "Workload seed (default ${DEFAULT-VALUE}).")
        long seed;

        @Option(names = "--ops", defaultValue = "20000", description = "Operations per mode (default ${DEFAULT-VALUE}).")
        int ops;

        @Option(names = "--window", defaultValue = "64", description = "In-flight limit, a power of two (default ${DEFAULT-VALUE}).")
        int window;

        @Option(names = "--mode", defaultValue = "receiver",
                description = "receiver (receiver-reorder), sender (sender-wait), both, or none (no ordering: "
                        + "expected to fail on a reordering device). Default ${DEFAULT-VALUE}.")
        String mode;

        @Override
        public Integer call() {
            List<Ordering> modes = switch (mode) {
                case "receiver" -> List.of(Ordering.RECEIVER_REORDER);
                case "sender" -> List.of(Ordering.SENDER_WAIT);
                case "both" -> List.of(Ordering.RECEIVER_REORDER, Ordering.SENDER_WAIT);
                case "none" -> List.of(Ordering.NONE);
                default -> throw new UserException("--mode must be receiver, sender, both or none, not '" + mode + "'");
            };
            Checks.range("--ops", ops, 2, MAX_OPS, "the check keeps per-operation bookkeeping on the heap");
            if (window < 2 || window > 32768 || Integer.bitCount(window) != 1) {
                throw new UserException("--window must be a power of two in 2..32768: " + window);
            }
            Device d;
            try {
                d = Devices.byName(device);
            } catch (NoSuchDeviceException e) {
                throw new UserException(e.getMessage());
            }
            if (!d.capabilities().qpTypes().contains(QpType.SRD) || d.kind() != DeviceKind.EFA) {
                throw new UserException("device " + device + " has no SRD QPs; use an EFA device such as sim:efa");
            }
            int passed = 0;
            int failed = 0;
            List<OrderingCheck.Result> results = new ArrayList<>();
            for (Ordering o : modes) { // JIT warm-up so the timed runs compare fairly (results discarded)
                OrderingCheck.run(d, o, seed + 1, Math.min(ops, 4000), window, TimeUnit.SECONDS.toNanos(120));
            }
            for (Ordering o : modes) {
                if (ops >= 1_000_000) { // a long run says what it is doing before it goes quiet
                    System.out.printf("mode %s: running %d ops ...%n", o, ops);
                }
                OrderingCheck.Result r = OrderingCheck.run(d, o, seed, ops, window, TimeUnit.SECONDS.toNanos(120));
                results.add(r);
                System.out.printf("mode %s: %d ops (%d writes, %d atomics) on %s, seed %d, window %d%n", o, r.ops(),
                        r.writes(), r.atomics(), d.name(), seed, window);
                int[] v = {r.writeViolations(), r.atomicOrderViolations(), r.callbackOrderViolations(),
                        r.counterViolations()};
                String[] names = {"every write applied once", "every atomic applied after all writes before it",
                        "callbacks in post order", "counter final values exact"};
                for (int i = 0; i < v.length; i++) {
                    System.out.printf("  %-4s %s%s%n", v[i] == 0 ? "ok" : "FAIL", names[i],
                            v[i] == 0 ? "" : " (" + v[i] + " violations)");
                    if (v[i] == 0) {
                        passed++;
                    } else {
                        failed++;
                    }
                }
                System.out.printf("  mean latency of writes-then-atomic: %.2f us%n", r.meanGroupLatencyMicros());
            }
            if (results.size() == 2) {
                System.out.printf("latency ratio sender-wait / receiver-reorder: %.2f%n",
                        results.get(1).meanGroupLatencyMicros() / results.get(0).meanGroupLatencyMicros());
            }
            System.out.println(passed + " passed, " + failed + " failed");
            return failed == 0 ? 0 : 1;
        }
    }
}
