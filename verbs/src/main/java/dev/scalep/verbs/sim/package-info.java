/**
 * The simulated RDMA devices {@code sim:mlx5} and {@code sim:efa}: a pure-Java, in-process NIC that
 * moves real bytes between registered native memory and writes real completions.
 *
 * <p><b>Fabric.</b> All QPs, MRs and AHs of one {@link dev.scalep.verbs.sim.SimDevice} live in
 * device-wide tables, so contexts opened on the same device object reach each other by QPN, rkey
 * and address handle in process. Devices with a job (the registered ones) also join a fabric
 * segment in the user's private directory under {@code /dev/shm} shared by every process of the
 * user and job ({@code Fabric}, {@code FabricLayout}; files opened by {@code ShmFile}, links refused): one-sided work runs in the initiator on the peer's mapped PD memory,
 * two-sided work goes through the target process's inbound ring to its NIC agent. QPNs and keys
 * carry a generation and their owner's process entry, so a stale one never names a successor.
 *
 * <p><b>Execution.</b> The NIC runs in the posting thread: a post validates each WR against the
 * create-time caps (EINVAL/ENOMEM with {@code badIndex}, as {@code ibv_post_send}), copies it into
 * the send queue (inline payloads at post time), rings the doorbell and executes; a run of plain RDMA
 * writes on an in-order RC QP executes straight from the caller's list instead ({@code DirectWrites},
 * same checks and statuses). In-order devices
 * execute in post order; an RC send waiting for a receive (rnr_retry = 7) blocks its QP until the
 * target posts one. The EFA personality holds WQEs in a per-QP window of W entries and executes a
 * seeded-random one whenever the window is full, and all of them when a CQ of the device is polled
 * empty or a thread waits for a completion event; data, the consumed receive and both completions
 * are reordered together, and every WR completes exactly once. Checks a NIC makes (lkey, rkey,
 * ranges, access rights, receive length, peer state, RNR) produce the completion statuses a verbs
 * device reports ({@link dev.scalep.verbs.WcStatus}); errors move the QP to ERR and flush the rest
 * in SQ order.
 *
 * <p><b>Atomics.</b> {@code sim:mlx5} (atomic_cap HCA) executes 64-bit fetch-and-add and
 * compare-and-swap as the CPU's atomic instruction on the target word itself (the MR's memory in
 * process, the peer's mapped shared file across processes), so they are atomic against every
 * other atomic on the word from any QP, thread or process, and, as the verbs rule says, against
 * nothing else (CPU stores, RDMA writes). {@code sim:efa} (NONE) refuses them as EFA does.
 *
 * <p><b>Locks.</b> The provider's QP lock and the mlx5 shared-uUAR lock are real locks on the post
 * path, absent where mlx5 removes them (parent-domain QPs; dedicated registers). Separately, an
 * engine lock per QP stands for the NIC's serial processing of one send queue and a lock per receive
 * queue for receive consumption; CQs are allocation-free MPSC rings (see {@code SimCq}).
 *
 * <p><b>Resources.</b> mlx5 UAR/uUAR classes, QP→uUAR assignment, thread-domain page pairing and
 * the dynamic UAR mode are modelled as in the research (see {@code SimContext}); memory is accounted
 * with the research's per-resource sizes (see {@code Accounting}). System properties:
 * {@code scalep.sim.allowCqOvercommit}, {@code scalep.sim.efa.seed}, {@code scalep.sim.efa.window},
 * {@code scalep.sim.efa.rdmaWrite}, {@code scalep.sim.efa.unsignaled}, {@code scalep.sim.fabric},
 * {@code scalep.sim.retryTimeoutMillis}, {@code scalep.sim.leaseMillis}, {@code scalep.sim.shmDir},
 * {@code scalep.job}.
 */
package dev.scalep.verbs.sim;
