package dev.scalep.policies;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class SharingConfigTest {

    @ParameterizedTest
    @EnumSource(Category.class)
    void categoriesRoundTripAndAreDistinct(Category c) {
        SharingConfig s = c.config();
        assertEquals(s, SharingConfig.parse(s.toString()));
        assertEquals(s, SharingConfig.parse(c.spelling()));
        assertEquals(c, s.category());
        assertEquals(c, Category.bySpelling(c.spelling()));
    }

    @Test
    void presetsMatchTheResearchTable() {
        assertEquals(Share.PER_THREAD, Category.MPI_EVERYWHERE.config().ctx());
        assertEquals(TdMode.DEDICATED_2X, Category.TWO_X_DYNAMIC.config().td());
        assertEquals(2, Category.TWO_X_DYNAMIC.config().td().tdsPerThread());
        assertEquals(dev.scalep.verbs.TdSharing.INDEPENDENT, Category.DYNAMIC.config().td().tdSharing());
        assertEquals(dev.scalep.verbs.TdSharing.DEFAULT, Category.SHARED_DYNAMIC.config().td().tdSharing());
        assertEquals(TdMode.NONE, Category.STATIC.config().td());
        SharingConfig mt = Category.MPI_THREADS.config();
        assertEquals(Share.ALL, mt.qp());
        assertEquals(QpMode.LOCKED, mt.qpMode());
        assertEquals(Share.ALL, mt.cq());
        Set<SharingConfig> distinct = new HashSet<>();
        for (Category c : Category.values()) {
            distinct.add(c.config());
            assertEquals(Share.PER_THREAD, c.config().buf(), "buffers are per thread in every preset");
        }
        assertEquals(6, distinct.size());
    }

    @Test
    void axesFormExampleParses() {
        SharingConfig s = SharingConfig.parse("ctx=shared,td=paired,qp=4way:combining,cq=per-qp,buf=per-thread");
        assertEquals(Share.ALL, s.ctx());
        assertEquals(TdMode.PAIRED, s.td());
        assertEquals(Share.ways(4), s.qp());
        assertEquals(QpMode.COMBINING, s.qpMode());
        assertEquals(Share.PER_QP, s.cq());
        assertEquals(Share.NONE, s.srq(), "axes not given come from static");
        assertNull(s.category());
        assertEquals(s, SharingConfig.parse(s.toString()));
        assertEquals("ctx=shared,td=paired,pd=shared,mr=per-thread,buf=per-thread,qp=4way:combining,cq=per-qp,srq=none",
                s.toString());
    }

    @Test
    void categoryBaseWithOverrides() {
        SharingConfig s = SharingConfig.parse(" dynamic , cq = shared ");
        assertEquals(TdMode.DEDICATED, s.td());
        assertEquals(Share.ALL, s.cq());
        SharingConfig locked = SharingConfig.parse("mpi-threads,qp=shared:combining");
        assertEquals(QpMode.COMBINING, locked.qpMode());
        assertEquals(QpMode.COMBINING, SharingConfig.parse("qp=8way").qpMode(), "mode defaults to combining");
        assertEquals(Share.PER_THREAD, SharingConfig.parse("qp=1way").qp(), "1way is per-thread");
    }

    @Test
    void everyAxisCanBeSharedXWays() {
        for (int x = 1; x <= 64; x *= 2) {
            String w = x + "way";
            SharingConfig s = SharingConfig.parse("ctx=" + w + ",pd=" + w + ",mr=" + w + ",buf=" + w + ",qp=" + w
                    + ",cq=" + w + ",srq=" + w);
            assertEquals(x, s.ctx().threadsPerInstance(64));
            assertEquals(64 / x, s.qp().instances(64));
            assertEquals(x > 1, s.qp().shared(64));
            assertEquals(s, SharingConfig.parse(s.toString()));
        }
        assertEquals(2, Share.ways(8).instances(16), "16 threads 8-way: two instances");
        assertEquals(3, Share.ways(4).instances(9));
        assertEquals(0, Share.NONE.instances(4));
        assertEquals(1, Share.ALL.instances(16));
    }

    @ParameterizedTest
    @ValueSource(strings = {"qp=4wy:combining", "ctx=sharde", "foo=1", "td=independent", "qp=4way:fast", "cq=0way",
            "ctx=per-qp", "pd=none", "static,dynamic", "ctx=shared,,qp=2way", "qp=per-thread:locked", "ctx=5000way",
            "ctx=shared,ctx=per-thread", "qp=2way,pd=per-thread", "ctx=4way,pd=8way", "ctx=6way,pd=4way",
            "qp=4way,cq=2way", "", "mpi_everywhere"})
    void badAxesAreRejectedWithTheToken(String text) {
        SharingSyntaxException e = assertThrows(SharingSyntaxException.class, () -> SharingConfig.parse(text));
        assertFalse(e.getMessage().isBlank());
        assertTrue(e.offset() >= 0 && e.offset() <= text.length());
    }

    @Test
    void errorMessagesNameTokenAndAllowedValues() {
        SharingSyntaxException e = assertThrows(SharingSyntaxException.class,
                () -> SharingConfig.parse("ctx=shared,qp=4wy:combining"));
        assertTrue(e.getMessage().contains("token 2 'qp=4wy:combining'"), e.getMessage());
        assertTrue(e.getMessage().contains("allowed: per-thread, shared"), e.getMessage());
        assertEquals(11, e.offset());
        e = assertThrows(SharingSyntaxException.class, () -> SharingConfig.parse("qp=2way,pd=per-thread"));
        assertTrue(e.getMessage().contains("qp=2way is shared more widely than its parent pd=per-thread"), e.getMessage());
        e = assertThrows(SharingSyntaxException.class, () -> SharingConfig.parse("ctx=shared,bogus=1"));
        assertTrue(e.getMessage().contains("unknown axis 'bogus'; axes: ctx, td, pd, mr, buf, qp, cq, srq"), e.getMessage());
    }

    @Test
    void constructorChecksConsistency() {
        SharingConfig s = Category.STATIC.config();
        assertThrows(SharingSyntaxException.class, () -> new SharingConfig(s.ctx(), s.td(), s.pd(), s.mr(), s.buf(),
                Share.ways(2), QpMode.DIRECT, s.cq(), s.srq()));
        assertThrows(IllegalArgumentException.class, () -> new Share(Share.Kind.WAYS, 1));
        assertThrows(IllegalArgumentException.class, () -> Share.ways(Share.MAX_WAYS + 1));
        SharingConfig shared = s.with(SharingConfig.Axis.QP, Share.ways(4));
        assertEquals(QpMode.COMBINING, shared.qpMode());
        assertEquals(QpMode.DIRECT, shared.with(SharingConfig.Axis.QP, Share.PER_THREAD).qpMode());
        assertEquals(Category.STATIC, Category.DYNAMIC.config().withTd(TdMode.NONE).category());
    }
}
