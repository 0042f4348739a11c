import Foundation
import Testing

@testable import StoryDaemon

/// A caller the control socket refuses is told the remedy that applies to
/// it: root is not served either; another user runs the command as the
/// daemon's user or joins a socket group; a group member not yet in it logs
/// in again after being added.
@Suite struct SocketRefusalTests {
    @Test func eachRefusedCallerIsToldWhatToDo() {
        let root = ControlMiddleware.refusal(of: 0, access: .owner)
        #expect(root.contains("root is not served either") && root.contains("sudo -u") && root.contains("socket group"), "\(root)")
        let other = ControlMiddleware.refusal(of: 54_321, access: .owner)
        #expect(other.contains("uid 54321") && !other.contains("root is not served"), "\(other)")
        let group = ControlMiddleware.refusal(of: 54_321, access: .group(name: "storyteller", id: 999))
        #expect(
            group.contains("members of the group storyteller") && group.contains("usermod -aG storyteller") && group.contains("log in again"),
            "\(group)")
    }
}
