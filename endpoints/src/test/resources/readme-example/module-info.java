// The README's library example as an application module: it reads the endpoint API only (which
// brings the policies, verbs and spmd APIs with it through 'requires transitive').
module example {
    requires dev.scalep.endpoints;
}
