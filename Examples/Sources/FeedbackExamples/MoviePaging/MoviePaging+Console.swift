extension MoviePaging {
    /// The movie list for the command line: twelve movies, five a page, a fake API answering
    /// after `latency`. `scroll` feeds the near-bottom event source.
    public static func consoleScenario(latency: Duration = .milliseconds(30)) -> ConsoleScenario<MoviePaging> {
        let api = FakeMoviesAPI(totalMovies: 12, pageSize: 5, latency: latency)
        let (nearBottom, scroll) = AsyncStream.makeStream(of: Void.self)
        return ConsoleScenario(
            name: "paging",
            summary: "the paged movie list of the ReactiveFeedback README",
            environment: Environment(api: api, nearBottom: nearBottom),
            actions: [
                .init("scroll", "scroll near the bottom of the list (the near-bottom signal)"),
                .init("retry", "load the failed page again"),
                .init("fail", "make the API's next request fail"),
            ],
            script: [
                "scroll         # page 1",
                "scroll         # page 2",
                "fail",
                "scroll         # page 3 fails",
                "scroll         # ignored until the user retries",
                "retry          # page 3 again",
                "scroll         # the last page was loaded: ignored",
            ],
            settling: .untilQuiet(latency * 3, busy: \.isPaging),
            parse: { words throws(ConsoleInputError) in
                switch words[0] {
                case "scroll":
                    try ConsoleInputError.noArguments(words)
                    return .trigger("near the bottom") { scroll.yield() }
                case "retry":
                    try ConsoleInputError.noArguments(words)
                    return .send(.retry)
                case "fail":
                    try ConsoleInputError.noArguments(words)
                    return .configure("the next request will fail") { api.server.failNextCalls(1) }
                default:
                    throw .unknownAction(words)
                }
            },
            report: { before, after in
                let known = before?.context.movies.count ?? 0
                let new = after.context.movies.dropFirst(known)
                return new.isEmpty ? [] : ["+ " + new.map(\.title).joined(separator: ", ")]
            })
    }
}
