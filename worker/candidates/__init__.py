"""What happens to an algorithm's snapshots: scoring them (objective, violations), the
shrinking LP to a mixture of at most m + 1 members, and the best single candidate.
"""
