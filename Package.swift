// swift-tools-version: 6.0
import PackageDescription

/// One set of settings for every target: Swift 6 language mode, strict concurrency.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

/// Each service is an executable in `Services/<folder>`; its Redis Function libraries are `.lua` files compiled
/// into it.
func serviceTarget(_ name: String, folder: String, dependencies: [Target.Dependency], lua: [String] = []) -> Target {
    .executableTarget(name: name, dependencies: dependencies, path: "Services/\(folder)", exclude: ["README.md"],
                      resources: lua.map { .embedInCode("Lua/\($0).lua") }, swiftSettings: swiftSettings)
}

/// Lua sources compiled into a library target (`PackageResources.<name>_lua`).
func lua(_ names: String...) -> [Resource] {
    names.map { .embedInCode("Lua/\($0).lua") }
}

let package = Package(
    name: "Tollgate",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "ingest", targets: ["ingest"]),
        .executable(name: "verifier", targets: ["verifier"]),
        .executable(name: "fulfiller", targets: ["fulfiller"]),
        .executable(name: "tollctl", targets: ["tollctl"]),
        .executable(name: "appstore-sim", targets: ["appstore-sim"]),
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
    ],
    targets: [
        // Shared libraries
        .systemLibrary(
            name: "CHiredis",
            path: "Shared/CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        .target(
            name: "Core",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            path: "Shared/Core",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Redis",
            dependencies: [
                "CHiredis", "Core",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/Redis",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Pipeline",
            dependencies: [
                "Core", "Redis",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/Pipeline",
            resources: lua("common", "jobs", "pipeline", "ratelimit", "deadletter"),
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Operations",
            dependencies: [
                "Redis",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/Operations",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AppStore",
            dependencies: [
                "Core",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Shared/AppStore",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AppStoreTesting",
            dependencies: [
                "AppStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Shared/AppStoreTesting",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Verification",
            dependencies: [
                "Core", "Redis", "Pipeline", "AppStore", "Ledger", "Operations",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Shared/Verification",
            resources: lua("verifier", "reconcile"),
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Ledger",
            dependencies: ["Core", "Redis", "Pipeline"],
            path: "Shared/Ledger",
            resources: lua("ledger_records", "ledger_transactions", "ledger"),
            swiftSettings: swiftSettings
        ),

        // Services
        serviceTarget("ingest", folder: "Ingest", dependencies: [
            "Core", "Redis", "Pipeline", "Ledger", "AppStore", "Operations",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ], lua: ["ingest"]),
        serviceTarget("verifier", folder: "Verifier", dependencies: [
            "Core", "Pipeline", "Verification",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ]),
        serviceTarget("fulfiller", folder: "Fulfiller", dependencies: [
            "Core", "Redis", "Pipeline", "Ledger", "Operations",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ]),
        serviceTarget("tollctl", folder: "Tollctl", dependencies: [
            "Core", "AppStore", "Redis", "Pipeline", "Ledger", "Verification",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        serviceTarget("appstore-sim", folder: "AppstoreSim", dependencies: [
            "Core", "AppStore", "AppStoreTesting",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ]),

        // Tests
        .target(
            name: "TestSupport",
            dependencies: [
                "Redis", "Pipeline", "Ledger", "AppStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IngestTests",
            dependencies: [
                "ingest", "Core", "Pipeline", "Redis", "Ledger", "AppStore", "AppStoreTesting", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/IngestTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VerifierTests",
            dependencies: [
                "Core", "Verification", "Pipeline", "Redis", "AppStore", "AppStoreTesting", "Ledger", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/VerifierTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FulfillerTests",
            dependencies: [
                "fulfiller", "Core", "Pipeline", "Redis", "Ledger", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/FulfillerTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["Redis", "AppStore", "AppStoreTesting", "Ledger", "TestSupport",
                           .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "Logging", package: "swift-log")],
            path: "Tests/EndToEndTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FunctionLibraryTests",
            dependencies: ["ingest", "Pipeline", "Ledger", "Verification", "Redis", "TestSupport"],
            path: "Tests/FunctionLibraryTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoreTests",
            dependencies: [
                "Core", "Verification", "ingest", "fulfiller", "appstore-sim", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/CoreTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OperationsTests",
            dependencies: [
                "Operations", "Redis", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/OperationsTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerTests", dependencies: ["Ledger", "Pipeline", "Redis", "TestSupport"], path: "Tests/LedgerTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "TollctlTests", dependencies: ["Pipeline", "Redis", "TestSupport"], path: "Tests/TollctlTests",
            swiftSettings: swiftSettings),
        .testTarget(name: "RedisTests", dependencies: [
            "Redis", "TestSupport", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], path: "Tests/RedisTests", swiftSettings: swiftSettings),
        .testTarget(name: "PipelineTests", dependencies: [
            "Core", "Pipeline", "Redis", "TestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], path: "Tests/PipelineTests", swiftSettings: swiftSettings),
        .testTarget(
            name: "AppStoreTests",
            dependencies: [
                "AppStore", "AppStoreTesting", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/AppStoreTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppstoreSimTests",
            dependencies: [
                "appstore-sim", "AppStore", "AppStoreTesting", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/AppstoreSimTests",
            swiftSettings: swiftSettings
        ),
    ]
)
