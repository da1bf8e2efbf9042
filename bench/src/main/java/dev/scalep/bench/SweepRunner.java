package dev.scalep.bench;

import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointManager;
import dev.scalep.endpoints.EndpointOptions;
import dev.scalep.endpoints.Substitution;
import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.World;
import dev.scalep.endpoints.Completion;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.DeviceCapabilities;
import dev.scalep.verbs.ResourceUsage;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.counters.Counters;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * Runs the message-rate benchmark for one {@link SweepPoint}: a sender manager and a receiver
 * manager at the point's sharing level, connected endpoint to endpoint; each sender thread posts
 * {@code messages} messages of the {@link Workload} (by default 2-byte RDMA writes; for sends, one
 * {@link Receivers} thread per receiver endpoint reposts each receive) through its endpoint (postlist p, one signaled every q,
 * polling c = d/q completions at a time), and waits until all of them completed. A warm-up pass
 * runs first on the same endpoints and is not timed; then each repeat is timed from a barrier that
 * releases all threads to the moment the last thread's last completion arrived. With a world of two
 * ranks the sender threads run on rank 0 and the receiver endpoints on rank 1, connected with the
 * addresses the world all-gathers; only rank 0 gets measurements (for sends, rank 1's receiver threads
 * repost, and the ranks compare the receives taken with the sends made). Tagged messages
 * ({@code --op tag}) go through the public {@code Messages} API: {@link TaggedSweep}.
 */
public final class SweepRunner {
    /** Payload bytes per message (the research used 2). */
    public static final int PAYLOAD = 2;
    private static final long TIMEOUT_NANOS = TimeUnit.MINUTES.toNanos(5);

    private SweepRunner() {
    }

    /**
     * Options for the endpoints of a point: a policy point maps every feature of its class
     * ({@link EndpointOptions#from}) and polls c = d / q completions at a time; other points take the flags.
     */
    static EndpointOptions options(SweepPoint p, DeviceCapabilities caps) {
        if (p.policyClass() != null) {
            EndpointOptions o = EndpointOptions.from(p.policyClass(), caps);
            return new EndpointOptions(o.sendDepth(), o.recvDepth(), o.bufferBytes(), o.recvSlotBytes(), o.postlist(),
                    o.signalEvery(), o.inlineThreshold(), o.pin(), p.pollBatch(), o.context(), o.chainPool(),
                    o.chainMaxLength(), o.sgeHeaderPayload(), o.srqDepth(), o.srqRefillThreshold(), o.srqRefillBatch(),
                    o.cqDepth(), o.cqModerationCount(), o.cqModerationPeriodUs(), o.ordering(), o.atomicsEmulation(),
                    o.connection());
        }
        return options(p);
    }

    /** A policy point whose class says {@code on-unsupported: fail} runs as written or not at all. */
    private static EndpointManager asWritten(EndpointManager m, SweepPoint p) {
        return p.policyClass() == null ? m : EndpointManager.asWritten(m, p.policyClass());
    }

    /** Options for the endpoints of a flag-driven point. */
    static EndpointOptions options(SweepPoint p) {
        ContextOptions ctx = ContextOptions.DEFAULTS.withBlueFlame(p.blueFlame());
        EndpointOptions d = EndpointOptions.DEFAULTS;
        return new EndpointOptions(p.depth(), d.recvDepth(), d.bufferBytes(), d.recvSlotBytes(), p.postlist(),
                p.unsignaled(), p.inline() ? PAYLOAD : 0, false, p.pollBatch(), ctx);
    }

    /**
     * Measure {@code repeats} timed runs of {@code p} after warm-up runs of {@code warmup} messages
     * per thread, at least two and until the JIT is quiet and the rate steady ({@link SteadyWarmup}).
     * {@code each} receives every measurement as it is made.
     */
    public static List<Measurement> run(Device device, SweepPoint p, int repeats, long warmup,
                                        Consumer<Measurement> each) throws InterruptedException {
        return run(device, p, Workload.DEFAULT, repeats, warmup, each);
    }

    /**
     * Receive depth of a flag-driven point's endpoints for tagged messages ({@code --op tag}): the
     * credits between a pair of slots are a quarter of the receives (an eighth on EFA between two
     * ranks), returned after half of them are consumed, so at the default 32 receives a sender had
     * 8 messages in flight and waited for a credit round trip every 4 (measured across two
     * processes: about 0.01-0.03 Mmsg/s); 256 give 64 credits, twice the receives
     * {@link TaggedSweep} keeps posted.
     */
    static final int TAG_RECV_DEPTH = 256;

    /**
     * The options of {@link #options(SweepPoint, DeviceCapabilities)} for the messages of
     * {@code w}: regions big enough for eight messages side by side (at least the default 4 KiB), a
     * flag-driven point's inline threshold raised to the payload size where the device can inline it,
     * and its receive depth to {@link #TAG_RECV_DEPTH} for tagged messages.
     */
    static EndpointOptions options(SweepPoint p, DeviceCapabilities caps, Workload w) {
        EndpointOptions o = options(p, caps);
        if (p.policyClass() == null && p.inline() && w.inlinable(caps) && w.size() > o.inlineThreshold()) {
            o = o.withFeatures(o.postlist(), o.signalEvery(), w.size());
        }
        if (p.policyClass() == null && w.op() == Workload.Op.TAG && o.recvDepth() < TAG_RECV_DEPTH) {
            o = o.withDepths(o.sendDepth(), TAG_RECV_DEPTH);
        }
        if (p.policyClass() == null && w.op() == Workload.Op.SEND && o.recvDepth() < o.sendDepth()) {
            o = o.withDepths(o.sendDepth(), o.sendDepth());
        }
        long need = 8L * w.size();
        // a send lands in one receive slot; a tagged message with its header
        int slot = Math.max(o.recvSlotBytes(), w.op() == Workload.Op.TAG ? w.size() + Workload.TAG_HEADER : w.size());
        return need <= o.bufferBytes() && slot == o.recvSlotBytes() ? o
                : o.withBuffers((int) Math.max(need, o.bufferBytes()), slot);
    }

    /**
     * The resources the sender side of {@code p} allocates, without timing anything: the endpoints
     * are built, counted and closed.
     */
    public static ResourceUsage resources(Device device, SweepPoint p, Workload w) {
        try (EndpointManager sender = EndpointManager.open(device, SharingConfig.parse(p.sharing()), p.threads(),
                options(p, device.capabilities(), w))) {
            return sender.resources();
        }
    }

    /** {@link #run(Device, SweepPoint, int, long, Consumer)} posting the messages of {@code w}, in this process. */
    public static List<Measurement> run(Device device, SweepPoint p, Workload w, int repeats, long warmup,
                                        Consumer<Measurement> each) throws InterruptedException {
        return run(World.single(), device, p, w, repeats, warmup, each);
    }

    /**
     * Measure {@code repeats} timed runs of {@code p} posting the messages of {@code w} after warm-up
     * runs of {@code warmup} messages per thread ({@link SteadyWarmup}, in the tagged sweep too).
     * One rank: sender and receiver managers in this process. Two ranks: the sender threads on rank
     * 0, the receiver on rank 1; rank 1 waits at a barrier while rank 0 measures (for sends, its
     * receiver threads repost each receive), and only rank 0 gets measurements. {@code each} receives every measurement as it is made.
     */
    public static List<Measurement> run(World world, Device device, SweepPoint p, Workload w, int repeats, long warmup,
                                        Consumer<Measurement> each) throws InterruptedException {
        if (world.size() > 2) {
            throw new IllegalArgumentException("the sweep runs on 1 rank or on 2 (sender, receiver), not " + world.size());
        }
        if (w.op() == Workload.Op.TAG) {
            return TaggedSweep.run(world, device, p, w, repeats, warmup, each);
        }
        SharingConfig cfg = SharingConfig.parse(p.sharing());
        EndpointOptions opts = options(p, device.capabilities(), w);
        if (world.size() == 2) {
            try (EndpointManager mine = world.rank() == 0
                    ? asWritten(EndpointManager.open(device, cfg, p.threads(), opts), p)
                    : EndpointManager.open(device, cfg, p.threads(), opts)) {
                byte[][] all = world.allgather(mine.address());
                mine.connect(all[1 - world.rank()]);
                boolean sends = w.op() == Workload.Op.SEND;
                AtomicReference<Throwable> failure = new AtomicReference<>();
                Receivers rx = sends && world.rank() == 1 ? Receivers.start(mine, p.threads(), failure) : null;
                List<Measurement> out = List.of();
                RuntimeException err = null;
                long[] sent = new long[1];
                world.barrier(); // both sides' receives are posted
                try {
                    out = world.rank() == 0 ? measure(mine, null, p, w, repeats, warmup, 2, each, sent) : List.of();
                } catch (RuntimeException e) {
                    err = e;
                } finally {
                    world.barrier(); // the receiver's memory stays until the sender is done
                }
                if (sends) {
                    err = countReceives(world, p, sent[0], rx, failure, err);
                }
                if (err != null) {
                    throw err;
                }
                return out;
            }
        }
        try (EndpointManager sender = asWritten(EndpointManager.open(device, cfg, p.threads(), opts), p);
             EndpointManager receiver = EndpointManager.open(device, cfg, p.threads(), opts)) {
            sender.connect(receiver);
            return measure(sender, receiver, p, w, repeats, warmup, 1, each, null);
        }
    }

    /**
     * After a send workload on two ranks: rank 0 tells rank 1 how many it sent ({@code sent}: the
     * warm-up rounds, as many as {@link SteadyWarmup} ran, and the timed ones; -1 when it failed),
     * rank 1 waits (at most 60 s) until its receiver threads took that many, stops them, and the
     * ranks compare counts; the error to throw on this rank (the sender's own, or a count that does
     * not match), or null.
     */
    private static RuntimeException countReceives(World world, SweepPoint p, long sent, Receivers rx,
                                                  AtomicReference<Throwable> failure, RuntimeException err)
            throws InterruptedException {
        long told = world.rank() == 0 && err == null && failure.get() == null ? sent : -1;
        byte[][] all = world.allgather(ByteBuffer.allocate(8).putLong(told).array());
        long expected = ByteBuffer.wrap(all[0]).getLong();
        long got = 0;
        if (rx != null) {
            got = expected < 0 ? rx.received() : rx.awaitReceived(expected, TimeUnit.SECONDS.toNanos(60));
            rx.stop();
        }
        long mine = err != null || failure.get() != null ? -1 : got;
        all = world.allgather(ByteBuffer.allocate(8).putLong(mine).array());
        long atReceiver = ByteBuffer.wrap(all[1]).getLong();
        if (err != null) {
            return err;
        }
        if (failure.get() != null) {
            return new IllegalStateException("sweep point " + p.label() + " x" + p.threads() + ": a receiver failed: "
                    + failure.get(), failure.get());
        }
        if (expected < 0) {
            return new IllegalStateException("sweep point " + p.label() + " x" + p.threads() + " failed at rank 0");
        }
        if (atReceiver != expected) {
            return new IllegalStateException("sweep point " + p.label() + " x" + p.threads() + ": rank 1 received "
                    + atReceiver + " sends of the " + expected + " rank 0 sent");
        }
        return null;
    }

    /** The timed rounds on the sender's threads; {@code receiver} (this process's, or null) reposts for sends. */
    private static List<Measurement> measure(EndpointManager sender, EndpointManager receiver, SweepPoint p, Workload w,
                                             int repeats, long warmup, int ranks, Consumer<Measurement> each,
                                             long[] sent) throws InterruptedException {
        List<Measurement> out = new ArrayList<>();
        int point = SweepEvents.nextPoint(); // names this configuration's rounds in a JFR recording
        ResourceUsage resources = sender.resources();
        String notes = sender.substitutions().stream().map(Substitution::toString).collect(Collectors.joining("; "));
        Endpoint[] eps = new Endpoint[p.threads()];
        // Warm-up and repeats run on the same threads, which keep their endpoints. The warm-up rounds go
        // on until the JIT is quiet and the rate steady (SteadyWarmup, at least two: the end of the first
        // (drain, flush) takes paths the loop never took and can send compiled code back to the
        // interpreter); then the timed rounds. The coordinator writes each round's message count
        // (0: stop) before it releases the start barrier, which publishes it to the sender threads.
        SteadyWarmup steady = warmup > 0 ? new SteadyWarmup() : null;
        // a timed round during which the JIT compiled is measured again, at most `repeats` times (RoundJit)
        int maxRounds = 2 * repeats + (warmup > 0 ? SteadyWarmup.MAX_ROUNDS : 0);
        long[] plan = new long[maxRounds + 1];
        boolean[] timed = new boolean[maxRounds + 1]; // the control loop runs around timed rounds only
        // Each thread stamps its own start and end: the timed span is from the first thread's start
        // to the last thread's end, independent of when the coordinating thread gets scheduled.
        long[][] begin = new long[maxRounds][p.threads()];
        long[][] finish = new long[maxRounds][p.threads()];
        long[][] control = new long[maxRounds][p.threads()];
        CyclicBarrier start = new CyclicBarrier(p.threads() + 1);
        CyclicBarrier end = new CyclicBarrier(p.threads() + 1);
        // Around a timed round the sender threads also meet among themselves: after every thread's
        // control and before any sends (go), and after every thread's sends and before any control
        // (done). Without them a thread that started or finished early ran its control while the
        // others sent: inside the timed span, on their cores once threads outnumber cores (at 16
        // threads on 2 cores the control walks took most of the span).
        CyclicBarrier go = new CyclicBarrier(p.threads());
        CyclicBarrier done = new CyclicBarrier(p.threads());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Receivers receivers = w.op() == Workload.Op.SEND && receiver != null
                ? Receivers.start(receiver, p.threads(), failure, start, end, go, done) : null;
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < p.threads(); t++) {
            int idx = t;
            Thread th = Thread.ofPlatform().name("sender-" + t).unstarted(() -> {
                Endpoint ep = null;
                try {
                    ep = sender.acquire();
                    eps[idx] = ep;
                    Completion c = new Completion();
                    ControlLoop probe = new ControlLoop();
                    for (int r = 0;; r++) {
                        start.await();
                        long n = plan[r];
                        if (n == 0) {
                            break;
                        }
                        Endpoint e = ep;
                        Runnable sends = () -> sendAll(e, c, n, idx, w);
                        if (timed[r]) { // the machine's speed around the round
                            int round = r;
                            Runnable timedSends = () -> SweepEvents.round(point, round, idx, sends);
                            control[r][idx] = controlledRound(probe::nanos, go, done, begin[r], finish[r], idx, timedSends);
                        } else {
                            begin[r][idx] = System.nanoTime();
                            sends.run();
                            finish[r][idx] = System.nanoTime();
                        }
                        end.await();
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    start.reset();
                    end.reset();
                    go.reset();
                    done.reset();
                } finally {
                    if (ep != null) {
                        try {
                            ep.close();
                        } catch (RuntimeException e) {
                            failure.compareAndSet(null, e);
                        }
                    }
                }
            });
            threads.add(th);
            th.start();
        }
        int r = 0;
        try {
            boolean warming = steady != null;
            int rep = 0;
            int again = 0; // timed rounds measured again because the JIT compiled during them (at most `repeats`)
            int againSinceRow = 0;
            RoundJit jit = new RoundJit();
            while (warming || rep < repeats) {
                plan[r] = warming ? warmup : p.messages();
                timed[r] = !warming;
                if (!warming) {
                    Warmup.awaitJitIdle(); // the last row's printing or a late compile would share a core with the round
                }
                // the sender threads wait at the start barrier: its counters are still
                Map<String, Long> before = Counters.ENABLED ? sender.counterTotals() : null;
                jit.start();
                start.await(5, TimeUnit.MINUTES);
                end.await(5, TimeUnit.MINUTES);
                boolean compiled = !warming && jit.compiled();
                CounterDelta moved = before == null ? null : CounterDelta.between(before, sender.counterTotals());
                long first = Long.MAX_VALUE;
                long last = Long.MIN_VALUE;
                long ctl = 0;
                for (int t = 0; t < p.threads(); t++) {
                    first = Math.min(first, begin[r][t]);
                    last = Math.max(last, finish[r][t]);
                    ctl += control[r][t];
                }
                long nanos = last - first;
                r++;
                if (warming) {
                    warming = steady.another(warmup * p.threads(), nanos);
                    continue;
                }
                if (compiled && again < repeats) {
                    again++;
                    againSinceRow++;
                    continue;
                }
                rep++;
                Measurement m = new Measurement(p, rep, nanos / 1e9, p.messages() * p.threads(), resources, notes,
                        sender.signalEvery(), ranks, w.size(), moved, steady == null ? 0 : steady.rounds(),
                        ctl / p.threads(), againSinceRow);
                againSinceRow = 0;
                out.add(m);
                SweepEvents.row(point, r - 1, m);
                each.accept(m);
            }
            plan[r] = 0;
            start.await(5, TimeUnit.MINUTES); // the threads read 0 and leave
        } catch (BrokenBarrierException | TimeoutException e) {
            Throwable f = failure.get();
            throw new IllegalStateException("sweep point " + p.label() + " x" + p.threads() + " failed: "
                    + (f != null ? f : e), f != null ? f : e);
        } finally {
            for (Thread th : threads) {
                th.join(TimeUnit.SECONDS.toMillis(30));
            }
            if (receivers != null) {
                receivers.stop();
            }
        }
        if (sent != null) {
            long total = 0;
            for (int k = 0; k < r; k++) {
                total += plan[k] * p.threads();
            }
            sent[0] = total;
        }
        Throwable f = failure.get();
        if (f != null) {
            throw new IllegalStateException("sweep point " + p.label() + " x" + p.threads() + " failed: " + f, f);
        }
        return out;
    }

    /**
     * One sender thread's part of a timed round: the control before, then (once every thread's
     * control is done: {@code go}) its sends, stamped into {@code begin[idx]} and {@code finish[idx]},
     * then (once every thread's sends are done: {@code done}) the control after; returns the mean of
     * the two controls. No control runs inside the span from the first begin to the last finish.
     */
    static long controlledRound(LongSupplier control, CyclicBarrier go, CyclicBarrier done, long[] begin, long[] finish,
                                int idx, Runnable sends) throws InterruptedException, BrokenBarrierException {
        long before = control.getAsLong();
        go.await();
        begin[idx] = System.nanoTime();
        sends.run();
        finish[idx] = System.nanoTime();
        done.await();
        return (before + control.getAsLong()) / 2;
    }

    /** One thread's loop: post n messages, poll when the queue is full, then wait for every completion. */
    static void sendAll(Endpoint ep, Completion c, long n, int thread, Workload w) {
        int size = w.size();
        int offset = (thread & 7) * size; // distinct bytes per thread within the endpoint's own buffer
        // One loop per operation, each a method of its own, so the compiled loop holds only the
        // path its operation takes (one loop switching per message among all three inlined three
        // send paths into one method, and cost about a tenth of a write's time: EndpointVsVerbs).
        switch (w.op()) {
            case WRITE -> writeAll(ep, c, n, offset, size);
            case READ -> readAll(ep, c, n, offset, size);
            case SEND -> sendOnly(ep, c, n, offset, size);
            case TAG -> throw new IllegalStateException("tagged messages go through TaggedSweep");
        }
        if (!ep.drain(TIMEOUT_NANOS)) {
            throw new IllegalStateException("completions did not arrive within 5 minutes (" + ep.outstanding()
                    + " outstanding)");
        }
    }

    /**
     * Messages per inner loop of {@link #writeAll}, {@link #readAll} and {@link #sendOnly}: an
     * int-counted loop inside a loop over the chunks. In a standard compilation C2 keeps no
     * safepoint poll in it, where a loop over a long keeps one. The sweep enters the loop once per
     * round, so C2 first compiles it on stack replacement (which keeps the poll), but about 15 ms
     * later also as a method, which every later round's call runs (HotSpot's compile log and
     * {@code perf}: docs/ARCHITECTURE.md, stop 61). The refused request goes out of line ({@link
     * #retry}), so the loop tests each result once.
     */
    private static final int CHUNK = 1 << 20;

    private static void writeAll(Endpoint ep, Completion c, long n, int offset, int size) {
        for (long base = 0; base < n; base += CHUNK) {
            int m = (int) Math.min(CHUNK, n - base);
            for (int k = 0; k < m; k++) {
                long i = base + k;
                int rc = ep.write(i, offset, size, offset);
                if (rc != Endpoint.OK) {
                    retry(ep, c, Workload.Op.WRITE, i, offset, size, rc);
                }
            }
        }
    }

    private static void readAll(Endpoint ep, Completion c, long n, int offset, int size) {
        for (long base = 0; base < n; base += CHUNK) {
            int m = (int) Math.min(CHUNK, n - base);
            for (int k = 0; k < m; k++) {
                long i = base + k;
                int rc = ep.read(i, offset, size, offset);
                if (rc != Endpoint.OK) {
                    retry(ep, c, Workload.Op.READ, i, offset, size, rc);
                }
            }
        }
    }

    private static void sendOnly(Endpoint ep, Completion c, long n, int offset, int size) {
        for (long base = 0; base < n; base += CHUNK) {
            int m = (int) Math.min(CHUNK, n - base);
            for (int k = 0; k < m; k++) {
                long i = base + k;
                int rc = ep.send(i, offset, size);
                if (rc != Endpoint.OK) {
                    retry(ep, c, Workload.Op.SEND, i, offset, size, rc);
                }
            }
        }
    }

    /** A request refused with {@code rc}: reap and post it again while back-pressured; any other error stops the run. */
    private static void retry(Endpoint ep, Completion c, Workload.Op op, long i, int offset, int size, int refused) {
        int rc = refused;
        while (rc == Endpoint.BACK_PRESSURED) {
            reap(ep, c);
            rc = switch (op) {
                case WRITE -> ep.write(i, offset, size, offset);
                case READ -> ep.read(i, offset, size, offset);
                case SEND -> ep.send(i, offset, size);
                case TAG -> throw new IllegalStateException("tagged messages go through TaggedSweep");
            };
        }
        checkPosted(rc);
    }

    private static void checkPosted(int rc) {
        if (rc != 0) {
            throw new IllegalStateException("post failed: errno " + rc);
        }
    }

    /**
     * Take every completion waiting; when there was none, give the core away once: with more sender
     * threads than cores, a thread spinning on a full queue would otherwise keep the thread that
     * holds the QP (or the combiner role) from running.
     */
    private static void reap(Endpoint ep, Completion c) {
        boolean any = false;
        while (ep.poll(c)) {
            any = true;
            if (!c.ok()) {
                throw new IllegalStateException("completion error: " + WcStatus.name(c.status()) + " (" + c.status() + ") for wr " + c.wrId());
            }
        }
        if (!any) {
            Thread.yield();
        }
    }
}
