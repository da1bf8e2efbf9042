package dev.scalep.threading;

import dev.scalep.verbs.Access;
import dev.scalep.verbs.CompletionQueue;
import dev.scalep.verbs.Context;
import dev.scalep.verbs.ContextOptions;
import dev.scalep.verbs.CqOptions;
import dev.scalep.verbs.Devices;
import dev.scalep.verbs.MemoryRegion;
import dev.scalep.verbs.Opcode;
import dev.scalep.verbs.ProtectionDomain;
import dev.scalep.verbs.QpInitAttr;
import dev.scalep.verbs.QpType;
import dev.scalep.verbs.QueuePair;
import dev.scalep.verbs.SendFlags;
import dev.scalep.verbs.SendWorkRequests;
import dev.scalep.verbs.WcStatus;
import dev.scalep.verbs.WorkCompletions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests staged straight into a per-thread path's native records ({@link ExclusivePoster#stage}):
 * whatever the mix and order of requests (runs of equal ones that take the template's fast path,
 * changes of one field at a time, opcodes with and without immediate, atomics), each record reads
 * exactly as if it had been written whole, and the posted requests land, complete and retire with
 * the ids they were staged with. A fast path that skipped a field that changed fails it.
 */
@Timeout(60)
class ExclusiveStagingTest {
    private static final Opcode[] OPS = {Opcode.RDMA_WRITE, Opcode.RDMA_WRITE_WITH_IMM, Opcode.SEND,
        Opcode.SEND_WITH_IMM, Opcode.RDMA_READ, Opcode.ATOMIC_FETCH_AND_ADD, Opcode.ATOMIC_CMP_AND_SWP};

    @Test
    void everyStagedRecordReadsAsTheRequestWrittenWhole() {
        try (Context a = Devices.byName("sim:mlx5").open(ContextOptions.DEFAULTS)) {
            ExclusivePoster p = unconnected(a, 8);
            Random rnd = new Random(42);
            long[] req = new long[8 * 10];
            Opcode[] ops = new Opcode[8];
            int[] flags = new int[8];
            long[] last = {0, 0, 64, 1, 0x1000, 2, 0, 0, 0, 0};
            Opcode lastOp = Opcode.RDMA_WRITE;
            for (int round = 0; round < 2000; round++) {
                int n = 1 + rnd.nextInt(8);
                for (int i = 0; i < n; i++) {
                    // mostly the previous request again; sometimes one field (or the opcode) changes
                    Opcode op = rnd.nextInt(6) == 0 ? OPS[rnd.nextInt(OPS.length)] : lastOp;
                    long[] f = last.clone();
                    if (rnd.nextInt(4) == 0) {
                        int which = 2 + rnd.nextInt(8);
                        f[which] = which == 3 ? rnd.nextInt(3) * 4 : rnd.nextInt(3) * 8L;
                    }
                    int fl = rnd.nextInt(5) == 0 ? SendFlags.SIGNALED : 0;
                    if (!op.isAtomic() && rnd.nextBoolean()) { // the one-SGE overload the endpoints' writes take
                        p.stage(1000L * round + i, op, fl, f[2], (int) f[3], (int) f[4], f[5], (int) f[6], (int) f[7], 0);
                    } else {
                        p.stage(1000L * round + i, op, fl, 0, 0, f[2], (int) f[3], (int) f[4], f[5], (int) f[6],
                                (int) f[7], f[8], f[9], 0);
                    }
                    ops[i] = op;
                    flags[i] = fl;
                    System.arraycopy(f, 0, req, 10 * i, 10);
                    last = f;
                    lastOp = op;
                }
                assertEquals(n, p.staged());
                if (rnd.nextBoolean()) {
                    p.signalLast();
                    flags[n - 1] |= SendFlags.SIGNALED;
                }
                assertEquals((flags[n - 1] & SendFlags.SIGNALED) != 0, p.lastSignaled());
                for (int i = 0; i < n; i++) {
                    assertReadsAsWhole(p.list, i, ops[i], flags[i], Arrays.copyOfRange(req, 10 * i, 10 * i + 10),
                            "round " + round + " record " + i + " " + ops[i]);
                }
                p.discardStaged();
                assertEquals(0, p.staged());
            }
            p.close();
        }
    }

    /** A path over a new RC QP of {@code a}, never connected (its records are staged and read, not posted). */
    private static ExclusivePoster unconnected(Context a, int maxBatch) {
        ProtectionDomain pd = a.allocPd();
        CompletionQueue cq = a.createCq(CqOptions.of(256));
        QueuePair qp = pd.createQp(QpInitAttr.of(QpType.RC, cq, 64));
        return new ExclusivePoster(qp, maxBatch, 1, 0, null);
    }

    /**
     * Record {@code i} of {@code w} reads exactly as a record written whole with {@code op},
     * {@code flags} and the fields {@code f} (index 2 on: local address, length, lkey, remote
     * address, rkey, immediate, compare/add, swap).
     */
    private static void assertReadsAsWhole(SendWorkRequests w, int i, Opcode op, int flags, long[] f, String at) {
        try (SendWorkRequests whole = new SendWorkRequests(1, 1)) {
            int k = whole.add(0, op, flags);
            whole.sges(k, 0, 0, f[2], (int) f[3], (int) f[4]);
            if (op.isAtomic()) {
                whole.atomic(k, f[5], (int) f[6], f[8], f[9]);
            } else if (op.isRdma()) {
                whole.rdma(k, f[5], (int) f[6]);
            }
            if (op.hasImmediate()) {
                whole.imm(k, (int) f[7]);
            }
            assertEquals(whole.opcode(0), w.opcode(i), at);
            assertEquals(whole.flags(0), w.flags(i), at);
            assertEquals(whole.numSge(0), w.numSge(i), at);
            for (int j = 0; j < whole.numSge(0); j++) {
                assertEquals(whole.sgeAddr(0, j), w.sgeAddr(i, j), at);
                assertEquals(whole.sgeLength(0, j), w.sgeLength(i, j), at);
                assertEquals(whole.sgeLkey(0, j), w.sgeLkey(i, j), at);
            }
            if (op.isAtomic()) {
                assertEquals(whole.atomicRemoteAddr(0), w.atomicRemoteAddr(i), at);
                assertEquals(whole.atomicRkey(0), w.atomicRkey(i), at);
                assertEquals(whole.compareAdd(0), w.compareAdd(i), at);
                assertEquals(whole.swap(0), w.swap(i), at);
            } else if (op.isRdma()) {
                assertEquals(whole.remoteAddr(0), w.remoteAddr(i), at);
                assertEquals(whole.rkey(0), w.rkey(i), at);
            }
            if (op.hasImmediate()) {
                assertEquals(whole.imm(0), w.imm(i), at);
            }
        }
    }

    /**
     * Runs staged from the first record again and again, mostly the same run with its signals in
     * one of two places (as the endpoint's runs are with a signal every second postlist), sometimes
     * another signal pattern, other fields, single requests staged first or a flush signal after:
     * every record reads as if written whole. A repeated run that left an old signal in place, or
     * took the repeat's shortcut after anything else had written a record, fails it.
     */
    @Test
    void repeatedRunsReadAsWrittenWhole() {
        try (Context a = Devices.byName("sim:mlx5").open(ContextOptions.DEFAULTS)) {
            int max = 8;
            ExclusivePoster p = unconnected(a, max);
            Random rnd = new Random(7);
            Opcode[] runOps = {Opcode.RDMA_WRITE, Opcode.RDMA_READ, Opcode.SEND};
            Opcode[] ops = new Opcode[max];
            int[] flags = new int[max];
            long[][] fields = new long[max][];
            for (int round = 0; round < 5000; round++) {
                // sometimes single requests first, sometimes only they (posted as staged requests are)
                boolean alone = rnd.nextInt(8) == 0;
                int singles = alone ? 1 + rnd.nextInt(max) : rnd.nextInt(8) == 0 ? 1 + rnd.nextInt(2) : 0;
                for (int i = 0; i < singles; i++) {
                    // the usual run's fields with other flags (only the flags written), or others
                    long[] f = rnd.nextBoolean() ? new long[] {0, 0, 0x1000, 8, 1, 0x4000, 2, 0, 0, 0}
                        : new long[] {0, 0, 0x2000 + 8 * i, 8, 1, 0x3000, 2, 0, 0, 0};
                    int fl = rnd.nextBoolean() ? SendFlags.SIGNALED : 0;
                    if (rnd.nextBoolean()) {
                        p.stage(500L * round + i, Opcode.RDMA_WRITE, fl, f[2], (int) f[3], (int) f[4], f[5], (int) f[6], 0,
                                0);
                    } else {
                        p.stage(500L * round + i, Opcode.RDMA_WRITE, fl, 0, 0, f[2], (int) f[3], (int) f[4], f[5],
                                (int) f[6], 0, 0, 0, 0);
                    }
                    ops[i] = Opcode.RDMA_WRITE;
                    flags[i] = fl;
                    fields[i] = f;
                }
                if (alone) {
                    for (int i = 0; i < singles; i++) {
                        assertReadsAsWhole(p.list, i, ops[i], flags[i], fields[i], "round " + round + " single " + i);
                    }
                    p.discardStaged();
                    continue;
                }
                boolean usual = rnd.nextInt(6) != 0;
                Opcode op = usual ? Opcode.RDMA_WRITE : runOps[rnd.nextInt(runOps.length)];
                long[] f = {0, 0, usual ? 0x1000 : 0x1000 + 8L * rnd.nextInt(2), 8, 1,
                    usual ? 0x4000 : 0x4000 + 8L * rnd.nextInt(2), 2, 0, 0, 0};
                int n = usual && singles == 0 ? max : 1 + rnd.nextInt(max - singles);
                int base = usual ? 0 : (rnd.nextBoolean() ? SendFlags.INLINE : 0);
                int first = usual ? (rnd.nextBoolean() ? max - 1 : 2 * max) : rnd.nextInt(3 * max) - 1;
                int every = usual ? 2 * max : 1 + rnd.nextInt(2 * max);
                p.stageRun(500L * round + singles, n, op, base, first, every, f[2], (int) f[3], (int) f[4], f[5],
                        (int) f[6], 0);
                for (int i = 0; i < n; i++) {
                    boolean sig = first >= 0 && i >= first && (i - first) % every == 0;
                    ops[singles + i] = op;
                    flags[singles + i] = base | (sig ? SendFlags.SIGNALED : 0);
                    fields[singles + i] = f;
                }
                int staged = singles + n;
                assertEquals(staged, p.staged());
                if (rnd.nextInt(8) == 0) {
                    p.signalLast();
                    flags[staged - 1] |= SendFlags.SIGNALED;
                }
                for (int i = 0; i < staged; i++) {
                    assertReadsAsWhole(p.list, i, ops[i], flags[i], fields[i],
                            "round " + round + " record " + i + " " + ops[i] + " (first " + first + ", every " + every + ")");
                }
                p.discardStaged();
            }
            p.close();
        }
    }

    @Test
    void stagedWritesLandCompleteAndRetireWithTheirIds() {
        try (Wired w = new Wired(0x1111_0000_0000L)) {
            CompletionQueue cq = w.cq;
            MemoryRegion mra = w.mra;
            MemoryRegion mrb = w.mrb;
            ExclusivePoster p = new ExclusivePoster(w.qa, 4, 1, 0, null);
            long[] next = {3}; // the id the next signaled completion must carry: every fourth write is signaled
            try (WorkCompletions wc = new WorkCompletions(16)) {
                for (int k = 0; k < 64; k++) {
                    // runs of 8 equal writes (word k / 8 to word 8 + k / 8): the second list of a run takes
                    // the template's fast path in every record
                    int word = k / 8;
                    p.stage(WrIds.send(0, k), Opcode.RDMA_WRITE, k % 4 == 3 ? SendFlags.SIGNALED : 0, 0, 0,
                            mra.address() + 8L * word, 8, mra.lkey(), mrb.address() + 8L * (8 + word), mrb.rkey(), 0, 0, 0,
                            0);
                    if (p.stagedFull()) {
                        int rc;
                        while ((rc = p.postStaged()) == SendPath.EAGAIN) {
                            reap(p, cq, wc, next);
                        }
                        assertEquals(0, rc);
                        assertEquals(0, p.staged());
                    }
                }
                landedAndRetired(p, w, wc, next);
            }
            // staged requests and a batch are one way or the other, never mixed: the batch is refused
            // with its credit returned
            p.stage(WrIds.send(0, 99), Opcode.RDMA_WRITE, 0, 0, 0, mra.address(), 8, mra.lkey(), mrb.address(),
                    mrb.rkey(), 0, 0, 0, 0);
            SendBatch one = new SendBatch(1);
            one.add(WrIds.send(0, 100), Opcode.RDMA_WRITE, 0);
            assertThrows(IllegalStateException.class, () -> p.post(one));
            assertEquals(p.depth(), p.freeSlots());
            p.discardStaged();
            p.close();
        }
    }

    @Test
    void aRunPostedInOnePassLandsAndRetiresAsOneStagedThenPosted() {
        try (Wired w = new Wired(0x2222_0000_0000L)) {
            CompletionQueue cq = w.cq;
            MemoryRegion mra = w.mra;
            MemoryRegion mrb = w.mrb;
            ExclusivePoster p = new ExclusivePoster(w.qa, 4, 1, 0, null);
            long[] next = {3}; // the last write of each run of four is signaled
            int refused = 0;
            try (WorkCompletions wc = new WorkCompletions(16)) {
                // 16 runs of four writes, word run / 2 to word 8 + run / 2, never reaped between runs: the
                // queue of 16 fills after four runs (credits come back only when reaped), and a run without
                // credits is refused with nothing written
                for (int run = 0; run < 16; run++) {
                    int word = run / 2;
                    int rc = p.postRun(WrIds.send(0, 4L * run), 4, Opcode.RDMA_WRITE, 0, 3, 4,
                            mra.address() + 8L * word, 8, mra.lkey(), mrb.address() + 8L * (8 + word), mrb.rkey(), 0);
                    if (rc == SendPath.EAGAIN) {
                        refused++;
                        assertEquals(0, p.staged(), "run " + run + " refused: nothing written");
                        assertEquals(0, p.freeSlots(), "run " + run + " refused: nothing taken");
                        if (refused % 2 == 1) { // posted again in one pass once reaped
                            while ((rc = p.postRun(WrIds.send(0, 4L * run), 4, Opcode.RDMA_WRITE, 0, 3, 4,
                                    mra.address() + 8L * word, 8, mra.lkey(), mrb.address() + 8L * (8 + word), mrb.rkey(),
                                    0)) == SendPath.EAGAIN) {
                                reap(p, cq, wc, next);
                            }
                        } else { // or staged and posted as staged requests are
                            p.stageRun(WrIds.send(0, 4L * run), 4, Opcode.RDMA_WRITE, 0, 3, 4, mra.address() + 8L * word,
                                    8, mra.lkey(), mrb.address() + 8L * (8 + word), mrb.rkey(), 0);
                            while ((rc = p.postStaged()) == SendPath.EAGAIN) {
                                reap(p, cq, wc, next);
                            }
                        }
                    }
                    assertEquals(0, rc, "run " + run);
                    assertEquals(0, p.staged(), "run " + run);
                }
                landedAndRetired(p, w, wc, next);
            }
            assertTrue(refused >= 3, "runs refused for credits: " + refused); // runs 4, 8 and 12 at least
            p.close();
        }
    }

    /**
     * Runs posted from slot lists, mostly one run again and again with its signal in one of two
     * places, sometimes other addresses, another operation, other flags or another signal pattern:
     * after each post the slot's records read as if written whole. A slot that kept an old signal,
     * or took the repeat's shortcut while it held an older run, fails it.
     */
    @Test
    void slotListRecordsReadAsWrittenWhole() {
        try (Wired w = new Wired(0x4444_0000_0000L)) {
            ExclusivePoster p = new ExclusivePoster(w.qa, 4, 1, 0, null);
            int k = p.slotListCount();
            assertTrue(k > 1);
            Random rnd = new Random(3);
            MemoryRegion mra = w.mra;
            MemoryRegion mrb = w.mrb;
            try (WorkCompletions wc = new WorkCompletions(16)) {
                for (int round = 0; round < 3000; round++) {
                    boolean usual = rnd.nextInt(5) != 0;
                    Opcode op = usual || rnd.nextBoolean() ? Opcode.RDMA_WRITE : Opcode.RDMA_READ;
                    int word = usual ? 0 : rnd.nextInt(4);
                    long[] f = {0, 0, mra.address() + 8L * word, 8, mra.lkey(), mrb.address() + 8L * (8 + word),
                        mrb.rkey(), 0, 0, 0};
                    int n = usual ? 4 : 2 + rnd.nextInt(3);
                    int base = !usual && rnd.nextBoolean() ? SendFlags.FENCE : 0; // (this QP inlines nothing)
                    // every run's last request signaled (reaped whole below, so every slot is free again)
                    int every = usual ? 2 : 1 + rnd.nextInt(n);
                    int first = (n - 1) - every * (usual ? rnd.nextInt(2) : rnd.nextInt((n - 1) / every + 1));
                    int slot = round % k;
                    assertEquals(0, p.postRun(WrIds.send(0, 100L * round), n, op, base, first, every, f[2], (int) f[3],
                            (int) f[4], f[5], (int) f[6], 0), "round " + round + " " + op + " n " + n + " base " + base
                            + " first " + first + " every " + every);
                    for (int i = 0; i < n; i++) {
                        boolean sig = i >= first && (i - first) % every == 0;
                        assertReadsAsWhole(p.slotList(slot), i, op, base | (sig ? SendFlags.SIGNALED : 0), f,
                                "round " + round + " slot " + slot + " record " + i + " " + op + " (first " + first
                                        + ", every " + every + ")");
                        assertEquals(SendCredits.slotWrId(slot, i), p.slotList(slot).wrId(i));
                    }
                    for (int spins = 0; p.freeSlots() < p.depth() && spins < 1_000_000; spins++) {
                        int got = w.cq.poll(wc);
                        for (int j = 0; j < got; j++) {
                            assertEquals(WcStatus.SUCCESS, wc.status(j), "round " + round);
                            p.retire(wc.wrId(j));
                        }
                    }
                    assertEquals(p.depth(), p.freeSlots(), "round " + round);
                }
            }
            p.close();
        }
    }

    /**
     * A run posted from a slot list (its completion's wr_id names the slot's record, not a
     * sequence) retires with its own id; one the provider refuses (the QP in error) is reported
     * request by request with the caller's ids, which the sequence table does not hold for a slot
     * list's run, and gives every credit back.
     */
    @Test
    void aSlotListRunRetiresWithItsIdsAndARefusedOneReportsThem() {
        try (Wired w = new Wired(0x3333_0000_0000L)) {
            List<Long> refused = new ArrayList<>();
            List<Integer> errnos = new ArrayList<>();
            ExclusivePoster p = new ExclusivePoster(w.qa, 4, 1, 0, (id, errno) -> {
                refused.add(WrIds.user(id));
                errnos.add(errno);
            });
            assertEquals(6, p.slotListCount()); // 16 / 4 + 1, made even
            MemoryRegion mra = w.mra;
            MemoryRegion mrb = w.mrb;
            try (WorkCompletions wc = new WorkCompletions(16)) {
                for (int run = 0; run < 12; run++) { // around the slots more than twice
                    int rc;
                    while ((rc = p.postRun(WrIds.send(0, 10L * run), 4, Opcode.RDMA_WRITE, 0, 3, 4, mra.address(), 8,
                            mra.lkey(), mrb.address(), mrb.rkey(), 0)) == SendPath.EAGAIN) {
                        int n = w.cq.poll(wc);
                        for (int j = 0; j < n; j++) {
                            assertEquals(WcStatus.SUCCESS, wc.status(j));
                            assertTrue((wc.wrId(j) & SendCredits.SLOT_TAG) != 0, "a slot record's wr_id: " + wc.wrId(j));
                            long id = WrIds.user(p.retire(wc.wrId(j)));
                            assertEquals(3, id % 10, "the last of its run");
                        }
                    }
                    assertEquals(0, rc, "run " + run);
                }
                for (int spins = 0; p.retired(0) < 48 && spins < 10_000_000; spins++) {
                    int n = w.cq.poll(wc);
                    for (int j = 0; j < n; j++) {
                        assertEquals(10L * (p.retired(0) / 4) + 3, WrIds.user(p.retire(wc.wrId(j))));
                    }
                }
                assertEquals(48, p.retired(0));
            }
            assertEquals(p.depth(), p.freeSlots());
            w.qa.toError();
            int rc = p.postRun(WrIds.send(0, 700), 4, Opcode.RDMA_WRITE, 0, 3, 4, mra.address(), 8, mra.lkey(),
                    mrb.address(), mrb.rkey(), 0);
            assertNotEquals(0, rc);
            assertEquals(List.of(700L, 701L, 702L, 703L), refused);
            assertEquals(List.of(rc, rc, rc, rc), errnos);
            assertEquals(4, p.rejected(0));
            assertEquals(p.depth(), p.freeSlots());
            p.close();
        }
    }

    /**
     * Reap until the 64 writes of words 0..7 (eight writes each) retired, then check that each
     * retired once with every fourth signaled, every credit came back and words 8..15 of the target
     * hold what was written.
     */
    private static void landedAndRetired(ExclusivePoster p, Wired w, WorkCompletions wc, long[] next) {
        for (int spins = 0; p.retired(0) < 64 && spins < 10_000_000; spins++) {
            reap(p, w.cq, wc, next);
        }
        assertEquals(64, p.retired(0));
        assertEquals(67, next[0]);
        assertEquals(p.depth(), p.freeSlots());
        for (int word = 0; word < 8; word++) {
            assertEquals(w.pattern + word, w.mb.get(JAVA_LONG, 8L * (8 + word)), "word " + (8 + word));
        }
    }

    /**
     * Two sim:mlx5 contexts with an RC QP of depth 16 each, connected, and 4 KiB registered on each
     * side; the first 64 words of the sending side hold {@code pattern + k}.
     */
    private static final class Wired implements AutoCloseable {
        final Context a = Devices.byName("sim:mlx5").open(ContextOptions.DEFAULTS);
        final Context b = Devices.byName("sim:mlx5").open(ContextOptions.DEFAULTS);
        CompletionQueue cq;
        MemorySegment mb;
        MemoryRegion mra;
        MemoryRegion mrb;
        QueuePair qa;
        final long pattern;

        Wired(long pattern) {
            this.pattern = pattern;
            try {
                wire(pattern);
            } catch (RuntimeException | Error e) {
                close();
                throw e;
            }
        }

        private void wire(long pattern) {
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            cq = a.createCq(CqOptions.of(64));
            CompletionQueue cqb = b.createCq(CqOptions.of(64));
            MemorySegment ma = pa.allocate(4096, 64);
            mb = pb.allocate(4096, 64);
            mra = pa.register(ma, Access.ALL_RDMA);
            mrb = pb.register(mb, Access.ALL_RDMA);
            qa = pa.createQp(QpInitAttr.of(QpType.RC, cq, 16));
            QueuePair qb = pb.createQp(QpInitAttr.of(QpType.RC, cqb, 16));
            qa.connect(qb.address(), Access.ALL_RDMA, 7);
            qb.connect(qa.address(), Access.ALL_RDMA, 7);
            for (int k = 0; k < 64; k++) {
                ma.set(JAVA_LONG, 8L * k, pattern + k);
            }
        }

        @Override
        public void close() {
            b.close();
            a.close();
        }
    }

    private static void reap(ExclusivePoster p, CompletionQueue cq, WorkCompletions wc, long[] next) {
        int n = cq.poll(wc);
        for (int j = 0; j < n; j++) {
            assertEquals(WcStatus.SUCCESS, wc.status(j));
            assertEquals(next[0], WrIds.user(p.retire(wc.wrId(j))));
            next[0] += 4;
        }
    }
}
