package dev.scalep.endpoints;

import dev.scalep.policies.SharingConfig;
import dev.scalep.spmd.LocalWorld;
import dev.scalep.verbs.Devices;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tagged-message suite ({@link MessageSuite}) in one JVM: ranks are threads of a
 * {@link LocalWorld}, on both simulated devices (sim:efa delivers out of order), at a level with
 * everything per thread, per-thread QPs in shared contexts, and one shared QP; worlds of one,
 * two and three ranks; and worlds whose sends may name any thread slot ({@code +anyslot}).
 */
class MessageTest {
    static final List<String> SCENARIOS = List.of("paths", "matching", "ordering", "back-pressure", "truncation", "cancel-probe",
            "rendezvous", "slots");

    /** The scenarios at {@code level}: where every rank maps its mailboxes, also the lazily returned credits. */
    static List<String> scenarios(String level) {
        if (!MessageSuite.everyRankMaps(level)) {
            return SCENARIOS;
        }
        List<String> all = new ArrayList<>(SCENARIOS);
        all.add(all.indexOf("back-pressure") + 1, "credits-returned");
        return all;
    }

    static Stream<Arguments> matrix() {
        List<Arguments> out = new ArrayList<>();
        for (String dev : new String[]{"sim:mlx5", "sim:efa"}) {
            for (String level : new String[]{"mpi-everywhere", "static", "mpi-threads"}) {
                for (int[] pt : new int[][]{{1, 2}, {2, 2}, {3, 2}}) {
                    out.add(Arguments.of(dev, level, pt[0], pt[1]));
                }
            }
            // through the mapped mailboxes: every rank, and the even ranks only (mixed paths into one inbox)
            out.add(Arguments.of(dev, "static+mapped", 2, 2));
            out.add(Arguments.of(dev, "mpi-threads+mapped:even", 3, 2));
            // sends that name any slot of the target rank: per-thread QPs, one shared QP, mapped mailboxes
            out.add(Arguments.of(dev, "mpi-everywhere+anyslot", 2, 2));
            out.add(Arguments.of(dev, "mpi-everywhere+anyslot", 3, 2));
            out.add(Arguments.of(dev, "mpi-threads+anyslot", 2, 3));
            out.add(Arguments.of(dev, "static+anyslot+mapped", 2, 2));
        }
        return out.stream();
    }

    /** Ranks that open their worlds with different slot addressing are refused on every rank, before anything is built. */
    @Test
    @Timeout(60)
    void ranksWithDifferentSlotAddressingAreRefused() throws Exception {
        List<Object> results = LocalRanks.run(2, 30_000, w -> {
            try (WorldEndpoints eps = WorldEndpoints.open(w, Devices.byName("sim:mlx5"), SharingConfig.parse("static"), 2,
                    MessageSuite.OPTS, ProgressMode.CALLER, w.rank() == 0 ? SlotAddressing.SAME_INDEX : SlotAddressing.ANY_SLOT)) {
                return "opened";
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        });
        for (int r = 0; r < 2; r++) {
            String why = (String) results.get(r);
            assertTrue(why.contains("rank " + (1 - r) + " opened its world with another slot addressing"), "rank " + r + ": " + why);
        }
    }

    /**
     * Receive slots of 100 bytes, not a multiple of 8: the mailbox slots are 96 bytes apart (every
     * ready mark, a message's sequence field, an aligned word), the eager limit is 96 less the
     * 56-byte header, and a message of that size goes from each rank to the other, through the
     * endpoints and through the mapped mailboxes, byte for byte.
     */
    @ParameterizedTest(name = "mapped={0}")
    @ValueSource(booleans = {false, true})
    void receiveSlotsOfAnyByteSizeCarryMessages(boolean mapped) throws Exception {
        EndpointOptions opts = MessageSuite.OPTS.withBuffers(MessageSuite.OPTS.bufferBytes(), 100);
        List<Object> results = LocalRanks.run(2, 30_000, w -> {
            try (WorldEndpoints eps = WorldEndpoints.open(w, Devices.byName("sim:mlx5"), SharingConfig.parse("static"), 1,
                    opts)) {
                if (mapped) {
                    eps.mapMessages();
                }
                RankEndpoint ep = eps.acquire();
                Messages m = ep.messages();
                int limit = m.eagerLimit();
                MemorySegment buf = eps.allocate(2L * limit);
                for (int k = 0; k < limit; k++) {
                    buf.set(ValueLayout.JAVA_BYTE, k, (byte) (w.rank() * 7 + k));
                }
                int peer = 1 - w.rank();
                MessageSuite.send(m, peer, 9, buf, 0, limit);
                MessageStatus st = MessageSuite.await(m, m.recv(peer, 9, Messages.ALL_BITS, buf, limit, limit), "receive");
                for (int k = 0; k < limit; k++) {
                    if (buf.get(ValueLayout.JAVA_BYTE, limit + k) != (byte) (peer * 7 + k)) {
                        return "byte " + k + " of rank " + peer + "'s message";
                    }
                }
                return limit + " " + st.length() + " " + st.error() + " " + m.mapped(peer);
            }
        });
        for (int r = 0; r < 2; r++) {
            assertEquals("40 40 0 " + mapped, results.get(r), "rank " + r);
        }
    }

    @ParameterizedTest(name = "{0} {1} ranks={2} threads={3}")
    @MethodSource("matrix")
    @Timeout(180)
    void theMessageSuitePassesOnEveryRank(String dev, String level, int ranks, int threads) throws Exception {
        List<Object> results = LocalRanks.run(ranks, 60_000, w -> MessageSuite.runAll(w, Devices.byName(dev), level, threads));
        for (int r = 0; r < ranks; r++) {
            assertEquals(scenarios(level), results.get(r), "rank " + r);
        }
    }
}
