// Module FeedbackExamples: being written (see the open issues).
