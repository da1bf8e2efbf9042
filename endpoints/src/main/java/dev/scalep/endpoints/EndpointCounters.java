package dev.scalep.endpoints;

import dev.scalep.verbs.counters.CounterGroup;
import dev.scalep.verbs.counters.Counters;
import dev.scalep.verbs.counters.LocalCounter;

/**
 * The counters of one endpoint ({@link Counters}), written by its owner thread only (plain stores
 * into a local group's one cache line, {@link Counters#localGroup}, which the publisher thread
 * copies to the counters file): requests posted (accepted by the send path), signaled ones,
 * completions delivered to it, posts that returned back-pressure, posts that returned an errno.
 */
final class EndpointCounters implements AutoCloseable {
    static final String[] NAMES = {"wrs", "signaled", "completions", "back-pressured", "failed-posts"};
    static final int WRS = 0;
    static final int SIGNALED = 1;
    static final int COMPLETIONS = 2;
    static final int BACK_PRESSURED = 3;
    static final int FAILED_POSTS = 4;

    final CounterGroup group;
    final LocalCounter wrs;
    final LocalCounter signaled;
    final LocalCounter completions;
    final LocalCounter backPressured;
    final LocalCounter failedPosts;

    EndpointCounters(String object) {
        this.group = Counters.localGroup(Counters.TYPE_ENDPOINT, object, NAMES, new int[NAMES.length]);
        this.wrs = group.local(WRS);
        this.signaled = group.local(SIGNALED);
        this.completions = group.local(COMPLETIONS);
        this.backPressured = group.local(BACK_PRESSURED);
        this.failedPosts = group.local(FAILED_POSTS);
    }

    @Override
    public void close() {
        group.close();
    }
}
