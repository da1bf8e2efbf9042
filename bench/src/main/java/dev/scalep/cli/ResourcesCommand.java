package dev.scalep.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointManager;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.endpoints.Substitution;
import dev.scalep.policies.EffectivePolicy;
import dev.scalep.policies.EndpointClass;
import dev.scalep.policies.Policy;
import dev.scalep.policies.PolicyLoader;
import dev.scalep.policies.SharingConfig;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.ResourceUsage;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code scalep resources}: what a sharing level allocates for N threads, from the device's own accounting. */
@Command(name = "resources", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Build the endpoints N threads get at a sharing level, print the resources the device "
                + "accounted for them (contexts, PDs, MRs, QPs, CQs, SRQs, TDs, UAR pages, uUARs, memory), and tear "
                + "everything down.",
        footer = {"", "Sharing levels (--category):",
                "  a category: mpi-everywhere, 2x-dynamic, dynamic, shared-dynamic, static, mpi-threads",
                "  or the axes form, items separated by commas (a category may come first; other axes default to it,",
                "  or to static):",
                "    ctx, pd, mr, buf = per-thread | shared | Xway",
                "    td  = none | dedicated | paired | dedicated-2x",
                "    qp  = per-thread | (shared | Xway)[:locked | :combining]",
                "    cq  = per-qp | per-thread | shared | Xway",
                "    srq = none | per-thread | shared | Xway",
                "", "Examples:",
                "  scalep resources --threads 16 --category 2x-dynamic",
                "  scalep resources --threads 16 --json \\",
                "      --category ctx=shared,td=paired,qp=4way:combining",
                "  scalep resources --device sim:efa --threads 8 \\",
                "      --policy catalog:recommended-efa --class bulk"})
final class ResourcesCommand implements Callable<Integer> {
    @Option(names = "--device", paramLabel = "NAME", description = "Device (default: ${DEFAULT-VALUE}).")
    String device = Devices.DEFAULT;

    @Option(names = "--threads", paramLabel = "N", required = true, description = "Application threads (1..4096).")
    int threads;

    @Option(names = "--category", paramLabel = "LEVEL", description = "Sharing level: a category or the axes form (default: static).")
    String category;

    @Option(names = "--policy", paramLabel = "FILE", description = "Take the sharing level and every feature (depths, postlist, WR pool, SRQ, CQ) from an endpoint class of a policy file (or catalog:NAME).")
    String policy;

    @Option(names = "--class", paramLabel = "NAME", description = "The endpoint class of --policy (default: its first class).")
    String className;

    @Option(names = "--json", description = "Print one JSON object: contexts, pds, mrs, qps, cqs, srqs, tds, uarPages, uuars "
            + "(allocated: every UAR page with both data-path uUARs, used or idle), uarPagesInUse, uuarsInUse (rung by the "
            + "endpoints' QPs), memoryBytes, and uarModel (how the UAR counts were obtained: counted by the simulator, or "
            + "derived from the mlx5 driver's model on a real device).")
    boolean json;

    @Option(names = "--per-endpoint", description = "Also list which instance of each resource every endpoint uses (table only).")
    boolean perEndpoint;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (threads < 1 || threads > 4096) {
            throw new UserException("--threads: " + threads + " is out of range 1..4096");
        }
        Checks.refuseUnless(spec, "--class", policy != null, "it picks an endpoint class of --policy; add --policy FILE");
        Checks.refuseUnless(spec, "--per-endpoint", !json, "--json prints totals only; drop one of them");
        Device dev = Devices.byName(device);
        SharingConfig cfg;
        EndpointOptions opts = EndpointOptions.DEFAULTS;
        EndpointClass policyClass = null;
        String source;
        if (policy != null) {
            if (category != null) {
                throw new UserException("--policy and --category exclude each other");
            }
            Policy p = policy.startsWith("catalog:") ? PolicyLoader.loadCatalog(policy.substring(8)) : PolicyLoader.load(Path.of(policy));
            EffectivePolicy eff = p.effective(dev);
            EndpointClass c = className != null ? eff.endpointClass(className) : eff.classes().values().iterator().next();
            if (c == null) {
                throw new UserException("--class: no endpoint class '" + className + "' in " + policy + "; it has "
                        + String.join(", ", eff.classes().keySet()));
            }
            cfg = c.sharing();
            opts = EndpointOptions.from(c, dev.capabilities());
            policyClass = c;
            source = policy + " class " + c.name();
        } else {
            cfg = SharingConfig.parse(category == null ? "static" : category);
            source = category == null ? "static" : category;
        }
        EndpointManager opened = EndpointManager.open(dev, cfg, threads, opts);
        try (EndpointManager m = policyClass == null ? opened : EndpointManager.asWritten(opened, policyClass)) {
            ResourceUsage r = m.resources();
            if (json) {
                Map<String, Object> out = new LinkedHashMap<>(r.toMap());
                out.put("uarModel", m.uarDescription());
                System.out.println(new ObjectMapper().writeValueAsString(out));
                return 0;
            }
            System.out.println(dev.name() + ", " + threads + " threads, sharing " + source);
            System.out.println("  axes: " + cfg);
            System.out.println("  UAR allocation: " + m.uarDescription());
            if (policy != null) {
                for (Map.Entry<String, String> f : m.applied().entrySet()) {
                    System.out.printf("  %-19s %s%n", f.getKey(), f.getValue());
                }
            }
            for (Substitution s : m.substitutions()) {
                System.out.println("  substituted " + s);
            }
            System.out.println();
            System.out.printf("  %-12s %12s %8s%n", "RESOURCE", "ALLOCATED", "IN USE");
            for (Map.Entry<String, Long> e : r.toMap().entrySet()) {
                String k = e.getKey();
                if (k.endsWith("InUse")) {
                    continue;
                }
                String v = k.equals("memoryBytes") ? e.getValue() + " (" + SweepCommand.bytes(e.getValue()) + ")"
                        : String.valueOf(e.getValue());
                String used = k.equals("uarPages") ? String.valueOf(r.uarPagesInUse())
                        : k.equals("uuars") ? String.valueOf(r.uuarsInUse()) : "";
                System.out.println(String.format("  %-12s %12s %8s", k, v, used).stripTrailing());
            }
            System.out.println("  (allocated UAR pages count both data-path uUARs, used or idle; in use: rung by the "
                    + "endpoints' QPs)");
            if (perEndpoint) {
                System.out.println();
                System.out.printf("  %-8s %4s %4s %4s %4s %4s %4s %4s %5s %-9s %s%n", "ENDPOINT", "CTX", "PD", "MR", "QP", "CQ",
                        "SRQ", "TD", "UUAR", "LOCKFREE", "SEND PATH");
                for (int i = 0; i < threads; i++) {
                    Endpoint.Usage u = m.endpoint(i).usage();
                    System.out.printf("  %-8d %4d %4d %4d %4d %4d %4d %4d %5d %-9s %s%n", i, u.context(), u.pd(), u.mr(), u.qp(),
                            u.cq(), u.srq(), u.td(), u.uuar(), u.lockFreeQp() ? "yes" : "no", u.sendPath());
                }
            }
        }
        return 0;
    }
}
