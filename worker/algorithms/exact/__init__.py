"""The exact methods: a compiled problem (:mod:`.conic_form`) or a robust ``max_of`` of a linear
model (:mod:`.robust_form`) as one conic program, solved by Clarabel (:mod:`.exact`,
:mod:`.exact_robust`)."""
