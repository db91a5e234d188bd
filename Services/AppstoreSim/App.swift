import Foundation

/// Entry point of `appstore-sim`, the App Store simulator. Its issue has not landed yet: it says so and exits non-zero,
/// so that nothing mistakes it for a working service.
@main
struct App {
    static func main() {
        FileHandle.standardError.write(Data("appstore-sim: not yet implemented\n".utf8))
        exit(2)
    }
}
