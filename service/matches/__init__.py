"""Turn-based matches: use-cases, the push hub, and the sweeper that runs timers and bots."""
