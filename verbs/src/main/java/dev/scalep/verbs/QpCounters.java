package dev.scalep.verbs;

/**
 * What reached the device from one QP: doorbells rung, WQEs posted, WQEs with inline payload,
 * BlueFlame writes. Read them to see a feature's effect (postlist: fewer doorbells per WQE).
 * Values are written by the posting thread; readers on other threads see them eventually.
 */
public interface QpCounters {
    long doorbells();

    long wqes();

    long inlineWqes();

    long blueFlameWrites();

    long receivesPosted();
}
