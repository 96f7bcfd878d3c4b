extension Pharmacies {
    /// The pharmacies screen for the command line: a returning user with two saved pharmacies, a
    /// fake service answering after `latency`, and a fake map offering
    /// ``FakePharmaciesService/sampleMapPlaces``. Prints each route and each new screen.
    public static func consoleScenario(latency: Duration = .milliseconds(30)) -> ConsoleScenario<Pharmacies> {
        let service = FakePharmaciesService(saved: FakePharmaciesService.sampleSaved, latency: latency)
        let places = FakePharmaciesService.sampleMapPlaces
        let mapList = places.enumerated().map { "\($0.offset + 1). \($0.element.name)" }.joined(separator: ", ")
        return ConsoleScenario(
            name: "pharmacies",
            summary: "the pharmacies list of 'Implementing features with ReactiveFeedback'",
            environment: Environment(service: service),
            actions: [
                .init("add", "open the map to add a pharmacy"),
                .init("pick <n>", "on the map: pick place n (\(mapList))"),
                .init("close", "on the map: close it without picking"),
                .init("delete <n>", "delete pharmacy n of the list"),
                .init("select <n>", "choose pharmacy n for delivery, closing the screen"),
                .init("directions <n>", "show directions to pharmacy n"),
                .init("retry", "load again after loading failed"),
                .init("cancel", "leave the screen without choosing"),
                .init("fail <fetch|add|delete>", "make the service's next such call fail (first line: the first load)"),
            ],
            script: [
                "fail fetch     # the first load will fail",
                "retry",
                "add",
                "pick 1         # already on the list: ignored",
                "add",
                "close",
                "fail add",
                "add",
                "pick 2         # saving fails: alert, back to the list",
                "add",
                "pick 2",
                "fail delete",
                "delete 1       # deleting fails: alert, the pharmacy stays",
                "directions 2   # no known location: stays on the list",
                "delete 2",
                "directions 1",
                "select 2       # closes the screen with Superdrug",
                "add            # the screen is gone: ignored",
            ],
            settling: .untilIdle,
            parse: { words throws(ConsoleInputError) in
                switch words[0] {
                case "add":
                    try ConsoleInputError.noArguments(words)
                    return .send(.ui(.addPharmacy))
                case "pick":
                    let number = try ConsoleInputError.number(in: words)
                    guard number <= places.count else {
                        throw ConsoleInputError("the map has places 1 to \(places.count): \(mapList)")
                    }
                    return .send(.didSelectPlace(.selected(places[number - 1])))
                case "close":
                    try ConsoleInputError.noArguments(words)
                    return .send(.didSelectPlace(.cancelled))
                case "delete":
                    return .send(.ui(.deletePharmacy(try ConsoleInputError.number(in: words) - 1)))
                case "select":
                    return .send(.ui(.select(try ConsoleInputError.number(in: words) - 1, .dismiss)))
                case "directions":
                    return .send(.ui(.select(try ConsoleInputError.number(in: words) - 1, .showDirections)))
                case "retry":
                    try ConsoleInputError.noArguments(words)
                    return .send(.ui(.retry))
                case "cancel":
                    try ConsoleInputError.noArguments(words)
                    return .send(.ui(.cancel))
                case "fail":
                    guard words.count == 2, let operation = FakePharmaciesService.Operation(rawValue: words[1]) else {
                        throw ConsoleInputError("'fail' needs one of: fetch, add, delete")
                    }
                    return .configure("the next \(operation) call will fail") { service.server.failNext(operation) }
                default:
                    throw .unknownAction(words)
                }
            },
            report: { before, after in
                var lines: [String] = []
                if let route = route(for: after) {
                    lines.append("→ route: \(route)")
                }
                let screen = render(after)
                if before.map(render) != screen {
                    lines += screen.text.split(separator: "\n").map(String.init)
                }
                return lines
            })
    }
}
