"""What every runner shares: the options it takes, the chunked loop and its phases, the
stopping rules, the automatic step and penalty rules, the kernel arrays, and what the exact and
quasi-Newton methods return (:mod:`.one_answer`)."""
