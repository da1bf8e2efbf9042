package dev.scalep.bench;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * JFR events of the sweep's timing, so that a recording knows which stretches of a sender thread's
 * time were a timed round, and which of those rounds became a row: {@link SenderProfile} keeps the
 * CPU samples that fall inside them. Emitted around rounds, never per message; with no recording
 * that enables them they cost a check.
 */
public final class SweepEvents {
    /** Configurations measured so far in this JVM. */
    private static final AtomicInteger POINTS = new AtomicInteger();

    private SweepEvents() {
    }

    /** A new configuration's number, unique in this JVM. */
    static int nextPoint() {
        return POINTS.incrementAndGet();
    }

    /** One sender thread's sends of one timed round; its duration is the sends. */
    @Name("dev.scalep.SweepRound")
    @Label("Sweep Round")
    @Category("scalep")
    @Description("One sender thread's sends in a timed round of the sweep")
    @StackTrace(false)
    static final class Round extends Event {
        @Label("Point")
        @Description("The configuration's number in this JVM")
        int point;
        @Label("Round")
        int round;
        @Label("Thread Index")
        int thread;
    }

    /** A timed round kept as a row (a round during which the JIT compiled is measured again, not kept). */
    @Name("dev.scalep.SweepRow")
    @Label("Sweep Row")
    @Category("scalep")
    @Description("A timed round of the sweep kept as a row of its results")
    @StackTrace(false)
    static final class Row extends Event {
        @Label("Point")
        int point;
        @Label("Round")
        int round;
        @Label("Configuration")
        String configuration;
        @Label("Threads")
        int threads;
        @Label("Postlist")
        int postlist;
        @Label("Messages")
        long messages;
        @Label("Mmsg/s")
        double mmsgPerSec;
    }

    /** Run {@code sends} as round {@code round} of point {@code point} on sender thread {@code thread}. */
    static void round(int point, int round, int thread, Runnable sends) {
        Round e = new Round();
        e.begin();
        sends.run();
        e.end();
        if (e.shouldCommit()) {
            e.point = point;
            e.round = round;
            e.thread = thread;
            e.commit();
        }
    }

    /** Round {@code round} of point {@code point} became the row {@code m}. */
    static void row(int point, int round, Measurement m) {
        Row e = new Row();
        if (e.shouldCommit()) {
            SweepPoint p = m.point();
            e.point = point;
            e.round = round;
            e.configuration = p.label() + ("all".equals(p.variant()) ? "" : " " + p.variant());
            e.threads = p.threads();
            e.postlist = p.postlist();
            e.messages = m.messages();
            e.mmsgPerSec = m.mmsgPerSec();
            e.commit();
        }
    }
}
