package dev.scalep.threading;

import org.jctools.queues.MessagePassingQueue;
import org.jctools.queues.SpscArrayQueue;
import org.jctools.util.Pow2;

/**
 * One owner's completions: a JCTools {@link SpscArrayQueue} of pooled {@link Completion} records
 * and a second one that carries the emptied records back, so the data path never allocates. The
 * producer (whoever holds the router's poll role) takes a free record, fills it and offers it;
 * the consumer (the owner's thread) copies it out and returns it. The queues' release/acquire
 * element stores order the record's fields in both directions.
 *
 * <p>One producer and one consumer at a time: a role moving between threads must be handed over
 * with a happens-before edge (the router's poll-role CAS does this for the producer).
 */
public final class SpscCompletionRing {
    private final SpscArrayQueue<RoutedCompletion> ready;
    private final SpscArrayQueue<RoutedCompletion> free;
    private final int capacity;

    public SpscCompletionRing(int minCapacity) {
        this.capacity = Pow2.roundToPowerOfTwo(Math.max(2, minCapacity));
        this.ready = new SpscArrayQueue<>(capacity);
        this.free = new SpscArrayQueue<>(capacity);
        for (int i = 0; i < capacity; i++) {
            free.offer(new RoutedCompletion());
        }
    }

    public int capacity() {
        return capacity;
    }

    /** Producer: append one record; false when all {@link #capacity()} records are queued. */
    public boolean offer(long wrId, int status, int opcode, int byteLen, int imm, int qpNum, int flags) {
        RoutedCompletion c = free.relaxedPoll();
        if (c == null) {
            return false;
        }
        c.set(wrId, status, opcode, byteLen, imm, qpNum, flags);
        ready.offer(c); // never full: at most capacity records exist
        return true;
    }

    /** Consumer: take the oldest record into {@code out}; false when empty. */
    public boolean poll(RoutedCompletion out) {
        RoutedCompletion c = ready.relaxedPoll();
        if (c == null) {
            return false;
        }
        out.copyFrom(c);
        free.offer(c);
        return true;
    }

    /**
     * Consumer: hand up to {@code limit} records to {@code sink} in order ({@link MessagePassingQueue#drain});
     * a record is valid only during the call. Returns how many were handed over.
     */
    public int drain(MessagePassingQueue.Consumer<RoutedCompletion> sink, int limit) {
        int n = 0;
        RoutedCompletion c;
        while (n < limit && (c = ready.relaxedPoll()) != null) {
            sink.accept(c);
            free.offer(c);
            n++;
        }
        return n;
    }

    /** Records waiting (a snapshot; any thread). */
    public int size() {
        return ready.size();
    }

    public boolean isEmpty() {
        return ready.isEmpty();
    }
}
