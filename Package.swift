// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Herald",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "herald", targets: ["herald"]),
    ],
    targets: [
        // C libraries from Debian, one system-library target each (module.modulemap + shim.h).
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CPostgres", path: "Sources/CPostgres", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),

        // Layers, bottom to top (ARCHITECTURE.md): dependencies point one way.
        .target(name: "JOSE", dependencies: ["COpenSSL"]),
        .target(name: "Storage", dependencies: ["CSQLite", "CPostgres"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        .target(name: "Realms", dependencies: ["Storage", "JOSE"]),
        .target(name: "TokenIssuer", dependencies: ["JOSE", "Storage", "Realms"]),
        .target(name: "Grants", dependencies: ["JOSE", "Storage", "Realms"]),
        // What every identity-token login shares (IdentityToken/: limits, replay, accounts, branch A / B) and the
        // token endpoint's code exchange (CodeExchange/).
        .target(name: "Login", dependencies: ["JOSE", "Storage", "Realms", "TokenIssuer", "Grants"]),
        // Fetching and caching a provider's JWKS (Apple's, Google's): client, cache, Cache-Control, metrics.
        .target(name: "ProviderKeys", dependencies: ["JOSE"]),
        .target(name: "HeraldApple", dependencies: ["JOSE", "Storage", "Realms", "Grants", "Login", "ProviderKeys"]),
        // Google sign-in: its verifier for the Login pipeline, over ProviderKeys' JWKS cache, and its replay store.
        .target(name: "HeraldGoogle", dependencies: ["JOSE", "Storage", "Realms", "Login", "ProviderKeys"]),
        .target(name: "HeraldServer", dependencies: [
            "HTTPServer", "Storage", "JOSE", "Realms", "TokenIssuer", "Grants", "Login", "HeraldApple", "HeraldGoogle",
            "ProviderKeys",
        ]),
        .executableTarget(name: "herald", dependencies: [
            "HeraldServer", "HeraldApple", "HeraldGoogle", "ProviderKeys", "Realms", "Storage",
        ]),

        // Shared test support: fake Apple (keys, JWKS server, token minting), server launcher.
        .target(name: "HeraldTestSupport", dependencies: ["JOSE", "HTTPServer", "Storage"], path: "Tests/Support"),

        .testTarget(name: "HeraldTestSupportTests", dependencies: ["HeraldTestSupport"]),
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "HeraldTestSupport"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "HeraldTestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        .testTarget(name: "RealmsTests", dependencies: ["Realms", "Storage", "JOSE", "HeraldTestSupport"]),
        .testTarget(name: "TokenIssuerTests", dependencies: ["TokenIssuer", "Realms", "Storage", "JOSE", "HeraldTestSupport"]),
        .testTarget(name: "GrantsTests", dependencies: ["Grants", "HeraldTestSupport", "Realms", "Storage"]),
        .testTarget(name: "HeraldAppleTests", dependencies: ["HeraldApple", "HeraldTestSupport", "JOSE", "ProviderKeys", "Storage"]),
        .testTarget(name: "HeraldGoogleTests", dependencies: [
            "HeraldGoogle", "HeraldTestSupport", "JOSE", "Storage", "Login", "ProviderKeys", "Realms", "TokenIssuer", "Grants",
        ]),
        .testTarget(name: "LoginTests", dependencies: [
            "Login", "Realms", "HeraldTestSupport", "Storage", "TokenIssuer", "Grants", "JOSE",
        ]),
        // The command line's own logic (argument parsing, help), in-process; the binary is HeraldServerTests'.
        .testTarget(name: "heraldTests", dependencies: ["herald", "HeraldTestSupport"]),
        .testTarget(name: "HeraldServerTests", dependencies: [
            "HeraldServer", "HeraldTestSupport", "HTTPServer", "JOSE", "Storage", "Realms", "TokenIssuer", "Grants", "Login",
        ]),
    ],
    swiftLanguageModes: [.v6]
)
