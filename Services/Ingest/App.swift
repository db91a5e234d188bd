import Foundation

/// Entry point of `ingest`, the ingest HTTP service. Its issue has not landed yet: it says so and exits non-zero,
/// so that nothing mistakes it for a working service.
@main
struct App {
    static func main() {
        FileHandle.standardError.write(Data("ingest: not yet implemented\n".utf8))
        exit(2)
    }
}
