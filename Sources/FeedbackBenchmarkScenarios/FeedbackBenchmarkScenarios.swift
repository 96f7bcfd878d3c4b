// Module FeedbackBenchmarkScenarios: being written (see the open issues).
