import Testing

/// End-to-end scenarios against one real production deployment (`redis-server`, `appstore-sim`,
/// `ingest`, two `verifier` and two `fulfiller` replicas), driven only through public interfaces: ingest's
/// HTTP API, the simulator's control API and `tollctl`. The nested suites (one file each) share the
/// system; every test uses its own users.
@Suite(.tollgateSystem)
struct TollgateSystemTests {}
