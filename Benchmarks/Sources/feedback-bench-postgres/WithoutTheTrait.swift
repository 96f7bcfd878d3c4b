#if !Postgres
import Foundation

/// Built without the Benchmarks package's trait Postgres (so without postgres-nio): the command
/// says how to build the real one and fails as a usage error.
@main
enum FeedbackBenchPostgresWithoutTheTrait {
    static func main() {
        FileHandle.standardError.write(Data("""
            feedback-bench-postgres was built without the Benchmarks package's trait Postgres; from the \
            repository's root: swift run --package-path Benchmarks --traits Postgres -c release feedback-bench-postgres

            """.utf8))
        exit(64)
    }
}
#endif
