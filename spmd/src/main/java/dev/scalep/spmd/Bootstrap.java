package dev.scalep.spmd;

import java.util.Map;

/**
 * Decides how a process joins its job, from its environment alone.
 * <ul>
 *   <li>{@code PMIX_NAMESPACE} or {@code PMIX_RANK} set: a PMIx launcher started it. PMIx is
 *       initialised; any failure is a {@link BootstrapException} (and PMIx_Finalize is not called).</li>
 *   <li>Otherwise {@code PMI_RANK}/{@code PMI_SIZE}, or {@code SLURM_PROCID} in a step of several
 *       tasks: a launcher that speaks only PMI-1/2 started it. Every copy would be rank 0 of 1, so
 *       this is refused with the fix ({@code srun --mpi=pmix}, {@code mpirun}).</li>
 *   <li>Otherwise not launched: rank 0 of 1, without PMIx.</li>
 * </ul>
 */
public final class Bootstrap {
    private Bootstrap() {
    }

    /** True when a PMIx launcher started this process. */
    public static boolean launched(Map<String, String> env) {
        return env.containsKey("PMIX_NAMESPACE") || env.containsKey("PMIX_RANK");
    }

    /** Join the job {@code env} describes; throws {@link BootstrapException} with a one-line reason. */
    public static World open(Map<String, String> env) {
        if (launched(env)) {
            return PmixWorld.connect(env);
        }
        String pmi = pmiOnly(env);
        if (pmi != null) {
            throw new BootstrapException("started by a launcher that speaks only PMI-1/2 (" + pmi
                    + ", no PMIX_RANK): every copy would be rank 0 of 1; launch with `srun --mpi=pmix` or Open MPI's `mpirun`");
        }
        return new SingletonWorld();
    }

    /** The PMI-1/2 variables that show a multi-task launch without PMIx, or null. */
    static String pmiOnly(Map<String, String> env) {
        if (env.containsKey("PMI_RANK") || env.containsKey("PMI_SIZE")) {
            return "PMI_RANK=" + env.getOrDefault("PMI_RANK", "unset") + ", PMI_SIZE=" + env.getOrDefault("PMI_SIZE", "unset");
        }
        String procId = env.get("SLURM_PROCID");
        String tasks = env.getOrDefault("SLURM_STEP_NUM_TASKS", env.get("SLURM_NTASKS"));
        if (procId != null && tasks != null) {
            try {
                if (Integer.parseInt(tasks.strip()) > 1) {
                    return "SLURM_PROCID=" + procId + " of " + tasks.strip() + " tasks";
                }
            } catch (NumberFormatException e) {
                return "SLURM_PROCID=" + procId + ", task count '" + tasks + "'";
            }
        }
        return null;
    }
}
