package dev.scalep.threading;

import dev.scalep.verbs.counters.CounterGroup;
import dev.scalep.verbs.counters.Counters;
import dev.scalep.verbs.counters.LocalCounter;

/**
 * The counters of one CQ's router ({@link Counters}): polls that returned completions, completions
 * polled, completions routed to another owner than the polling thread's, and completions no owner
 * could take. Written by the poll-role holder only (plain stores), in one cache line of a local
 * group ({@link Counters#localGroup}), which moves with the role when another thread takes it.
 */
public final class CqCounters implements AutoCloseable {
    static final String[] NAMES = {"polls", "completions", "routed-away", "unrouted"};
    public static final int POLLS = 0;
    public static final int COMPLETIONS = 1;
    public static final int ROUTED_AWAY = 2;
    public static final int UNROUTED = 3;

    private final CounterGroup group;
    final LocalCounter polls;
    final LocalCounter completions;
    final LocalCounter routedAway;
    final LocalCounter unrouted;

    CqCounters(String object) {
        this.group = Counters.localGroup(Counters.TYPE_CQ, object, NAMES, new int[NAMES.length]);
        this.polls = group.local(POLLS);
        this.completions = group.local(COMPLETIONS);
        this.routedAway = group.local(ROUTED_AWAY);
        this.unrouted = group.local(UNROUTED);
    }

    public CounterGroup group() {
        return group;
    }

    @Override
    public void close() {
        group.close();
    }
}
