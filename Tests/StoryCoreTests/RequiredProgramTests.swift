import StoryTestSupport
import Testing

/// `.requires`: a test that needs a program says which and how to install it.
@Suite struct RequiredProgramTests {
    @Test func aMissingProgramIsNamedWithItsPackageAndAPresentOneIsNot() {
        #expect(RequiredProgram.isInstalled("sh") && RequiredProgram.isInstalled("/bin/sh"))
        #expect(!RequiredProgram.isInstalled("storyteller-no-such-program"))
        #expect(RequiredProgram.missing(["sh"]) == nil)
        let reason = RequiredProgram.missing(["sh", "storyteller-no-such-program"])
        #expect(reason == "needs storyteller-no-such-program, not installed here (Debian: apt install storyteller-no-such-program; .ci/run installs it)")
        // Two programs of one package: the package once.
        let poppler = RequiredProgram.missing(["/nonexistent/pdfinfo", "/nonexistent/pdftoppm"])
        #expect(poppler?.hasSuffix("(Debian: apt install poppler-utils; .ci/run installs it)") == true, "\(poppler ?? "")")
    }
}
