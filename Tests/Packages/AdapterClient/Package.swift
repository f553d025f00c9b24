// swift-tools-version:6.0
// An app outside coexist that links both adapters by their product names (a test fixture).

import PackageDescription

let package = Package(
    name: "AdapterClient",
    dependencies: [.package(name: "coexist", path: "../../..")],
    targets: [
        .executableTarget(
            name: "adapter-client",
            dependencies: [
                .product(name: "CoexistCoreData", package: "coexist"),
                .product(name: "CoexistData", package: "coexist"),
            ]
        ),
        // The complete programs of the two adapters' documentation articles, compiled as they are printed.
        .executableTarget(
            name: "coredata-example",
            dependencies: [.product(name: "CoexistCoreData", package: "coexist")]
        ),
        .executableTarget(
            name: "data-example",
            dependencies: [.product(name: "CoexistData", package: "coexist")]
        ),
    ]
)
