// swift-tools-version:6.0
// The coexist package: one SQLite file shared by a Core Data store and a new relational schema.

import PackageDescription

let strict: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
  name: "coexist",
  products: [
    .executable(name: "coexistd", targets: ["coexistd"]),
    .executable(name: "coexistctl", targets: ["coexistctl"]),
    // The two adapters apps link: Core Data-shaped over the legacy tables, SwiftData-shaped over the new schema.
    .library(name: "CoexistCoreData", targets: ["CoexistCoreData"]),
    .library(name: "CoexistData", targets: ["CoexistData"]),
  ],
  targets: [
    // C boundaries: a module map and a shim header each, nothing else.
    .systemLibrary(
      name: "CSQLite",
      pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"])]
    ),
    .systemLibrary(
      name: "CSystemd",
      pkgConfig: "libsystemd",
      providers: [.apt(["libsystemd-dev"])]
    ),
    .systemLibrary(
      name: "CZlib",
      pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"])]
    ),
    .systemLibrary(
      name: "CLibXML2",
      pkgConfig: "libxml-2.0",
      providers: [.apt(["libxml2-dev"])]
    ),
    .systemLibrary(
      name: "CNats",
      pkgConfig: "libnats",
      providers: [.apt(["libnats-dev"])]
    ),

    // Libraries, lowest first.
    .target(name: "CoexistSQLite", dependencies: ["CSQLite"], swiftSettings: strict),
    .target(name: "CoexistModel", dependencies: ["CZlib", "CLibXML2"], swiftSettings: strict),
    .target(
      name: "CoexistConfiguration",
      dependencies: ["CoexistModel", "CoexistSQLite", "CoexistRuntime"],
      swiftSettings: strict
    ),
    .target(
      name: "CoexistHistory", dependencies: ["CoexistSQLite", "CoexistModel"], swiftSettings: strict
    ),
    // A save's bookkeeping and atomicity, shared by the two schemas' saves.
    .target(
      name: "CoexistSaving",
      dependencies: ["CoexistSQLite", "CoexistModel", "CoexistHistory"],
      swiftSettings: strict
    ),
    .target(
      name: "CoexistLegacyStore",
      dependencies: ["CoexistSQLite", "CoexistModel", "CoexistHistory", "CoexistSaving"],
      swiftSettings: strict
    ),
    .target(
      name: "CoexistStore",
      dependencies: ["CoexistSQLite", "CoexistModel", "CoexistHistory", "CoexistSaving"],
      swiftSettings: strict
    ),
    // Following a file's commits (the file itself, or coexistd's socket), for both adapters.
    // The event socket's protocol, one definition for the server and every client: requests, messages, JSON.
    .target(name: "CoexistProtocol", swiftSettings: strict),
    .target(
      name: "CoexistLive",
      dependencies: ["CoexistSQLite", "CoexistRuntime", "CoexistProtocol"],
      swiftSettings: strict
    ),
    .target(
      name: "CoexistData",
      dependencies: [
        "CoexistStore", "CoexistSQLite", "CoexistModel", "CoexistHistory", "CoexistLive",
      ],
      swiftSettings: strict
    ),
    // The demo model's record types on the new side: for the demo, the benchmark and the tests.
    .target(name: "CoexistDemo", dependencies: ["CoexistData"], swiftSettings: strict),
    .target(
      name: "CoexistCoreData",
      dependencies: [
        "CoexistLegacyStore", "CoexistHistory", "CoexistModel", "CoexistSQLite", "CoexistLive",
      ],
      swiftSettings: strict
    ),
    .target(
      name: "CoexistBridge",
      dependencies: [
        "CoexistConfiguration", "CoexistLegacyStore", "CoexistStore", "CoexistHistory",
        "CoexistModel", "CoexistSQLite",
      ],
      swiftSettings: strict
    ),
    .target(
      name: "CoexistMigration",
      dependencies: [
        "CoexistLegacyStore", "CoexistStore", "CoexistHistory", "CoexistModel", "CoexistSQLite",
      ],
      swiftSettings: strict
    ),
    .target(
      name: "CoexistEvents",
      dependencies: [
        "CoexistConfiguration", "CoexistBridge", "CoexistRuntime", "CoexistHistory",
        "CoexistLegacyStore", "CoexistStore", "CoexistModel",
        "CoexistSQLite", "CoexistProtocol",
      ],
      swiftSettings: strict
    ),
    .target(name: "CoexistRuntime", dependencies: ["CSystemd"], swiftSettings: strict),
    // The JetStream publisher's client (libnats): streams, publishes acknowledged with a message id.
    .target(name: "CoexistPublish", dependencies: ["CNats"], swiftSettings: strict),
    .target(
      name: "CoexistReporting",
      dependencies: [
        "CoexistConfiguration", "CoexistBridge", "CoexistLegacyStore", "CoexistStore",
        "CoexistModel", "CoexistSQLite", "CoexistRuntime", "CoexistMigration", "CoexistPublish",
      ],
      swiftSettings: strict
    ),
    .target(
      name: "CoexistDaemon",
      dependencies: [
        "CoexistConfiguration", "CoexistEvents", "CoexistBridge", "CoexistRuntime", "CoexistStore",
        "CoexistLegacyStore", "CoexistHistory", "CoexistModel", "CoexistMigration",
        "CoexistSQLite", "CoexistReporting", "CoexistPublish",
      ],
      swiftSettings: strict
    ),

    // Thin executables.
    .executableTarget(
      name: "coexistd",
      dependencies: [
        "CoexistDaemon", "CoexistConfiguration", "CoexistReporting", "CoexistRuntime",
      ],
      swiftSettings: strict
    ),
    .executableTarget(
      name: "coexistctl",
      dependencies: [
        "CoexistCoreData", "CoexistData", "CoexistDemo",
        "CoexistLegacyStore", "CoexistStore", "CoexistHistory", "CoexistModel", "CoexistRuntime",
        "CoexistBridge", "CoexistMigration", "CoexistProtocol",
        "CoexistConfiguration", "CoexistEvents", "CoexistReporting", "CoexistSQLite", "CoexistPublish",
      ],
      swiftSettings: strict
    ),

    // Tests mirror the libraries; TestSupport holds the shared helpers.
    .target(
      name: "TestSupport",
      dependencies: [
        "CoexistSQLite", "CoexistModel", "CoexistHistory", "CoexistLegacyStore", "CoexistStore",
        "CoexistBridge",
      ],
      path: "Tests/TestSupport",
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistSQLiteTests",
      dependencies: ["CoexistSQLite", "TestSupport"],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistSavingTests",
      dependencies: ["CoexistSaving", "CoexistSQLite", "CoexistModel", "TestSupport"],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistModelTests",
      dependencies: ["CoexistModel", "TestSupport"],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistLegacyStoreTests",
      dependencies: [
        "CoexistLegacyStore", "CoexistHistory", "CoexistModel", "CoexistSQLite", "TestSupport",
      ],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistStoreTests",
      dependencies: [
        "CoexistStore", "CoexistLegacyStore", "CoexistHistory", "CoexistModel", "CoexistSQLite",
        "TestSupport",
      ],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistDataTests",
      dependencies: [
        "CoexistData", "CoexistDemo", "CoexistStore", "CoexistHistory", "CoexistLegacyStore",
        "CoexistModel",
        "CoexistMigration",
        "CoexistSQLite",
        "TestSupport",
      ],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistPublishTests",
      dependencies: ["CoexistPublish", "TestSupport"],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistLiveTests",
      dependencies: ["CoexistLive", "TestSupport"],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistCoreDataTests",
      dependencies: ["CoexistCoreData", "CoexistLegacyStore", "CoexistSQLite", "TestSupport"],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistBridgeTests",
      dependencies: [
        "CoexistConfiguration", "CoexistBridge", "CoexistStore", "CoexistHistory",
        "CoexistLegacyStore", "CoexistModel", "CoexistSQLite",
        "TestSupport",
      ],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistMigrationTests",
      dependencies: [
        "CoexistMigration", "CoexistBridge", "CoexistConfiguration", "CoexistStore",
        "CoexistHistory", "CoexistLegacyStore",
        "CoexistModel", "CoexistSQLite", "TestSupport",
      ],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistEventsTests",
      dependencies: [
        "CoexistEvents", "CoexistHistory", "CoexistBridge", "CoexistLegacyStore", "CoexistModel", "CoexistSQLite",
        "TestSupport",
      ],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistProtocolTests",
      dependencies: ["CoexistProtocol"],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistConfigurationTests",
      dependencies: ["CoexistConfiguration", "CoexistRuntime", "TestSupport"],
      swiftSettings: strict
    ),
    .testTarget(
      name: "CoexistRuntimeTests",
      dependencies: ["CoexistRuntime", "TestSupport"],
      swiftSettings: strict
    ),
    .executableTarget(
      name: "coexist-bench",
      dependencies: [
        "CoexistLegacyStore", "CoexistStore", "CoexistHistory", "CoexistSQLite", "CoexistModel",
        "CoexistRuntime", "CoexistCoreData", "CoexistData", "CoexistDemo", "CoexistProtocol", "CoexistPublish",
        "coexistd", "coexistctl", "coexist-test-helper",
      ],
      swiftSettings: strict
    ),
    .executableTarget(
      name: "coexist-fuzz",
      dependencies: [
        "CoexistEvents", "CoexistConfiguration", "CoexistModel", "CoexistRuntime", "CoexistBridge",
        "CoexistLegacyStore", "CoexistProtocol",
        "CoexistStore", "CoexistHistory", "CoexistSQLite",
      ],
      swiftSettings: strict
    ),
    .executableTarget(
      name: "coexist-data-peer",
      dependencies: ["CoexistData", "CoexistDemo"],
      path: "Tests/CoexistDataPeer",
      swiftSettings: strict
    ),
    .executableTarget(
      name: "coexist-test-helper",
      dependencies: [
        "CoexistLegacyStore", "CoexistStore", "CoexistHistory", "CoexistSQLite", "CoexistRuntime",
      ],
      path: "Tests/CoexistTestHelper",
      swiftSettings: strict
    ),
    .testTarget(
      name: "EndToEndTests",
      dependencies: [
        "TestSupport", "CoexistRuntime", "CoexistSQLite", "CoexistHistory", "CoexistLegacyStore", "CoexistStore",
        "CoexistConfiguration", "CoexistCoreData",
        "CoexistDaemon", "CoexistPublish",
        "coexistctl", "coexistd",
        "coexist-test-helper", "coexist-bench", "coexist-fuzz", "coexist-data-peer",
      ],
      exclude: ["Python"],
      swiftSettings: strict
    ),
  ]
)
