package dev.scalep.bench.kernels;

import dev.scalep.policies.SharingConfig;
import dev.scalep.verbs.Device;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Both kernels verify their result on every provider they apply to; nothing here is skipped. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class KernelsTest {

    @ParameterizedTest
    @CsvSource({"sim:mlx5,mpi-everywhere,2", "sim:mlx5,mpi-threads,3", "sim:mlx5,'mpi-threads,qp=shared:combining',2",
            "sim:mlx5,2x-dynamic,1", "sim:efa,static,2", "sim:efa,mpi-threads,3"})
    void dgemmVerifies(String device, String level, int threads) throws Exception {
        Device dev = Devices.byName(device);
        KernelSupport.Result r = Dgemm.run(dev, level, SharingConfig.parse(level), threads, 32, 8);
        assertTrue(r.verified(), r.detail());
        assertTrue(r.seconds() > 0 && r.rate() > 0);
        // 16 tiles, 4 k-steps each: two reads per step and one write per tile.
        assertEquals(16 * (4 * 2 + 1), Math.round(r.opsPerSec() * r.seconds()));
    }

    @ParameterizedTest
    @CsvSource({"sim:mlx5,mpi-everywhere,3", "sim:mlx5,mpi-threads,3", "sim:mlx5,'mpi-threads,qp=shared:combining',4",
            "sim:mlx5,static,1", "sim:efa,static,3", "sim:efa,mpi-threads,2"})
    void stencilVerifies(String device, String level, int threads) throws Exception {
        Device dev = Devices.byName(device);
        KernelSupport.Result r = Stencil.run(dev, level, SharingConfig.parse(level), threads, 24, 15);
        assertTrue(r.verified(), r.detail());
    }

    @Test
    void referenceIsNotTrivial() {
        // The verification must be able to fail: a different iteration count gives different bits.
        double[] a = Stencil.sequential(12, 12, 3);
        double[] b = Stencil.sequential(12, 12, 4);
        assertFalse(Arrays.equals(a, b));
        double[] c = Dgemm.reference(8);
        double s = 0;
        for (double v : c) {
            s += Math.abs(v);
        }
        assertTrue(s > 0);
        assertEquals(Math.rint(c[5]), c[5]);
    }

    @Test
    void badSizesAreRefused() {
        Device dev = Devices.byName("sim:mlx5");
        assertThrows(IllegalArgumentException.class, () -> Dgemm.run(dev, "static", SharingConfig.parse("static"), 2, 30, 8));
        assertThrows(IllegalArgumentException.class, () -> Stencil.run(dev, "static", SharingConfig.parse("static"), 8, 6, 1));
    }

    @Test
    void levelsParseCategoriesAndAxesForms() {
        Map<String, SharingConfig> m = KernelSupport.levels(List.of("static,mpi-threads;mpi-threads,qp=shared:combining"));
        assertEquals(List.of("static", "mpi-threads", "mpi-threads,qp=shared:combining"), List.copyOf(m.keySet()));
        assertThrows(IllegalArgumentException.class, () -> KernelSupport.levels(List.of("bogus")));
    }
}
