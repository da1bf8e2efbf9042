package dev.scalep.bench.kernels;

import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.LocalWorld;
import dev.scalep.spmd.World;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The kernels as SPMD jobs with ranks as threads of this JVM ({@link LocalWorld}): every P × T
 * decomposition verifies and every rank reports the same combined result. The launched form
 * (separate JVMs under mpirun) is {@code MpirunKernelTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RankedKernelsTest {
    interface Kernel {
        KernelSupport.Result run(World w, Device d, SharingConfig cfg) throws Exception;
    }

    static KernelSupport.Result[] onRanks(int ranks, String device, String level, Kernel k) throws Exception {
        Device d = Devices.byName(device);
        List<World> worlds = LocalWorld.create(ranks, 30_000);
        AtomicReferenceArray<Object> out = new AtomicReferenceArray<>(ranks);
        List<Thread> ts = new ArrayList<>();
        for (World w : worlds) {
            ts.add(Thread.ofPlatform().name("rank-" + w.rank()).start(() -> {
                try {
                    out.set(w.rank(), k.run(w, d, SharingConfig.parse(level)));
                } catch (Throwable t) {
                    out.set(w.rank(), t);
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        KernelSupport.Result[] rs = new KernelSupport.Result[ranks];
        for (int r = 0; r < ranks; r++) {
            if (out.get(r) instanceof Throwable t) {
                throw new AssertionError("rank " + r + ": " + t, t);
            }
            rs[r] = (KernelSupport.Result) out.get(r);
        }
        return rs;
    }

    @ParameterizedTest(name = "stencil {0} {1} ranks={2} threads={3}")
    @CsvSource({"sim:mlx5,static,2,2", "sim:mlx5,mpi-threads,3,1", "sim:mlx5,'mpi-threads,qp=shared:combining',2,3",
            "sim:efa,static,2,2", "sim:efa,mpi-threads,4,1"})
    void stencilVerifiesForEveryDecomposition(String device, String level, int ranks, int threads) throws Exception {
        KernelSupport.Result[] rs = onRanks(ranks, device, level, (w, d, cfg) -> Stencil.run(w, d, level, cfg, threads, 20, 12));
        for (KernelSupport.Result r : rs) {
            assertTrue(r.verified(), r.detail());
            assertEquals(ranks, r.ranks());
            assertEquals(rs[0].seconds(), r.seconds(), "every rank reports the slowest rank's span");
        }
    }

    @ParameterizedTest(name = "gups {0} {1} {4} ranks={2} threads={3}")
    @CsvSource({"sim:mlx5,static,1,2,atomic", "sim:mlx5,mpi-everywhere,2,1,atomic", "sim:mlx5,mpi-threads,2,2,atomic",
            "sim:mlx5,static,2,2,get-put", "sim:efa,static,1,2,get-put", "sim:efa,mpi-everywhere,2,1,get-put",
            "sim:efa,mpi-threads,2,2,get-put", "sim:efa,static,1,2,atomic", "sim:efa,mpi-everywhere,2,1,atomic",
            "sim:efa,mpi-threads,2,2,atomic", "sim:mlx5,static,2,2,atomic+mapped", "sim:efa,mpi-threads,2,2,atomic+mapped",
            "sim:mlx5,mpi-everywhere,2,1,get-put+mapped"})
    void gupsVerifiesForEveryDecomposition(String device, String level, int ranks, int threads, String variant) throws Exception {
        Gups.Variant v = Gups.Variant.parse(variant.replace("+mapped", ""));
        boolean mapped = variant.endsWith("+mapped");
        KernelSupport.Result[] rs = onRanks(ranks, device, level, (w, d, cfg) -> Gups.run(w, d, level, cfg, threads, 12, v, mapped));
        for (KernelSupport.Result r : rs) {
            assertTrue(r.verified(), r.detail());
            assertEquals(ranks, r.ranks());
            assertTrue(r.rate() > 0, "a rate in GUP/s");
        }
    }

    @ParameterizedTest(name = "sort {0} {1} ranks={2} threads={3}")
    @CsvSource({"sim:mlx5,static,1,2", "sim:mlx5,mpi-everywhere,2,1", "sim:mlx5,mpi-threads,2,2", "sim:mlx5,static,2,2",
            "sim:efa,static,1,2", "sim:efa,mpi-everywhere,2,1", "sim:efa,mpi-threads,2,2", "sim:efa,static,2,2"})
    void sortVerifiesForEveryDecomposition(String device, String level, int ranks, int threads) throws Exception {
        KernelSupport.Result[] rs = onRanks(ranks, device, level,
                (w, d, cfg) -> IntegerSort.run(w, d, level, cfg, threads, IntegerSort.Size.S));
        for (KernelSupport.Result r : rs) {
            assertTrue(r.verified(), r.detail());
            assertEquals(ranks, r.ranks());
            assertEquals(threads, r.threads());
            assertEquals("Mkeys/s", r.rateUnit());
            assertTrue(r.rate() > 0, "a rate in Mkeys/s");
            assertEquals(rs[0].seconds(), r.seconds(), "every rank reports the slowest rank's span");
        }
    }

    @ParameterizedTest(name = "dgemm {0} {1} ranks={2} threads={3}")
    @CsvSource({"sim:mlx5,static,2,2", "sim:mlx5,mpi-threads,3,2", "sim:efa,static,2,1", "sim:efa,mpi-threads,3,2"})
    void dgemmVerifiesWithTheMatricesOnRankZero(String device, String level, int ranks, int threads) throws Exception {
        KernelSupport.Result[] rs = onRanks(ranks, device, level, (w, d, cfg) -> Dgemm.run(w, d, level, cfg, threads, 32, 8));
        for (KernelSupport.Result r : rs) {
            assertTrue(r.verified(), r.detail());
            assertEquals(ranks, r.ranks());
        }
    }

    @ParameterizedTest(name = "too small a grid: ranks={0}")
    @CsvSource({"2", "3"})
    void aStencilTooSmallForItsWorkersIsRefusedOnEveryRank(int ranks) {
        // 4 interior rows for ranks x 3 workers: refused before anything is built.
        AssertionError e = Assertions.assertThrows(AssertionError.class,
                () -> onRanks(ranks, "sim:mlx5", "static", (w, d, cfg) -> Stencil.run(w, d, "static", cfg, 3, 6, 1)));
        assertTrue(e.getMessage().contains("interior rows for " + 3 * ranks + " workers"), e.getMessage());
    }
}
