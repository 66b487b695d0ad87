import Testing
@testable import JOSE
