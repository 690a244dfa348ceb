"""What every game shares: the match protocol and the seeded generator."""
