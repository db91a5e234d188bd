// swift-tools-version: 6.0
import PackageDescription

/// One set of settings for every target: Swift 6 language mode, strict concurrency. `MemberImportVisibility`
/// (SE-0444): a file uses members of the modules it imports itself, not of those another file of the target imports.
/// `InternalImportsByDefault` (SE-0409): an `import` is internal, so what a module's `package` declarations expose
/// of another module is written where it happens (`package import`), and nothing leaks by accident.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The products of other packages the targets use, each named once.
enum Product {
    static let asn1 = Target.Dependency.product(name: "SwiftASN1", package: "swift-asn1")
    static let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
    static let coreMetrics = Target.Dependency.product(name: "CoreMetrics", package: "swift-metrics")
    static let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
    static let httpTypes = Target.Dependency.product(name: "HTTPTypes", package: "swift-http-types")
    static let hummingbird = Target.Dependency.product(name: "Hummingbird", package: "hummingbird")
    static let hummingbirdTesting = Target.Dependency.product(name: "HummingbirdTesting", package: "hummingbird")
    static let jwtKit = Target.Dependency.product(name: "JWTKit", package: "jwt-kit")
    static let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
    static let metrics = Target.Dependency.product(name: "Metrics", package: "swift-metrics")
    static let nioCore = Target.Dependency.product(name: "NIOCore", package: "swift-nio")
    static let postgres = Target.Dependency.product(name: "PostgresNIO", package: "postgres-nio")
    static let prometheus = Target.Dependency.product(name: "Prometheus", package: "swift-prometheus")
    static let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
    static let unixSignals = Target.Dependency.product(name: "UnixSignals", package: "swift-service-lifecycle")
    static let x509 = Target.Dependency.product(name: "X509", package: "swift-certificates")
}

/// A library in `Shared/<name>`, described by the README beside its code; its Redis Function libraries are `.lua` files in its `Lua/` folder, compiled in
/// (`PackageResources.<file>_lua`), and so are its other `embed` files (paths in the folder).
func library(
    _ name: String, _ dependencies: [Target.Dependency], lua: [String] = [], embed: [String] = [],
    plugins: [Target.PluginUsage] = []
) -> Target {
    .target(
        name: name, dependencies: dependencies, path: "Shared/\(name)", exclude: ["README.md"],
        resources: lua.map { .embedInCode("Lua/\($0).lua") } + embed.map { .embedInCode($0) }, swiftSettings: swiftSettings,
        plugins: plugins)
}

/// Each service is an executable in `Services/<folder>`, with a README beside its code; its Lua files and any other
/// `embed` files (paths in the folder) are compiled in (`PackageResources.<file>_<extension>`).
func service(
    _ name: String, folder: String, _ dependencies: [Target.Dependency], lua: [String] = [], embed: [String] = []
) -> Target {
    .executableTarget(
        name: name, dependencies: dependencies, path: "Services/\(folder)", exclude: ["README.md"],
        resources: lua.map { .embedInCode("Lua/\($0).lua") } + embed.map { .embedInCode($0) }, swiftSettings: swiftSettings)
}

/// The fuzz targets of the readers that face the internet, one executable in `Tests/Fuzz/<folder>` (a target name as
/// its first argument). `scripts/fuzz` builds it with `-sanitize=fuzzer` and `-DFUZZING`, where libFuzzer's `main`
/// drives it; the ordinary build makes it a replay of inputs (the seed corpus, `Tests/Fuzz/Corpus`).
func fuzzer(_ name: String, folder: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(name: name, dependencies: dependencies, path: "Tests/Fuzz/\(folder)", swiftSettings: swiftSettings)
}

/// A module's tests in `Tests/<name>`.
func tests(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .testTarget(name: name, dependencies: dependencies, path: "Tests/\(name)", swiftSettings: swiftSettings)
}

let package = Package(
    name: "Tollgate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ingest", targets: ["ingest"]),
        .executable(name: "verifier", targets: ["verifier"]),
        .executable(name: "fulfiller", targets: ["fulfiller"]),
        .executable(name: "notifier", targets: ["notifier"]),
        .executable(name: "exporter", targets: ["exporter"]),
        .executable(name: "tollctl", targets: ["tollctl"]),
        .executable(name: "appstore-sim", targets: ["appstore-sim"]),
        .executable(name: "bench-http", targets: ["bench-http"]),
        .executable(name: "abuse-forge", targets: ["abuse-forge"]),
        .executable(name: "tollgate-fuzz", targets: ["tollgate-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
    ],
    targets: [
        // Shared libraries
        .systemLibrary(
            name: "CHiredis", path: "Shared/CHiredis", pkgConfig: "hiredis", providers: [.apt(["libhiredis-dev"])]),
        .systemLibrary(
            name: "CCurl", path: "Shared/CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // The build's commit (`buildCommit()`, for every executable's `--version`) is written by Plugins/BuildInfo.
        .plugin(name: "BuildInfo", capability: .buildTool(), path: "Plugins/BuildInfo"),
        library("Core", [Product.logging], plugins: ["BuildInfo"]),
        library("Redis", ["CHiredis", "Core", Product.logging, Product.serviceLifecycle]),
        library(
            "Pipeline", ["Core", "Redis", Product.logging, Product.metrics, Product.serviceLifecycle],
            lua: ["common", "jobs", "pipeline", "ratelimit", "deadletter"]),
        library(
            "ServiceKit",
            [
                "Core", "Redis", "Pipeline", Product.hummingbird, Product.logging, Product.metrics, Product.nioCore,
                Product.prometheus, Product.serviceLifecycle, Product.unixSignals,
            ]),
        library("HTTPClient", ["CCurl", "Core"]),
        library(
            "AppStore", ["HTTPClient", "Core", Product.crypto, Product.x509, Product.asn1, Product.jwtKit],
            embed: ["G1", "G3", "G4", "G5", "G7", "G8"].map { "Certificates/AppleWWDRCA\($0).cer" }),
        library("AppStoreTesting", ["AppStore", Product.crypto, Product.x509, Product.asn1]),
        library(
            "Verification",
            [
                "Core", "Redis", "Pipeline", "AppStore", "HTTPClient", "Ledger", "ServiceKit", Product.crypto, Product.serviceLifecycle,
                Product.logging, Product.metrics,
            ],
            lua: ["verifier", "reconcile"]),
        library(
            "Ledger", ["Core", "Redis", "Pipeline"],
            lua: [
                "ledger_events", "ledger_records", "ledger_transactions", "ledger_spend", "ledger", "ledger_grants",
                "ledger_sides", "ledger_testers", "customer",
            ]),
        library(
            "Webhooks",
            ["Core", "Redis", "Pipeline", "HTTPClient", Product.crypto, Product.logging, Product.metrics, Product.serviceLifecycle],
            lua: ["notifier"]),
        library(
            "Export",
            ["Core", "Redis", "Pipeline", "Ledger", Product.postgres, Product.logging, Product.metrics],
            lua: ["export"], embed: ["Migrations/m001_tables.sql", "Migrations/m002_views.sql", "Migrations/m003_sides.sql"]),

        // Services
        service(
            "ingest", folder: "Ingest",
            [
                "Core", "Redis", "Pipeline", "Ledger", "AppStore", "ServiceKit", Product.hummingbird, Product.httpTypes,
                Product.nioCore, Product.jwtKit, Product.crypto, Product.serviceLifecycle, Product.logging,
                Product.coreMetrics, Product.prometheus,
            ],
            lua: ["ingest", "offers"], embed: ["openapi.yaml"]),
        service(
            "verifier", folder: "Verifier",
            [
                "AppStore", "Core", "Pipeline", "Redis", "ServiceKit", "Verification", Product.logging, Product.prometheus,
                Product.serviceLifecycle,
            ]),
        service(
            "fulfiller", folder: "Fulfiller",
            [
                "AppStore", "Core", "Redis", "Pipeline", "Ledger", "ServiceKit", Product.hummingbird, Product.serviceLifecycle,
                Product.logging, Product.metrics, Product.prometheus,
            ]),
        service(
            "notifier", folder: "Notifier",
            [
                "Core", "Redis", "Pipeline", "HTTPClient", "Webhooks", "ServiceKit", Product.serviceLifecycle, Product.logging,
                Product.prometheus,
            ]),
        service(
            "exporter", folder: "Exporter",
            [
                "Core", "Redis", "Pipeline", "Ledger", "Export", "ServiceKit", Product.postgres, Product.logging,
                Product.prometheus, Product.serviceLifecycle,
            ]),
        service(
            "tollctl", folder: "Tollctl",
            [
                "Core", "AppStore", "HTTPClient", "Redis", "Pipeline", "Ledger", "ServiceKit", "Verification", "Webhooks", "Export",
                Product.jwtKit,
                Product.logging,
                Product.argumentParser,
            ]),
        service(
            "appstore-sim", folder: "AppstoreSim",
            [
                "Core", "AppStore", "AppStoreTesting", "HTTPClient", Product.hummingbird, Product.serviceLifecycle, Product.logging,
                Product.argumentParser, Product.crypto, Product.httpTypes, Product.nioCore, Product.unixSignals,
            ]),
        service("bench-http", folder: "BenchHTTP", ["AppStore", "Core", "HTTPClient"]),

        // Tests
        // The abuse run's crafted inputs and the door's cost per refused request (scripts/abuse, scripts/README.md).
        .executableTarget(
            name: "abuse-forge", dependencies: ["AppStore", "AppStoreTesting", "Core", Product.argumentParser, Product.crypto],
            path: "Tests/AbuseForge",
            swiftSettings: swiftSettings),
        fuzzer("tollgate-fuzz", folder: "Targets", ["Core", "AppStore", Product.asn1, Product.x509]),
        .target(
            name: "TestSupport",
            dependencies: [
                "Core", "Redis", "Pipeline", "Ledger", "AppStore", "HTTPClient", Product.crypto, Product.hummingbird, Product.httpTypes,
                Product.logging, Product.serviceLifecycle,
            ],
            path: "Tests/TestSupport", swiftSettings: swiftSettings),
        tests(
            "IngestTests",
            [
                "ingest", "Core", "Pipeline", "Redis", "Ledger", "AppStore", "AppStoreTesting", "HTTPClient", "ServiceKit", "TestSupport",
                Product.crypto, Product.hummingbird, Product.hummingbirdTesting, Product.httpTypes, Product.jwtKit,
                Product.logging,
            ]),
        tests(
            "VerifierTests",
            [
                "verifier", "Core", "Verification", "Pipeline", "Redis", "AppStore", "AppStoreTesting", "HTTPClient", "Ledger",
                "ServiceKit",
                "TestSupport", Product.logging, Product.serviceLifecycle,
            ]),
        tests(
            "FulfillerTests",
            ["fulfiller", "Core", "Pipeline", "Redis", "Ledger", "ServiceKit", "TestSupport", Product.logging, Product.serviceLifecycle]),
        tests(
            "NotifierTests",
            [
                "notifier", "Webhooks", "Core", "Pipeline", "Redis", "AppStore", "HTTPClient", "TestSupport", Product.crypto,
                Product.serviceLifecycle,
            ]),
        tests(
            "EndToEndTests",
            ["Redis", "Pipeline", "AppStore", "AppStoreTesting", "HTTPClient", "Ledger", "TestSupport", Product.crypto, Product.logging]),
        tests("FunctionLibraryTests", ["ingest", "Core", "Pipeline", "Ledger", "Verification", "Webhooks", "Redis", "TestSupport"]),
        tests(
            "CoreTests",
            [
                "Core", "Pipeline", "ServiceKit", "Verification", "Webhooks", "ingest", "fulfiller", "notifier", "appstore-sim",
                "TestSupport",
                Product.logging,
            ]),
        tests(
            "ServiceKitTests",
            [
                "Core", "Pipeline", "Redis", "ServiceKit", "TestSupport", Product.hummingbird, Product.hummingbirdTesting,
                Product.logging, Product.prometheus,
            ]),
        tests(
            "ExportTests",
            [
                "exporter", "Export", "Core", "Ledger", "Pipeline", "Redis", "ServiceKit", "TestSupport", Product.postgres, Product.logging,
                Product.serviceLifecycle, Product.prometheus,
            ]),
        tests("LedgerTests", ["Core", "Ledger", "Pipeline", "Redis", "TestSupport"]),
        tests(
            "TollctlTests", ["ingest", "AppStore", "Core", "HTTPClient", "Ledger", "Pipeline", "Redis", "TestSupport", Product.hummingbird]),
        tests("RedisTests", ["Redis", "TestSupport", Product.serviceLifecycle]),
        tests(
            "PipelineTests",
            [
                "Pipeline", "Redis", "TestSupport", Product.logging, Product.metrics, Product.serviceLifecycle,
                Product.prometheus,
            ]),
        tests(
            "AppStoreTests",
            ["AppStore", "AppStoreTesting", "Core", "HTTPClient", "TestSupport", Product.crypto, Product.x509, Product.asn1]),
        tests("HTTPClientTests", ["HTTPClient", "TestSupport"]),
        tests(
            "AppstoreSimTests",
            [
                "appstore-sim", "AppStore", "AppStoreTesting", "HTTPClient", "TestSupport", Product.crypto, Product.hummingbird,
                Product.logging,
                Product.nioCore,
            ]),
    ]
)
