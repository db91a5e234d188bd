package import AppStore

/// The App Store Server API clients of a deployment: one per app with a key and per environment the deployment
/// accepts. Each signs its tokens with its own app's key and puts its own app's bundle ID in `bid`, so a call about one
/// app's transaction never goes out under another app's name; apps sharing one team-wide key still have a client,
/// and a rate budget, each.
package struct AppleAPIClients: Sendable {
    /// One client and what it speaks for.
    package struct Entry: Sendable {
        package var bundleId: String
        package var environment: AppStoreEnvironment
        package var client: AppStoreServerAPIClient
    }

    /// Every client: apps in configuration order (the default first), production before sandbox.
    package let entries: [Entry]

    package init(_ entries: [Entry] = []) {
        self.entries = entries
    }

    /// No app has a key.
    package var isEmpty: Bool { entries.isEmpty }

    /// The client of app `bundleId` for `environment`, or nil when that app has no key (or the deployment does not take
    /// that environment).
    package func client(_ bundleId: String, _ environment: AppStoreEnvironment) -> AppStoreServerAPIClient? {
        entries.first { $0.bundleId == bundleId && $0.environment == environment }?.client
    }

    /// The environments some app has a client for, production first.
    package var environments: [AppStoreEnvironment] {
        [AppStoreEnvironment.production, .sandbox].filter { environment in entries.contains { $0.environment == environment } }
    }

    /// The clients of one environment, apps in order.
    package func clients(in environment: AppStoreEnvironment) -> [Entry] {
        entries.filter { $0.environment == environment }
    }
}
