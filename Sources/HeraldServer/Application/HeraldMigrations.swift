import Grants
import HeraldApple
import HeraldGoogle
import Login
import Realms
import Storage
import TokenIssuer

/// Every module's migrations, in dependency order (a module's tables may reference the
/// tables of modules listed before it).
enum HeraldMigrations {
    static var all: [Migration] {
        RealmsSchema.migrations + TokenIssuerSchema.migrations + AppleReplayStore.migrations
            + GoogleReplayStore.migrations            + LoginAttemptLimiter.migrations
            + GrantsSchema.migrations + RequestRateLimiter.migrations + AppleNotificationProcessor.migrations
            + AppleTokenVault.migrations + AppleWebStates.migrations
            + GoogleWebLogin.migrations + LoginCounts.migrations
    }
}
