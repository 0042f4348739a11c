import Foundation
import StoryClient
import StoryCore
import StoryRender
import StoryTestSupport
import Testing

@testable import StoryDaemon

/// `storyteller export pdf` and `export images` against a real daemon, and
/// the routes behind them; the files checked with poppler and cairo's PNG reader.
@Suite(.daemons, .timeLimit(.minutes(15)), .serialized) struct ExportDaemonTests {
    /// "Night Train": scene 1 "Departure" with 3 shots (the first with a thick diagonal, captions,
    /// durations), scene 2 with 2 shots (one with dialogue). Its id and the scenes' ids.
    static func project(_ client: ControlClient) throws -> (project: String, scenes: [String]) {
        let project = try #require(
            (try client.post("/v1/projects", json: #"{"name":"Night Train"}"#).json as? [String: Any])?["id"] as? String
        )
        let edit = try client.post(
            "/v1/projects/\(project)/edits",
            json: #"""
                {"ops":[
                {"op":"scene.add","title":"Departure"},
                {"op":"shot.add","scene":"$0"},
                {"op":"set","object":"$1","field":"caption","value":"The train pulls in"},
                {"op":"set","object":"$1","field":"duration","value":3},
                {"op":"layer.add","shot":"$1","name":"ink"},
                {"op":"stroke.add","layer":"$4","points":[0.1,0.1,1,0.9,0.9,1],"brush":{"width":0.04}},
                {"op":"shot.add","scene":"$0"},
                {"op":"set","object":"$6","field":"caption","value":"Anna looks up"},
                {"op":"shot.add","scene":"$0"},
                {"op":"set","object":"$8","field":"caption","value":"The conductor whistles"},
                {"op":"scene.add","title":"Night"},
                {"op":"shot.add","scene":"$10"},
                {"op":"set","object":"$11","field":"dialogue","value":"Mind the gap."},
                {"op":"shot.add","scene":"$10"}
                ]}
                """#)
        let created = try #require((edit.json as? [String: Any])?["created"] as? [Any])
        return (project, [try #require(created[0] as? String), try #require(created[10] as? String)])
    }

    @Test(.requires("pdfinfo", "pdftotext")) func printSheetsFromTheCommandLineAndTheAPI() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let client = started.client
        let (project, scenes) = try Self.project(client)
        let socket = started.socket
        let home = started.home.path
        let c = ["LANG": "C.UTF-8", "LC_ALL": "", "LC_PAPER": ""]

        // Defaults: A4 landscape, 6 a page: 5 shots on 1 page.
        let pdf = home + "/boards.pdf"
        let made = try await storyteller(["export", "pdf", "Night Train", "--out", pdf, "--socket", socket], environment: c)
        #expect(made.status == 0, "\(made.errors)")
        #expect(made.output.contains("wrote \(pdf) (1 page, "), "\(made.output)")
        let info = try await ExternalProgram.run("pdfinfo", [pdf]).output
        #expect(info.contains(/Pages:\s+1\n/) && info.contains(/Page size:\s+841.89 x 595.276 pts \(A4\)/), "\(info)")
        let text = try await ExternalProgram.run("pdftotext", ["-layout", pdf, "-"]).output
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        #expect(text.contains(formatter.string(from: Date())), "today's date in the header: \(text)")
        for words in [
            "Night Train", "page 1 of 1", "Scenes 1–2", "5 shots", "1-1", "2-2", "The train pulls in",
            "Dialogue: Mind the gap.", "3 s",
        ] {
            #expect(text.contains(words), "'\(words)' in: \(text)")
        }

        // One scene on Letter portrait, 1 a page; a Letter locale's default paper; --json.
        let letter = try await storyteller(
            [
                "export", "pdf", "Night Train", "--scene", "2", "--orientation", "portrait", "--per-page", "1", "--out",
                pdf, "--json", "--socket", socket,
            ],
            environment: ["LC_PAPER": "en_US.UTF-8", "LC_ALL": ""])
        #expect(letter.status == 0, "\(letter.errors)")
        let said = try #require(try JSONSerialization.jsonObject(with: Data(letter.output.utf8)) as? [String: Any])
        #expect(
            said["pages"] as? Int == 2 && said["out"] as? String == pdf && (said["bytes"] as? Int ?? 0) > 1000,
            "\(said)")
        let letterInfo = try await ExternalProgram.run("pdfinfo", [pdf]).output
        #expect(
            letterInfo.contains(/Pages:\s+2\n/) && letterInfo.contains(/Page size:\s+612 x 792 pts \(letter\)/),
            "\(letterInfo)")
        let sceneText = try await ExternalProgram.run("pdftotext", [pdf, "-"]).output
        #expect(sceneText.contains("Scene 2: Night") && !sceneText.contains("The train pulls in"), "\(sceneText)")

        // Mistakes are said in the command line's words, before the daemon is asked.
        for (arguments, words) in [
            (["--paper", "B5"], "--paper must be one of A4, A3, Letter, Legal or Tabloid, not 'B5'"),
            (["--per-page", "0"], "--per-page must be one of 1, 2, 3, 4, 6, 8, 9 or 12"),
            (["--grid", "2by3"], "--grid must be ROWSxCOLUMNS"),
            (["--grid", "9x1"], "--grid must be ROWSxCOLUMNS with 1 to 8"),
            (["--pages", "5-2"], "--pages must be FROM-TO with 1 ≤ FROM ≤ TO"),
            (["--fields", "label,colour"], "'colour' is not one of them"),
            (["--text", "above"], "--text must be below or beside"),
        ] {
            let refused = try await storyteller(
                ["export", "pdf", "Night Train", "--out", pdf, "--socket", socket] + arguments, environment: c)
            #expect(refused.status == 64 && refused.errors.contains(words), "\(arguments): \(refused.errors)")
        }
        let noDirectory = try await storyteller([
            "export", "pdf", "Night Train", "--out", home + "/missing/boards.pdf", "--socket", socket,
        ])
        #expect(
            noDirectory.status == 64 && noDirectory.errors.contains("does not exist: \(home)/missing"),
            "\(noDirectory.errors)")
        let unknown = try await storyteller(["export", "pdf", "Day Train", "--out", pdf, "--socket", socket])
        #expect(unknown.status != 0 && unknown.errors.contains("Day Train"), "\(unknown.errors)")
        let beyond = try await storyteller(
            ["export", "pdf", "Night Train", "--pages", "3-4", "--out", pdf, "--socket", socket], environment: c)
        #expect(beyond.status == 1 && beyond.errors.contains("the sheet has 1 page"), "\(beyond.errors)")
        #expect(
            try await ExternalProgram.run("pdfinfo", [pdf]).output.contains(/Pages:\s+2\n/),
            "a refused export leaves --out as it was")

        // The route: a PDF named after the project, its page count; typed errors for bad input.
        let answer = try client.get("/v1/projects/\(project)/exports/pdf?paper=a3&grid=1x2&scene=\(scenes[0])")
        #expect(
            answer.status == 200 && answer.headers["content-type"] == "application/pdf",
            "\(answer.status) \(answer.headers)")
        #expect(
            answer.headers["content-disposition"]?.contains(#"filename="Night-Train.pdf""#) == true, "\(answer.headers)"
        )
        #expect(answer.headers["storyteller-page-count"] == "2" && answer.body.starts(with: Data("%PDF-".utf8)))
        for (query, status, words) in [
            ("paper=B5", 400, "paper must be one of A4"), ("per-page=0", 400, "per-page must be one of"),
            ("grid=0x3", 400, "grid must be ROWSxCOLUMNS"), ("pages=0-2", 400, "pages must be FROM-TO"),
            ("per-page=4&grid=2x2", 400, "not both"), ("pages=7", 400, "the sheet has 1 page"),
            ("scene=banana", 400, "not a scene id"), ("scene=99@00000000000000aa", 404, "no visible scene"),
        ] {
            let refused = try client.get("/v1/projects/\(project)/exports/pdf?\(query)")
            #expect(
                refused.status == status && (refused.errorMessage ?? "").contains(words),
                "\(query): \(refused.status) \(refused.errorMessage ?? "")")
            #expect(refused.errorCode == (status == 400 ? "bad_request" : "not_found"))
        }
        let noProject = try client.get("/v1/projects/0123456789abcdef0123456789abcdef/exports/pdf")
        #expect(noProject.status == 404 && noProject.errorCode == "not_found", "\(noProject.status)")
        #expect(try await started.daemon.terminate() == 0)
    }

    @Test func imagesAreAPNGPerShotInOrderAndAContactSheet() async throws {
        let started = try await StartedDaemon.start()
        defer { started.stop() }
        let (project, _) = try Self.project(started.client)
        let out = started.home.path + "/boards"
        let made = try await storyteller([
            "export", "images", project, "--out", out, "--width", "320", "--json", "--socket", started.socket,
        ])
        #expect(made.status == 0, "\(made.errors)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(
            files == ["01-01.png", "01-02.png", "01-03.png", "02-01.png", "02-02.png", "contact-sheet.png"], "\(files)")
        let said = try #require(try JSONSerialization.jsonObject(with: Data(made.output.utf8)) as? [String: Any])
        #expect(
            (said["shots"] as? [String])?.count == 5 && said["contactSheet"] as? String == out + "/contact-sheet.png")
        // The diagonal crosses the first shot's middle; its corner and the second shot are bare.
        let first = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: out + "/01-01.png"))))
        #expect(first.width == 320 && first.height == 180)
        #expect(first.pixel(atFraction: 0.5, 0.5).isDark, "\(first.pixel(atFraction: 0.5, 0.5))")
        #expect(first.pixel(atFraction: 0.85, 0.15).isWhite, "\(first.pixel(atFraction: 0.85, 0.15))")
        let second = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: out + "/01-02.png"))))
        #expect(second.pixel(atFraction: 0.5, 0.5).isWhite)
        let sheet = try RasterImage(png: Array(try Data(contentsOf: URL(fileURLWithPath: out + "/contact-sheet.png"))))
        #expect(sheet.width == 1600 && sheet.height > 300, "\(sheet.width)×\(sheet.height)")
        // The first panel is top left: 24 px margin, a 62 px title band, 5 panels of 294.4 px across.
        #expect(
            sheet[24 + 147, 86 + 83].isDark,
            "the diagonal in the contact sheet's first panel: \(sheet[24 + 147, 86 + 83])")
        #expect(sheet[24 + 294 + 16 + 147, 86 + 83].isWhite, "the second panel is bare")

        let bad = try await storyteller([
            "export", "images", project, "--out", started.home.path + "/missing/deeper", "--socket", started.socket,
        ])
        #expect(bad.status == 64 && bad.errors.contains("does not exist"), "\(bad.errors)")
        let narrow = try started.client.get("/v1/projects/\(project)/exports/contact-sheet?width=100")
        #expect(
            narrow.status == 400
                && (narrow.errorMessage ?? "").contains("width must be a whole number from 320 to 4096"))
        #expect(try await started.daemon.terminate() == 0)
    }

    @Test func atMostFourSheetsAreSentAtOnceAndAFinishedOneFreesItsPlace() async throws {
        let renderer = PanelRenderService()
        let view = ProjectDocument(id: DocumentID(high: 1, low: 2), replica: ReplicaID(1)).view
        let layout = PrintSheetLayout(pageWidth: 595.276, pageHeight: 841.89, rows: 3, columns: 2)
        func open() async throws -> Int? {
            try await renderer.openSheet(
                scenes: view.scenes, of: view, title: "Busy", date: "", layout: layout, pictureFiles: [:])?.sheet
        }
        var sheets: [Int] = []
        for _ in 0..<PanelRenderService.maximumOpenSheets { sheets.append(try #require(try await open())) }
        #expect(try await open() == nil, "a fifth is refused while four are open")
        var bytes = 0
        while let chunk = try await renderer.nextChunk(ofSheet: sheets[0]) { bytes += chunk.count }
        #expect(bytes > 0)
        let again = try #require(try await open(), "a finished sheet frees its place")
        await renderer.closeSheet(sheets[1])
        #expect(try await open() != nil, "so does an abandoned one")
        #expect(try await renderer.nextChunk(ofSheet: sheets[1]) == nil, "an abandoned sheet is forgotten")
        #expect(again != sheets[0])
    }
}
