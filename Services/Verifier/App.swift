import Foundation

/// Entry point of `verifier`, the verifier worker. Its issue has not landed yet: it says so and exits non-zero,
/// so that nothing mistakes it for a working service.
@main
struct App {
    static func main() {
        FileHandle.standardError.write(Data("verifier: not yet implemented\n".utf8))
        exit(2)
    }
}
