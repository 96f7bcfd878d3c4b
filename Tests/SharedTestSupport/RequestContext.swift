import Instrumentation

/// A request id, the kind of value a server keeps in its `ServiceContext`: what the tests of
/// context propagation (core, services, durable, PostgreSQL) send with and read back.
private enum RequestID: ServiceContextKey {
    typealias Value = String
}

extension ServiceContext {
    /// A top-level context holding request `id`.
    public static func request(_ id: String) -> ServiceContext {
        var context = ServiceContext.topLevel
        context[RequestID.self] = id
        return context
    }

    /// The request the code that reads it runs for, "none" outside any.
    public static var currentRequest: String {
        current?.requestID ?? "none"
    }

    /// The request id this context holds, if any: what an instrument injects and extracts.
    public var requestID: String? {
        get { self[RequestID.self] }
        set { self[RequestID.self] = newValue }
    }
}
