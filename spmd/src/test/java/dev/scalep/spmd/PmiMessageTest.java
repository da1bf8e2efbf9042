package dev.scalep.spmd;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Replies as the launchers' dialects write them, read by key; process mappings; the segment bound. */
class PmiMessageTest {
    @Test
    void pmiOneRepliesAreReadByKeyWhateverTheOrderAndExtras() {
        // hydra: no rc, msg=success; MPICH 4.1: found=TRUE; Slurm: rc first
        PmiMessage hydra = PmiMessage.line("cmd=get_result msg=success value=3:QUJD");
        assertEquals("3:QUJD", hydra.expect("get_result", "get", "here").get("value"));
        PmiMessage mpich = PmiMessage.line("cmd=get_result rc=0 msg=success value=x found=TRUE");
        assertEquals("x", mpich.get("value"));
        PmiMessage slurm = PmiMessage.line("cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024");
        assertEquals(1024, slurm.requireInt("vallen_max", "here"));
        PmiException e = assertThrows(PmiException.class,
                () -> PmiMessage.line("cmd=put_result rc=-1 msg=duplicate_key").expect("put_result", "put of k", "PMI_FD=6"));
        assertEquals("the PMI server on PMI_FD=6 refused put of k with rc=-1 (duplicate_key)", e.getMessage());
        e = assertThrows(PmiException.class, () -> PmiMessage.line("cmd=barrier_out").expect("maxes", "get_maxes", "PMI_FD=6"));
        assertTrue(e.getMessage().contains("answered get_maxes with 'cmd=barrier_out', not cmd=maxes"), e.getMessage());
    }

    @Test
    void pmiTwoBodiesSplitOnSemicolonsWithDoubledOnesLiteral() {
        PmiMessage m = PmiMessage.frame("cmd=kvs-get-response;rc=0;found=TRUE;value=a;;b=c;");
        assertEquals("a;b=c", m.expect("kvs-get-response", "kvs-get", "here").get("value"));
        assertNull(PmiMessage.frame("cmd=kvs-get-response;rc=0;found=FALSE;").get("value"));
    }

    @Test
    void processMappingsGiveEveryRankItsNode() {
        assertArrayEquals(new int[]{0, 0, 0, 0}, Pmi2.processMapping("(vector,(0,1,4))", 4));
        assertArrayEquals(new int[]{0, 0, 1, 1}, Pmi2.processMapping("(vector,(0,2,2))", 4));
        // hydra says one rank per node on one node: the list repeats, so every rank is on node 0
        assertArrayEquals(new int[]{0, 0, 0}, Pmi2.processMapping("(vector,(0,1,1))", 3));
        // cyclic over two nodes, then an uneven block
        assertArrayEquals(new int[]{0, 1, 0, 1, 0}, Pmi2.processMapping("(vector,(0,2,1))", 5));
        assertArrayEquals(new int[]{0, 0, 0, 1, 2}, Pmi2.processMapping("(vector,(0,1,3),(1,2,1))", 5));
        assertThrows(PmiException.class, () -> Pmi2.processMapping("(vector,(0,x,1))", 2));
        assertThrows(PmiException.class, () -> Pmi2.processMapping("0,1,2", 2));
    }

    @Test
    void segmentsStayUnderEveryLaunchersLimit() {
        assertEquals(512, PmiKvs.segment(1024)); // hydra, Slurm PMI-1
        assertEquals(512, PmiKvs.segment(Pmi2.SLURM_SAFE_VALUE));
        assertEquals(484, PmiKvs.segment(500));
        assertThrows(PmiException.class, () -> PmiKvs.segment(20));
        // the longest PMI-1 put: a 256-character kvsname, a 64-character key, a 512-character segment with its count
        String put = "cmd=put kvsname=" + "k".repeat(256) + " key=" + "s".repeat(64) + " value=" + "999:" + "A".repeat(512) + "\n";
        assertTrue(put.length() < 1024 - 100, "under Slurm's one 1024-byte read with room: " + put.length());
    }
}
