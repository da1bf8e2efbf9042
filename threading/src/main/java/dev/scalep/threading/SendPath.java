package dev.scalep.threading;

import dev.scalep.verbs.AddressHandle;
import dev.scalep.verbs.QueuePair;

/**
 * The initiation path of one send queue, with exact accounting of its free depth: a request takes
 * one credit when it is accepted and gives it back when a completion retires it ({@link #retire}).
 * On an in-order device a signaled completion also retires every unsignaled request posted before
 * it on the same queue, and those are counted to their owners ({@link #retired(int)}).
 *
 * <p>Requests travel in a {@link SendBatch}, one or many. Who may call {@link #post} concurrently is
 * in the implementation's name: {@link ExclusivePoster} and {@link ChainedPoster} (one thread),
 * {@link LockedPoster} and {@link CombiningPoster} (any).
 * {@link #retire} is called by one thread at a time: whoever holds the poll role of the CQ the
 * queue completes on. The data-path methods never allocate.
 */
public sealed interface SendPath extends AutoCloseable permits AbstractSendPath {
    /** Back-pressure: nothing was taken, the send queue (or the ring in front of it) is full. */
    int EAGAIN = dev.scalep.verbs.Errno.EAGAIN;

    QueuePair qp();

    /** Send queue depth: the credits there are in all. */
    int depth();

    /** The most requests one {@link #post(SendBatch)} may carry. */
    int maxBatch();

    /** SGEs a request may use (2: a {@link SendBatch#header header} and a payload; 1: no header). */
    int maxSge();

    /** Credits free right now (a snapshot). */
    long freeSlots();

    /**
     * Accept every request of {@code batch} or none: 0 when all were taken (posted now or handed to
     * whoever posts next), {@link #EAGAIN} when none were (no credits), EINVAL when the batch is
     * larger than {@link #maxBatch()}, or the provider's errno when it refused requests of this
     * caller's owner (the owner of the batch's first id) during this call. A refusal of another
     * owner's request never comes back here: every refused request is reported to the
     * {@link PostFailureHandler}, counted to its owner ({@link #rejected(int)}) and its credit
     * returned. The batch may be reused on return.
     */
    int post(SendBatch batch);

    /**
     * Post requests other threads handed to this path that nobody has posted yet (a combining path
     * whose last combiner stopped at its drain limit); 0, or the provider's errno. Never waits. The
     * endpoint layer calls it when it polls; paths that post at once have nothing to do.
     */
    default int postQueued() {
        return 0;
    }

    /**
     * Account a send completion polled from the CQ. Takes the {@code wr_id} the provider reported,
     * returns the id the caller staged, gives back the credits of every request it retires and
     * counts them to their owners. One thread at a time.
     */
    long retire(long completedWrId);

    /**
     * The id the caller staged for the provider's {@code completedWrId}, without retiring anything
     * (the poll-role holder reads it to deliver the completion before it calls {@link #retire}).
     */
    long idOf(long completedWrId);

    /**
     * The provider's {@code completedWrId} in a form {@link #retire} still accepts later, after other
     * completions of the queue were retired (a completion held back): a slot record's wr_id
     * ({@link SendCredits#slotWrId}) becomes its request's sequence; other ids are returned as they are.
     * Call it before the completion is retired. One thread at a time, as {@link #retire}.
     */
    long stable(long completedWrId);

    /** Requests of {@code owner} ({@link WrIds#owner}) retired so far (acquire read; any thread). */
    long retired(int owner);

    /** Requests refused by the provider after being accepted (reported to the handler). */
    long rejected();

    /**
     * Requests of {@code owner} refused by the provider (any thread): settled, never completed, and
     * counted here whichever thread's post carried them. An owner's outstanding requests are its
     * accepted ones less {@link #retired(int)} and this.
     */
    long rejected(int owner);

    /** The errno of {@code owner}'s first refused request, 0 if none. */
    int firstRejectErrno(int owner);

    /** Address handle table entry {@code index} for connectionless QPs (control path). */
    void peer(int index, AddressHandle ah, int remoteQpn, int remoteQkey);

    /** This path's counters (doorbells, postlists, lock and combiner activity). */
    PathCounters counters();

    /** Free the postlist memory (not the QP). */
    @Override
    void close();
}
