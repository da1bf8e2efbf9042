package dev.scalep.bench;

import dev.scalep.endpoints.Endpoint;
import dev.scalep.endpoints.EndpointManager;
import dev.scalep.endpoints.Completion;

import dev.scalep.verbs.WcStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The receiving side of a send workload: one thread per receiver endpoint takes each receive
 * completion and posts its slot again, until stopped. A send that finds no receive waits for one
 * (RNR retry 7, as RC hardware and SRD do), so the senders' rate includes the receivers' work. A
 * failure is recorded and breaks the senders' barriers, so that nothing waits for it.
 */
final class Receivers {
    private final List<Thread> threads = new ArrayList<>();
    /** Receive completions taken, by thread (each thread writes its own entry). */
    private final AtomicLongArray taken;
    private volatile boolean stop;

    private Receivers(int n) {
        taken = new AtomicLongArray(n);
    }

    static Receivers start(EndpointManager receiver, int n, AtomicReference<Throwable> failure, CyclicBarrier... barriers) {
        Receivers rx = new Receivers(n);
        for (int t = 0; t < n; t++) {
            int idx = t;
            Thread th = Thread.ofPlatform().name("receiver-" + t).unstarted(() -> {
                Endpoint ep = null;
                try {
                    ep = receiver.acquire();
                    Completion c = new Completion();
                    long mine = 0;
                    while (!rx.stop) {
                        boolean any = false;
                        while (ep.poll(c)) {
                            any = true;
                            if (!c.ok()) {
                                throw new IllegalStateException("receive completion error: " + WcStatus.name(c.status()) + " (" + c.status() + ")");
                            }
                            if (c.isRecv()) {
                                rx.taken.lazySet(idx, ++mine);
                            }
                            int rc = c.isRecv() ? ep.repost((int) c.wrId()) : 0;
                            if (rc != 0) {
                                throw new IllegalStateException("posting receive " + c.wrId() + " again failed: errno " + rc);
                            }
                        }
                        if (!any) {
                            Thread.yield();
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    for (CyclicBarrier b : barriers) {
                        b.reset();
                    }
                } finally {
                    if (ep != null) {
                        ep.close();
                    }
                }
            });
            rx.threads.add(th);
            th.start();
        }
        return rx;
    }

    /** Receive completions taken so far by every thread. */
    long received() {
        long sum = 0;
        for (int t = 0; t < taken.length(); t++) {
            sum += taken.get(t);
        }
        return sum;
    }

    /** Wait until {@code expected} receives were taken (or {@code timeoutNanos} passed); what was taken. */
    long awaitReceived(long expected, long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        long got;
        while ((got = received()) < expected && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        return got;
    }

    /** Stop every receiver thread and wait (at most 30 s each) for it to release its endpoint. */
    void stop() throws InterruptedException {
        stop = true;
        for (Thread th : threads) {
            th.join(TimeUnit.SECONDS.toMillis(30));
        }
    }
}
