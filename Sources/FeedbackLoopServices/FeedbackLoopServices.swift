// Module FeedbackLoopServices: being written (see the open issues).
