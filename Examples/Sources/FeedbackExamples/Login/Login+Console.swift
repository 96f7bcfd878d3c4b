extension Login {
    /// The login screen for the command line: one account, ada / lovelace, and a fake service
    /// answering after `latency`.
    public static func consoleScenario(latency: Duration = .milliseconds(50)) -> ConsoleScenario<Login> {
        let service = FakeLoginService(accounts: ["ada": "lovelace"], latency: latency)
        return ConsoleScenario(
            name: "login",
            summary: "the login screen of 'Managing state in reactive applications', as a loop (account: ada / lovelace)",
            environment: Environment(service: service),
            actions: [
                .init("username <text>", "type the username"),
                .init("password <text>", "type the password"),
                .init("clear <username|password>", "empty a field"),
                .init("login", "tap Sign In (ignored while the button is disabled)"),
                .init("fail", "make the service's next login fail"),
            ],
            script: [
                "username ada",
                "login                        # no password: the button is disabled",
                "password wrong",
                "login                        # Unauthorized",
                "password lovelace",
                "login; password lovelac      # editing abandons the login in flight",
                "password lovelace; login     # a new attempt",
                "fail",
                "login",
            ],
            settling: .untilIdle,
            parse: { words throws(ConsoleInputError) in
                switch words[0] {
                case "username":
                    return .send(.usernameChanged(try ConsoleInputError.text(in: words)))
                case "password":
                    return .send(.passwordChanged(try ConsoleInputError.text(in: words)))
                case "clear" where words.count == 2 && words[1] == "username":
                    return .send(.usernameChanged(""))
                case "clear" where words.count == 2 && words[1] == "password":
                    return .send(.passwordChanged(""))
                case "clear":
                    throw ConsoleInputError("'clear' needs 'username' or 'password'")
                case "login":
                    try ConsoleInputError.noArguments(words)
                    return .send(.loginTapped)
                case "fail":
                    try ConsoleInputError.noArguments(words)
                    return .configure("the next login will fail") { service.server.failNextCalls(1) }
                default:
                    throw .unknownAction(words)
                }
            })
    }
}
