/// A movie in the list.
public struct Movie: Hashable, Sendable, Codable, Identifiable, CustomStringConvertible {
    public var id: Int
    public var title: String

    public init(id: Int, title: String) {
        self.id = id
        self.title = title
    }

    public var description: String { title }
}

/// One page of results from a paged API — the README's `Results<T>`.
public struct Results<Item: Hashable & Sendable & Codable>: Hashable, Sendable, Codable {
    /// The page number, from 1; 0 for ``empty``, before any page.
    public var page: Int
    /// The number of items over all pages.
    public var totalResults: Int
    public var totalPages: Int
    /// The items of this page.
    public var results: [Item]

    public init(page: Int, totalResults: Int, totalPages: Int, results: [Item]) {
        self.page = page
        self.totalResults = totalResults
        self.totalPages = totalPages
        self.results = results
    }

    /// No page yet.
    public static var empty: Results { Results(page: 0, totalResults: 0, totalPages: 0, results: []) }
}

/// A failed page request, as the state keeps it.
public typealias PagingError = FeatureError
