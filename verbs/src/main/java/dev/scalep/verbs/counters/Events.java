package dev.scalep.verbs.counters;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR events of the control path, so that a recording ({@code java -XX:StartFlightRecording})
 * shows a run's life: a device opened, managers connected, QP state changes, asynchronous events,
 * errors of the verbs. All are in the category "scalep"; none is emitted on the data path.
 */
public final class Events {
    private Events() {
    }

    /** A device context opened ({@code ibv_open_device}); its duration is the open. */
    @Name("dev.scalep.DeviceOpen")
    @Label("Device Open")
    @Category("scalep")
    @Description("A device context was opened")
    @StackTrace(false)
    static final class DeviceOpen extends Event {
        @Label("Device")
        String device;
        @Label("Provider")
        String provider;
    }

    /** Two sides connected. */
    @Name("dev.scalep.Connect")
    @Label("Connect")
    @Category("scalep")
    @Description("Endpoints were connected to their peers")
    @StackTrace(false)
    static final class Connect extends Event {
        @Label("Device")
        String device;
        @Label("Sharing")
        String sharing;
        @Label("Threads")
        int threads;
        @Label("QPs")
        int qps;
        @Label("Peers")
        int peers;
    }

    /** A QP moved to another state. */
    @Name("dev.scalep.QpState")
    @Label("QP State Change")
    @Category("scalep")
    @Description("A queue pair changed state")
    @StackTrace(false)
    static final class QpState extends Event {
        @Label("Device")
        String device;
        @Label("QP Number")
        int qpNum;
        @Label("From")
        String from;
        @Label("To")
        String to;
    }

    /** An asynchronous event of a device. */
    @Name("dev.scalep.AsyncEvent")
    @Label("Asynchronous Event")
    @Category("scalep")
    @Description("A device reported an asynchronous event")
    @StackTrace(false)
    static final class Async extends Event {
        @Label("Type")
        String type;
        @Label("QP Number")
        int qpNum;
    }

    /** A verb failed on the control path. */
    @Name("dev.scalep.VerbsError")
    @Label("Verbs Error")
    @Category("scalep")
    @Description("A verbs call failed")
    static final class Error extends Event {
        @Label("Verb")
        String verb;
        @Label("Errno")
        int errno;
        @Label("Device")
        String device;
        @Label("Message")
        String message;
    }

    /** Start timing a device open; {@link #deviceOpened} commits it. */
    public static Object deviceOpening() {
        DeviceOpen e = new DeviceOpen();
        if (!e.isEnabled()) {
            return null;
        }
        e.begin();
        return e;
    }

    /** Commit the event {@link #deviceOpening} returned (null: JFR off). */
    public static void deviceOpened(Object opening, String device, String provider) {
        if (opening instanceof DeviceOpen e) {
            e.end();
            if (e.shouldCommit()) {
                e.device = device;
                e.provider = provider;
                e.commit();
            }
        }
    }

    public static void connected(String device, String sharing, int threads, int qps, int peers) {
        Connect e = new Connect();
        if (e.shouldCommit()) {
            e.device = device;
            e.sharing = sharing;
            e.threads = threads;
            e.qps = qps;
            e.peers = peers;
            e.commit();
        }
    }

    public static void qpState(String device, int qpNum, Object from, Object to) {
        if (from == to) {
            return;
        }
        QpState e = new QpState();
        if (e.shouldCommit()) {
            e.device = device;
            e.qpNum = qpNum;
            e.from = String.valueOf(from);
            e.to = String.valueOf(to);
            e.commit();
        }
    }

    public static void asyncEvent(String type, int qpNum) {
        Async e = new Async();
        if (e.shouldCommit()) {
            e.type = type;
            e.qpNum = qpNum;
            e.commit();
        }
    }

    public static void error(String verb, int errno, String device, String message) {
        Error e = new Error();
        if (e.shouldCommit()) {
            e.verb = verb;
            e.errno = errno;
            e.device = device;
            e.message = message;
            e.commit();
        }
    }
}
