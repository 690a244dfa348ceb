"""Turn-based matches: the requests' use-cases, a match's progress inside one transaction, and
the sweeper that runs turn timers and bots."""
