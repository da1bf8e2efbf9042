package dev.scalep.endpoints;

/**
 * What happened when the manager pinned an acquiring thread to a CPU
 * ({@link EndpointOptions#pin()}): pinning is reported, never fatal, so a refusal (EPERM in a
 * container, EINVAL for a CPU outside the allowed set, a non-Linux OS) leaves the thread unpinned
 * and says why here.
 *
 * @param pinned whether the thread now runs on {@code cpu} only
 * @param cpu    the CPU asked for
 * @param errno  the errno of {@code sched_setaffinity(2)} when it refused, else 0
 * @param detail one line for a report: the CPU, or the refusal and its reason
 */
public record Pinning(boolean pinned, int cpu, int errno, String detail) {
    @Override
    public String toString() {
        return detail;
    }
}
