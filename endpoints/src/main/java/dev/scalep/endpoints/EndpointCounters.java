package dev.scalep.endpoints;

import dev.scalep.verbs.counters.CounterGroup;
import dev.scalep.verbs.counters.Counters;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The counters of one endpoint ({@link Counters}), written by its owner thread only (ordered
 * stores): requests posted (accepted by the send path), signaled ones, completions delivered to it,
 * posts that returned back-pressure, posts that returned an errno.
 */
final class EndpointCounters implements AutoCloseable {
    static final String[] NAMES = {"wrs", "signaled", "completions", "back-pressured", "failed-posts"};
    static final int WRS = 0;
    static final int SIGNALED = 1;
    static final int COMPLETIONS = 2;
    static final int BACK_PRESSURED = 3;
    static final int FAILED_POSTS = 4;

    final CounterGroup group;
    final AtomicCounter wrs;
    final AtomicCounter signaled;
    final AtomicCounter completions;
    final AtomicCounter backPressured;
    final AtomicCounter failedPosts;

    EndpointCounters(String object) {
        this.group = Counters.group(Counters.TYPE_ENDPOINT, object, NAMES);
        this.wrs = group.counter(WRS);
        this.signaled = group.counter(SIGNALED);
        this.completions = group.counter(COMPLETIONS);
        this.backPressured = group.counter(BACK_PRESSURED);
        this.failedPosts = group.counter(FAILED_POSTS);
    }

    @Override
    public void close() {
        group.close();
    }
}
