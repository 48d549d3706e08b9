"""Problem generators and shipped data sets for tests, benchmarks and examples: the
LightTouch paper's lattice ranking problem (:mod:`.lattice`) and UCI Adult (:mod:`.adult`)."""
