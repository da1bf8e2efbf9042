package dev.scalep.spmd;

import dev.scalep.verbs.counters.Counters;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Decides how a process joins its job, from its environment, and joins it. Three protocols, tried
 * in this order unless overridden:
 * <ul>
 *   <li>{@code pmix}: {@code PMIX_NAMESPACE} or {@code PMIX_RANK} set (Open MPI's {@code mpirun},
 *       {@code srun --mpi=pmix}, flux-pmix). The PMIx client library is loaded through FFM.</li>
 *   <li>{@code pmi2}: {@code PMI_FD} set by Slurm ({@code srun --mpi=pmi2}, recognised by
 *       {@code PMI_JOBID}), whose process mapping says which rank runs on which node.</li>
 *   <li>{@code pmi1}: {@code PMI_FD} (MPICH's hydra {@code mpiexec}, Flux's default, Intel MPI,
 *       MVAPICH), or {@code PMI_PORT} with {@code PMI_ID} (hydra's {@code -pmi-port}).</li>
 * </ul>
 * The PMI protocols are spoken in Java over the inherited socket; no C library. The order is
 * overridden by {@code SCALEP_BOOTSTRAP} or the system property {@code scalep.bootstrap} (the
 * property wins): a comma-separated list of {@code pmix}, {@code pmi2}, {@code pmi1}, of which the
 * first whose launcher variables are present is used ({@code pmi2} then needs only
 * {@code PMI_FD}, so {@code SCALEP_BOOTSTRAP=pmi2} speaks PMI-2 to hydra too).
 *
 * <p>No launcher variables: rank 0 of 1, with nothing loaded. Several copies started without a
 * process-management server ({@code srun --mpi=none} with several tasks, or {@code PMI_RANK}
 * without {@code PMI_FD}/{@code PMI_PORT}) would each be rank 0 of 1, so that is refused with one
 * line naming the fix. Every failure is a {@link BootstrapException}: one line, exit status 2.
 */
public final class Bootstrap {
    /** The environment variable that overrides the order. */
    public static final String ENV = "SCALEP_BOOTSTRAP";
    /** The system property that overrides the order (and {@link #ENV}). */
    public static final String PROPERTY = "scalep.bootstrap";
    /** The protocols, in the default order. */
    public static final List<String> PROTOCOLS = List.of("pmix", "pmi2", "pmi1");

    private Bootstrap() {
    }

    /** Which protocol to use and why ({@code protocol} is {@code none} when nobody launched the process). */
    record Choice(String protocol, String why) {
    }

    /** True when a launcher started this process: any protocol's variables, or several Slurm tasks without one. */
    public static boolean launched(Map<String, String> env) {
        return pmix(env) || env.containsKey("PMI_FD") || env.containsKey("PMI_PORT") || withoutServer(env) != null;
    }

    /** Join the job {@code env} describes (override from {@link #PROPERTY}, then {@link #ENV}). */
    public static World open(Map<String, String> env) {
        return open(env, System.getProperty(PROPERTY));
    }

    static World open(Map<String, String> env, String property) {
        Choice c = choose(env, property);
        LaunchedWorld w = switch (c.protocol()) {
            case "pmix" -> PmixWorld.connect(env);
            case "pmi2", "pmi1" -> PmiWorld.connect(c.protocol(), env, c.why());
            default -> null;
        };
        if (w == null) {
            Counters.describe(0, 1);
            return new SingletonWorld();
        }
        w.chosen = c.why();
        Counters.describe(w.rank(), w.size()); // scalep stat shows each process's rank
        return w;
    }

    /** Pick the protocol; a {@link BootstrapException} when none fits what launched us. */
    static Choice choose(Map<String, String> env, String property) {
        String source = property != null && !property.isBlank() ? "-D" + PROPERTY : ENV;
        String override = property != null && !property.isBlank() ? property : env.get(ENV);
        boolean fd = env.containsKey("PMI_FD");
        boolean port = env.containsKey("PMI_PORT");
        if (override == null || override.isBlank()) {
            if (pmix(env)) {
                return new Choice("pmix", "PMIX_NAMESPACE/PMIX_RANK set");
            }
            if (fd && env.containsKey("PMI_JOBID")) {
                return new Choice("pmi2", "PMI_FD and PMI_JOBID set: Slurm's PMI-2");
            }
            if (fd) {
                return new Choice("pmi1", "PMI_FD set");
            }
            if (port) {
                return new Choice("pmi1", "PMI_PORT set");
            }
        } else {
            List<String> order = parse(source, override);
            for (String p : order) {
                boolean offered = switch (p) {
                    case "pmix" -> pmix(env);
                    case "pmi2" -> fd;
                    default -> fd || port;
                };
                if (offered) {
                    return new Choice(p, source + "=" + override);
                }
            }
            if (pmix(env) || fd || port) {
                throw new BootstrapException(source + "=" + override + " asks for " + String.join(" or ", order)
                        + ", but the launcher offers only " + offered(env) + "; drop " + source + " or name that protocol");
            }
        }
        String none = withoutServer(env);
        if (none != null) {
            throw new BootstrapException(none);
        }
        return new Choice("none", "not launched");
    }

    private static List<String> parse(String source, String override) {
        List<String> order = new ArrayList<>();
        for (String s : override.split(",")) {
            String p = s.strip();
            if (!PROTOCOLS.contains(p)) {
                throw new BootstrapException(source + "=" + override + ": '" + p + "' is not a bootstrap; use a comma-separated "
                        + "list of " + String.join(", ", PROTOCOLS));
            }
            if (!order.contains(p)) {
                order.add(p);
            }
        }
        return order;
    }

    private static boolean pmix(Map<String, String> env) {
        return env.containsKey("PMIX_NAMESPACE") || env.containsKey("PMIX_RANK");
    }

    private static String offered(Map<String, String> env) {
        List<String> out = new ArrayList<>();
        if (pmix(env)) {
            out.add("pmix (PMIX_NAMESPACE)");
        }
        if (env.containsKey("PMI_FD")) {
            out.add("pmi1/pmi2 (PMI_FD)");
        } else if (env.containsKey("PMI_PORT")) {
            out.add("pmi1 (PMI_PORT)");
        }
        return String.join(" and ", out);
    }

    /**
     * Why several copies were started without a process-management server to form a job with, as
     * the one-line refusal; null when this does not look like such a launch.
     */
    static String withoutServer(Map<String, String> env) {
        if (pmix(env) || env.containsKey("PMI_FD") || env.containsKey("PMI_PORT")) {
            return null;
        }
        String procId = env.get("SLURM_PROCID");
        String tasks = env.getOrDefault("SLURM_STEP_NUM_TASKS", env.get("SLURM_NTASKS"));
        if (procId != null && tasks != null) {
            int n;
            try {
                n = Integer.parseInt(tasks.strip());
            } catch (NumberFormatException e) {
                n = 2; // unreadable count: say so rather than run as rank 0 of 1
            }
            if (n > 1) {
                return "srun started " + tasks.strip() + " tasks (this is SLURM_PROCID=" + procId + ") with no process-management "
                        + "server: no PMIX_RANK, PMI_FD or PMI_PORT (srun --mpi=none, or MpiDefault=none in slurm.conf), so every "
                        + "task would be rank 0 of 1; launch with `srun --mpi=pmix` or `srun --mpi=pmi2`";
            }
            return null;
        }
        if (env.containsKey("PMI_RANK") || env.containsKey("PMI_SIZE")) {
            return "PMI_RANK=" + env.getOrDefault("PMI_RANK", "unset") + " and PMI_SIZE=" + env.getOrDefault("PMI_SIZE", "unset")
                    + " are set but neither PMI_FD nor PMI_PORT: there is no PMI server to form the job with, so every copy would "
                    + "be rank 0 of 1; launch with a launcher that passes one (mpiexec.hydra, `srun --mpi=pmi2`, `srun --mpi=pmix`, "
                    + "Open MPI's mpirun)";
        }
        return null;
    }
}
