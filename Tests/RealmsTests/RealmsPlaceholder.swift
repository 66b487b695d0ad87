import Testing
@testable import Realms
