package dev.scalep.threading;

import dev.scalep.verbs.counters.CounterGroup;
import dev.scalep.verbs.counters.Counters;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The counters of one CQ's router ({@link Counters}): polls that returned completions, completions
 * polled, completions routed to another owner than the polling thread's, and completions no owner
 * could take. Written by the poll-role holder only ({@link Counters#add}).
 */
public final class CqCounters implements AutoCloseable {
    static final String[] NAMES = {"polls", "completions", "routed-away", "unrouted"};
    public static final int POLLS = 0;
    public static final int COMPLETIONS = 1;
    public static final int ROUTED_AWAY = 2;
    public static final int UNROUTED = 3;

    private final CounterGroup group;
    final AtomicCounter polls;
    final AtomicCounter completions;
    final AtomicCounter routedAway;
    final AtomicCounter unrouted;

    CqCounters(String object) {
        this.group = Counters.group(Counters.TYPE_CQ, object, NAMES);
        this.polls = group.counter(POLLS);
        this.completions = group.counter(COMPLETIONS);
        this.routedAway = group.counter(ROUTED_AWAY);
        this.unrouted = group.counter(UNROUTED);
    }

    public CounterGroup group() {
        return group;
    }

    @Override
    public void close() {
        group.close();
    }
}
