package dev.scalep.spmd;

/** A process nobody launched: rank 0 of 1, no launcher protocol. */
final class SingletonWorld implements World {
    private final String host = RankTable.hostName();

    @Override
    public int rank() {
        return 0;
    }

    @Override
    public int size() {
        return 1;
    }

    @Override
    public int localRank(int r) {
        check(r);
        return 0;
    }

    @Override
    public int node(int r) {
        check(r);
        return 0;
    }

    @Override
    public String host(int r) {
        check(r);
        return host;
    }

    @Override
    public int nodes() {
        return 1;
    }

    @Override
    public byte[][] allgather(byte[] mine) {
        return new byte[][]{mine.clone()};
    }

    @Override
    public void barrier() {
    }

    @Override
    public String describe() {
        return "not launched: rank 0 of 1";
    }

    @Override
    public String bootstrap() {
        return "none";
    }

    @Override
    public int lostRank() {
        return -1;
    }

    @Override
    public void close() {
    }

    private static void check(int r) {
        if (r != 0) {
            throw new IndexOutOfBoundsException("rank " + r + " of a world of 1");
        }
    }
}
