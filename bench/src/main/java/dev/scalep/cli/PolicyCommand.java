package dev.scalep.cli;

import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.policies.Category;
import dev.scalep.policies.Degradation;
import dev.scalep.policies.EffectivePolicy;
import dev.scalep.policies.EndpointClass;
import dev.scalep.policies.Policy;
import dev.scalep.policies.PolicyError;
import dev.scalep.policies.PolicyException;
import dev.scalep.policies.PolicyKey;
import dev.scalep.policies.PolicyKeys;
import dev.scalep.policies.PolicyLoader;
import dev.scalep.policies.QpMode;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.Devices;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code scalep policy}: check endpoint policy files and show them with defaults filled in. */
@Command(name = "policy", mixinStandardHelpOptions = true,
        description = "Check endpoint policy files (YAML) and show effective policies.%n"
                + "A FILE is a path, or catalog:NAME for a catalog entry (" + "catalog: "
                + "mpi-everywhere, 2x-dynamic, dynamic, shared-dynamic, static, mpi-threads, recommended-mlx5, recommended-efa).",
        subcommands = {PolicyCommand.Check.class, PolicyCommand.Show.class, TuneCommand.class})
final class PolicyCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** A path, or {@code catalog:NAME}. */
    static Policy load(String file) {
        if (file.startsWith("catalog:")) {
            return PolicyLoader.loadCatalog(file.substring("catalog:".length()));
        }
        return PolicyLoader.load(Path.of(file));
    }

    static EffectivePolicy effective(Policy p, Device device) {
        return device == null ? p.effective() : p.effective(device);
    }

    /** {@code scalep policy check FILE... [--device NAME]}. */
    @Command(name = "check", mixinStandardHelpOptions = true,
            description = "Load and validate policy files; print OK or every error as file:line:column: message. "
                    + "Exit 0 when all are valid, 2 otherwise.")
    static final class Check implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(arity = "1..*", paramLabel = "FILE", description = "Policy files (or catalog:NAME).")
        List<String> files;

        @Option(names = "--device", paramLabel = "NAME",
                description = "Also validate against this device's capabilities and ports (see `scalep devices`): "
                        + "limits, and the connection section's port, GID and path MTU.")
        String device;

        @Option(names = {"-q", "--quiet"}, description = "Do not list degradations and notes.")
        boolean quiet;

        @Override
        public Integer call() {
            Device dev = device == null ? null : Devices.byName(device);
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            int bad = 0;
            for (String f : files) {
                try {
                    EffectivePolicy e = effective(load(f), dev);
                    out.println("OK " + f + (dev == null ? "" : " on " + dev.name()));
                    if (!quiet) {
                        for (Degradation d : e.degradations()) {
                            out.println("  degraded: " + d.message());
                        }
                        for (String n : e.notes()) {
                            out.println("  note: " + n);
                        }
                    }
                } catch (PolicyException e) {
                    bad++;
                    for (PolicyError pe : e.errors()) {
                        err.println(pe);
                    }
                }
            }
            out.flush();
            err.flush();
            if (bad > 0) {
                err.println("scalep policy check: " + bad + " of " + files.size() + " file" + (files.size() == 1 ? "" : "s")
                        + " invalid");
                err.flush();
                return ErrorHandler.USER_ERROR;
            }
            return 0;
        }
    }

    /** {@code scalep policy show FILE [--class NAME] [--device NAME] [--format yaml|table]}. */
    @Command(name = "show", mixinStandardHelpOptions = true,
            description = "Print the effective policy: every setting with defaults filled in and extends applied, "
                    + "and, with --device, what the device made of it. The table lists every key of the file format "
                    + "by its dotted name (auto: chosen by the device at run time).")
    static final class Show implements Callable<Integer> {
        enum Format { yaml, table }

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "FILE", description = "Policy file (or catalog:NAME).")
        String file;

        @Option(names = "--class", paramLabel = "NAME", description = "Only this endpoint class.")
        String className;

        @Option(names = "--device", paramLabel = "NAME", description = "Validate against this device first.")
        String device;

        @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "yaml",
                description = "yaml (loadable policy file) or table. Default: ${DEFAULT-VALUE}.")
        Format format;

        @Override
        public Integer call() {
            Device dev = device == null ? null : Devices.byName(device);
            PrintWriter out = spec.commandLine().getOut();
            EffectivePolicy e;
            try {
                e = effective(load(file), dev);
            } catch (PolicyException ex) {
                PrintWriter err = spec.commandLine().getErr();
                for (PolicyError pe : ex.errors()) {
                    err.println(pe);
                }
                err.flush();
                return ErrorHandler.USER_ERROR;
            }
            if (className != null) {
                e.endpointClass(className); // IllegalArgumentException naming the classes → exit 2
            }
            if (format == Format.yaml) {
                out.print(className == null ? e.toYaml() : e.toYaml(className));
            } else {
                out.print(table(e, className, dev == null ? null : dev.capabilities()));
            }
            out.flush();
            return 0;
        }

        static String table(EffectivePolicy e, String only) {
            return table(e, only, null);
        }

        static String table(EffectivePolicy e, String only, DeviceCapabilities caps) {
            List<EndpointClass> cs = new ArrayList<>();
            for (EndpointClass c : e.classes().values()) {
                if (only == null || only.equals(c.name())) {
                    cs.add(c);
                }
            }
            Map<String, List<String>> rows = new LinkedHashMap<>();
            for (EndpointClass c : cs) {
                Category cat = c.sharing().category();
                add(rows, "sharing", cat != null ? cat.spelling() : "(axes)");
                add(rows, "  ctx", c.sharing().ctx().toString());
                add(rows, "  td", c.sharing().td().spelling());
                add(rows, "  pd", c.sharing().pd().toString());
                add(rows, "  mr", c.sharing().mr().toString());
                add(rows, "  buf", c.sharing().buf().toString());
                add(rows, "  qp", c.sharing().qp() + (c.sharing().qpMode() != QpMode.DIRECT ? ":" + c.sharing().qpMode() : ""));
                add(rows, "  cq", c.sharing().cq().toString());
                add(rows, "  srq", c.sharing().srq().toString());
                for (PolicyKey<?> k : PolicyKeys.CLASS) {
                    if (!k.isSetting() || k == PolicyKeys.SHARING) {
                        continue;
                    }
                    String v = k.spelledIn(c);
                    if (v == null) {
                        v = "auto";
                    }
                    if (k == PolicyKeys.BLUEFLAME && caps != null) {
                        // What the endpoint layer will do (EndpointOptions.from): auto resolved to the device default.
                        v += " (" + (EndpointOptions.from(c, caps).context().blueFlame() ? "on" : "off") + ")";
                    }
                    add(rows, k.path(), v);
                }
            }
            int w0 = "SETTING".length();
            for (String k : rows.keySet()) {
                w0 = Math.max(w0, k.length());
            }
            int[] w = new int[cs.size()];
            for (int i = 0; i < cs.size(); i++) {
                w[i] = cs.get(i).name().length();
                for (List<String> r : rows.values()) {
                    w[i] = Math.max(w[i], r.get(i).length());
                }
            }
            StringBuilder sb = new StringBuilder();
            sb.append(e.source()).append(e.device() == null ? "" : " on " + e.device()).append('\n');
            sb.append(pad("SETTING", w0));
            for (int i = 0; i < cs.size(); i++) {
                sb.append("  ").append(pad(cs.get(i).name().toUpperCase(), w[i]));
            }
            sb.append('\n');
            for (Map.Entry<String, List<String>> r : rows.entrySet()) {
                sb.append(pad(r.getKey(), w0));
                for (int i = 0; i < cs.size(); i++) {
                    sb.append("  ").append(pad(r.getValue().get(i), w[i]));
                }
                sb.append('\n');
            }
            for (Degradation d : e.degradations()) {
                if (only == null || only.equals(d.className())) {
                    sb.append("degraded: ").append(d.message()).append('\n');
                }
            }
            for (String n : e.notes()) {
                if (only == null || n.startsWith("class " + only + ":")) {
                    sb.append("note: ").append(n).append('\n');
                }
            }
            return sb.toString();
        }

        private static void add(Map<String, List<String>> rows, String k, Object v) {
            rows.computeIfAbsent(k, x -> new ArrayList<>()).add(String.valueOf(v));
        }

        private static String pad(String s, int w) {
            return s.length() >= w ? s : s + " ".repeat(w - s.length());
        }
    }
}
