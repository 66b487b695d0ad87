import Testing
@testable import HeraldApple
