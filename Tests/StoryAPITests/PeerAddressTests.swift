import StoryAPI
import Testing

/// `API.PeerAddress`: the one check of a peer address, for the CLI, the API and the config file.
@Suite struct PeerAddressTests {
    @Test(arguments: [
        ("studio-mac.local:7460", "studio-mac.local", 7460),
        ("Studio-Mac.local.:7460", "Studio-Mac.local.", 7460),
        ("localhost:1", "localhost", 1),
        ("192.168.1.20:65535", "192.168.1.20", 65_535),
        ("[fd00::12]:7460", "fd00::12", 7460),
        ("[fe80::1%eth0]:7460", "fe80::1%eth0", 7460),
        ("edit_suite:7460", "edit_suite", 7460),
    ])
    func hostNamesAndIPAddressesWithAPortAreTaken(_ text: String, _ host: String, _ port: Int) throws {
        let address = try API.PeerAddress(text)
        #expect(address.host == host && address.port == port)
        #expect(address.description == text)
    }

    @Test(arguments: [
        ("", "HOST:PORT"),
        ("studio-mac.local", "'studio-mac.local' has no port: write HOST:PORT, e.g. studio-mac.local:7460"),
        ("studio-mac.local:", "has no port"),
        (":7460", "has no host"),
        ("fe80::1", "in brackets"),
        ("[fe80::1]", "has no port"),
        ("[fe80::1:7460", "no closing ']'"),
        ("[host.local]:7460", "not an IPv6 address"),
        ("[fe80::1%]:7460", "not an IPv6 address"),
        ("studio-mac.local:0", "a number from 1 to 65535, not '0'"),
        ("studio-mac.local:http", "not 'http'"),
        ("256.1.1.1:7460", "not an IPv4 address"),
        ("-studio:7460", "not a host name"),
        ("studio..local:7460", "not a host name"),
        ("stüdio.local:7460", "not a host name"),
        ("a:1,b:2", "not one address"),
        ("http://studio-mac.local:7460", "without 'http://', e.g. studio-mac.local:7460"),
    ])
    func anythingElseIsRefusedSayingWhatIsWrong(_ text: String, _ words: String) {
        do {
            let address = try API.PeerAddress(text)
            Issue.record("'\(text)' was taken as \(address)")
        } catch {
            #expect(error.error.code == .badRequest)
            #expect(error.error.message.contains(words), "\(error.error.message)")
        }
    }

    @Test func aListKeepsItsOrderDropsRepeatsAndIsBounded() throws {
        #expect(try API.PeerAddress.list(["b:1", "a:2", "b:1"]) == ["b:1", "a:2"])
        #expect(try API.PeerAddress.list([]) == [])
        #expect(throws: APIError.self) { try API.PeerAddress.list((1...17).map { "h\($0):7460" }) }
    }
}
