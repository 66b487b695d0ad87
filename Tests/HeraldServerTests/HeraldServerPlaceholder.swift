import Testing
@testable import HeraldServer
