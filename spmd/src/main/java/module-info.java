/**
 * SPMD jobs: a {@link dev.scalep.spmd.World} of ranks (a single process, local child processes or a
 * PMIx-launched job) with its bootstrap exchange. The PMIx binding ({@code dev.scalep.spmd.ffm}) is
 * internal; it reads native memory, so this module needs native access too on the module path
 * ({@code --enable-native-access=dev.scalep.verbs,dev.scalep.spmd}).
 */
module dev.scalep.spmd {
    requires dev.scalep.verbs;

    exports dev.scalep.spmd;
}
