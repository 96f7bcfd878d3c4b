// Module FeedbackLoopTesting: being written (see the open issues).
