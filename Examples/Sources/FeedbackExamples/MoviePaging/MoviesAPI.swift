/// A paged list of movies, like the README's `URLSession.fetchMovies(page:)`.
///
/// Cancelled through task cancellation when the loop no longer wants the page.
public protocol MoviesAPI: Sendable {
    /// The page `page` (from 1) of the list.
    func movies(page: Int) async throws -> Results<Movie>
}

/// A ``MoviesAPI`` serving a fixed catalogue, with simulated latency and injected failures.
public final class FakeMoviesAPI: MoviesAPI {
    /// The one call this API answers, keyed by page so a test can fail a given page.
    public enum Operation: Hashable, Sendable, CustomStringConvertible {
        case page(Int)

        public var description: String {
            switch self {
            case .page(let page): "page \(page)"
            }
        }
    }

    /// Latency, injected failures and the record of calls.
    public let server: FakeServer<Operation>
    private let catalogue: [Movie]
    private let pageSize: Int

    /// An API with `totalMovies` movies served `pageSize` at a time, answering after `latency`
    /// on `clock`, failing the first `failing[.page(n)]` requests of page `n`.
    public init(
        totalMovies: Int = 12,
        pageSize: Int = 5,
        latency: Duration = .zero,
        clock: any Clock<Duration> = ContinuousClock(),
        failing: [Operation: Int] = [:]
    ) {
        precondition(pageSize > 0, "a page holds at least one movie")
        self.catalogue = (0..<max(0, totalMovies)).map { Movie(id: $0 + 1, title: Self.title($0 + 1)) }
        self.pageSize = pageSize
        self.server = FakeServer(latency: latency, clock: clock, failing: failing)
    }

    /// The number of pages of the catalogue.
    public var totalPages: Int { (catalogue.count + pageSize - 1) / pageSize }

    public func movies(page: Int) async throws -> Results<Movie> {
        try await server.perform(.page(page)) {
            let start = min(max(0, (page - 1) * pageSize), catalogue.count)
            let end = min(start + pageSize, catalogue.count)
            return Results(
                page: page, totalResults: catalogue.count, totalPages: totalPages,
                results: Array(catalogue[start..<end]))
        }
    }

    private static let titles = [
        "Alien", "Brazil", "Casablanca", "Dune", "Eraserhead", "Fargo", "Gattaca", "Heat", "Ikiru",
        "Jaws", "Kes", "Laura", "Metropolis", "Nosferatu", "Oldboy", "Psycho", "Rashomon", "Solaris",
    ]

    private static func title(_ id: Int) -> String {
        let base = titles[(id - 1) % titles.count]
        let round = (id - 1) / titles.count
        return round == 0 ? base : "\(base) \(round + 1)"
    }
}
